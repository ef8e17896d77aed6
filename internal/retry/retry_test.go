package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/retry"
)

func TestBackoff(t *testing.T) {
	for attempt, want := range map[int]time.Duration{1: 500 * time.Millisecond, 2: time.Second, 3: 2 * time.Second, 5: 8 * time.Second, 40: 8 * time.Second} {
		for range 50 {
			if d := retry.Backoff(attempt, 0); d < want/2 || d > want {
				t.Fatalf("Backoff(%d) = %s, want within [%s, %s]", attempt, d, want/2, want)
			}
		}
	}
	if d := retry.Backoff(1, 3*time.Second); d != 3*time.Second {
		t.Errorf("Retry-After 3s gave %s", d)
	}
	if d := retry.Backoff(1, time.Hour); d != 30*time.Second {
		t.Errorf("Retry-After 1h gave %s, want the 30s cap", d)
	}
}

func TestRetryWait(t *testing.T) {
	var got []time.Duration
	record := func(attempt int, ra time.Duration) time.Duration { got = append(got, ra); return 0 }
	pe := &kairos.ProviderError{RetryAfter: 7 * time.Second}
	if err := retry.Wait(context.Background(), 1, fmt.Errorf("chat: %w", pe), record); err != nil {
		t.Fatal(err)
	}
	if err := retry.Wait(context.Background(), 2, errors.New("network"), record); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 7*time.Second || got[1] != 0 {
		t.Errorf("retry-after seen %v, want [7s 0s]", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := retry.Wait(ctx, 1, nil, func(int, time.Duration) time.Duration { return time.Hour }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait = %v", err)
	}
}
