package bot

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// TestRetryDoesNotWaitAfterTheLastTry: a send that fails with a temporary
// error on every try waits between tries, not after the last one, so the
// caller (and the user's apology) is not held up for nothing.
func TestRetryDoesNotWaitAfterTheLastTry(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"ok":false,"error_code":500,"description":"Internal Server Error"}`))
	}))
	defer srv.Close()
	b, err := New(Config{Token: "1:x", APIURL: srv.URL, Limits: Unlimited})
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	old := retrySleep
	retrySleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	defer func() { retrySleep = old }()

	err = b.withRetry(context.Background(), &kairos.Inbound{ChatID: 7}, "sendMessage", map[string]any{"chat_id": 7, "text": "hi"}, nil, false)
	if err == nil {
		t.Fatal("a send that always failed succeeded")
	}
	if calls.Load() != sendTries || len(waits) != sendTries-1 {
		t.Fatalf("%d tries and %d waits (%v), want %d tries and a wait between each", calls.Load(), len(waits), waits, sendTries)
	}
}
