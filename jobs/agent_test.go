package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/tools"
)

// A message that arrives across the division boundary before the job ran
// is answered in the new session, whose prompt carries the previous
// session's summary and not its messages.
func TestAgentTurnAcrossTheBoundary(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	u := e.user(7, "Asia/Tokyo")
	answerText(e.model, func(req kairos.ChatRequest) (string, error) {
		if strings.Contains(req.Messages[0].Content, "Summarize this conversation") {
			return "Ann plans to call the dentist on Tuesday.", nil
		}
		return "Good morning, Ann.", nil
	})
	a := agent.New(agent.Config{Model: e.model, Sessions: e.sessions, Clock: &mock.Clock{}, Tools: tools.NewRegistry(),
		Policy: e.cfg.Policy, Models: []string{"m1"}, Rollover: e.sched.Sessions().Rollover,
		Now: func() time.Time { return time.Date(2026, 3, 3, 7, 30, 0, 0, u.loc) }})
	old := e.say(u, time.Date(2026, 3, 2, 21, 0, 0, 0, u.loc), "remind me: dentist tomorrow")

	in := inbound(u, time.Date(2026, 3, 3, 7, 30, 0, 0, u.loc))
	out := &mock.Replier{}
	if err := a.HandleMessage(ctx, in, out); err != nil {
		t.Fatal(err)
	}
	if out.Text() != "Good morning, Ann." {
		t.Fatalf("answer %q", out.Text())
	}
	cur := e.open(u)
	if cur.ID == old.ID || cur.PrevSessionID != old.ID {
		t.Fatalf("turn session %+v", cur)
	}
	msgs, _ := e.sessions.Messages(ctx, cur.ID, 0, 0)
	if len(msgs) != 2 || msgs[0].Content != "good morning" {
		t.Fatalf("new session messages %+v", msgs)
	}
	turn := requestsWith(e.model, "Clock: ")
	if len(turn) != 1 {
		t.Fatalf("%d turn requests", len(turn))
	}
	var prompt []string
	for _, m := range turn[0].Messages {
		prompt = append(prompt, m.Content)
	}
	all := strings.Join(prompt, "\n")
	if !strings.Contains(all, "Ann plans to call the dentist on Tuesday.") || strings.Contains(all, "remind me: dentist tomorrow") {
		t.Fatalf("prompt does not carry the summary instead of the old messages:\n%s", all)
	}
}
