package kairos

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
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

// RetryWait sleeps before retry attempt n (1-based) after lastErr, for
// the time backoff gives (with lastErr's Retry-After when it is a
// *ProviderError). It returns early with the context's error.
func RetryWait(ctx context.Context, attempt int, lastErr error, backoff func(int, time.Duration) time.Duration) error {
	var ra time.Duration
	if pe := (*ProviderError)(nil); errors.As(lastErr, &pe) {
		ra = pe.RetryAfter
	}
	return Sleep(ctx, backoff(attempt, ra))
}
