package bot

import (
	"errors"
	"testing"
	"time"
)

// A 409 (another poller: the previous holder of the poll lease) backs off
// to 5 s at most, so a handover never waits on the 30 s outage backoff;
// retry_after is obeyed as given.
func TestPollBackoff(t *testing.T) {
	b := &Bot{}
	conflict := &APIError{Code: 409, Description: "Conflict: terminated by other getUpdates request"}
	outage := &APIError{Code: 502, Description: "Bad Gateway"}
	var w409, w502 time.Duration
	for i := 0; i < 20; i++ {
		w409 = b.pollBackoff(conflict, w409)
		w502 = b.pollBackoff(outage, w502)
	}
	if w409 != 5*time.Second || w502 != 30*time.Second {
		t.Fatalf("backoff after 20 failures: 409 %v, 502 %v", w409, w502)
	}
	if w := b.pollBackoff(errors.New("network down"), 0); w != 500*time.Millisecond {
		t.Fatalf("first wait %v", w)
	}
	if w := b.pollBackoff(&APIError{Code: 429, RetryAfter: 7 * time.Second}, 20*time.Second); w != 7*time.Second {
		t.Fatalf("retry_after wait %v", w)
	}
}
