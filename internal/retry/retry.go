// Package retry holds the waits between tries: the backoff of a call
// to a model provider and a sleep that ends with its context.
package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/kairos-agent/kairos"
)

// Backoff is the wait before retry attempt n (1-based) of a call to a
// model provider: the provider's Retry-After when it sent one (at most
// 30 s), otherwise 500 ms doubling per attempt up to 8 s, of which the
// second half is random (jitter, so retries of many turns spread out).
func Backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, 30*time.Second)
	}
	d := min(500*time.Millisecond<<min(max(attempt-1, 0), 10), 8*time.Second)
	return d/2 + rand.N(d/2+1)
}

// Wait sleeps before retry attempt n (1-based) after lastErr, for
// the time backoff gives (with lastErr's Retry-After when it is a
// *kairos.ProviderError). It returns early with the context's error.
func Wait(ctx context.Context, attempt int, lastErr error, backoff func(int, time.Duration) time.Duration) error {
	var ra time.Duration
	if pe := (*kairos.ProviderError)(nil); errors.As(lastErr, &pe) {
		ra = pe.RetryAfter
	}
	return Sleep(ctx, backoff(attempt, ra))
}

// Sleep waits for d or until ctx is done, whichever comes first, and
// returns ctx.Err() in the second case. A non-positive d returns at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
