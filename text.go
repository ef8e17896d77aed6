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

// EstimateTokens estimates the tokens of a text without a tokenizer:
// about four bytes of ASCII per token (BPE tokenizers average 3.5–4.5 on
// English and code) and one token per non-ASCII rune (CJK and most other
// scripts take one or more tokens per character). It errs on the high
// side for non-Latin scripts, which is the safe side for budgets.
func EstimateTokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		other++
		i += n
	}
	return (ascii+3)/4 + other
}
