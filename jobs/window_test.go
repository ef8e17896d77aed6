package jobs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/fit"
)

// A summary's transcript is fitted into the model's context window (from
// the policy): the newest part is kept, the oldest dropped, and system
// prompt, transcript and the answer's room stay within the window.
func TestSummaryFitsTheContextWindow(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const window = 700
	e.polMu.Lock()
	e.pol.Models = map[string]kairos.ModelSpec{"m1": {ContextWindow: window}}
	e.polMu.Unlock()
	u := e.user(1, "UTC")
	at := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 60; i++ {
		e.say(u, at.Add(time.Duration(i)*time.Minute), fmt.Sprintf("message %02d about the garden and the trip to Kyoto", i))
	}
	if _, err := e.sched.Sessions().End(ctx, u.thread, u.key, "", at.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	reqs := e.model.Requests()
	if len(reqs) == 0 {
		t.Fatal("no summary request")
	}
	r := reqs[0]
	sent := fit.Estimate(r.Messages[0].Content) + fit.Estimate(r.Messages[1].Content) + r.MaxTokens
	text := r.Messages[1].Content
	if sent > window || !strings.Contains(text, "message 59") || strings.Contains(text, "message 00") {
		t.Fatalf("sent %d tokens (window %d), newest kept %v, oldest dropped %v",
			sent, window, strings.Contains(text, "message 59"), !strings.Contains(text, "message 00"))
	}
}
