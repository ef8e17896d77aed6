package kairos

import (
	"context"
	"time"
	"unicode/utf8"
)

// Clip keeps at most n bytes of s, cut on a rune boundary, and marks a cut
// with "…". It is the one clipper for logs, journals and results that
// must stay valid UTF-8.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
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
