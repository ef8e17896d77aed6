// Package fit estimates tokens and fits text into a model's window.
package fit

import (
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
)

// WindowRoom is the tokens a request to model may send under policy p:
// the model's context window less a 5 % margin (chat templates, a
// tokenizer other than the server's) and reply, the answer's room; 0
// when the window is unknown (nothing to fit).
func WindowRoom(p *kairos.Policy, model string, reply int) int {
	spec, _ := p.Model(model)
	w := spec.ContextWindow
	if w <= 0 {
		return 0
	}
	return max(w-w/20-reply, 1)
}

// Tail returns the longest end of s that count says takes at most n
// tokens, cut on a rune boundary (the newest part of a transcript).
func Tail(s string, n int, count func(string) int) string {
	if n <= 0 {
		return ""
	}
	if count(s) <= n {
		return s
	}
	lo, hi := 0, len(s) // s[lo:] does not fit, s[hi:] does
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if count(s[runeStart(s, mid):]) <= n {
			hi = mid
		} else {
			lo = mid
		}
	}
	return s[runeStart(s, hi):]
}

// Head returns the longest start of s that count says takes at most n
// tokens, cut on a rune boundary.
func Head(s string, n int, count func(string) int) string {
	if n <= 0 {
		return ""
	}
	if count(s) <= n {
		return s
	}
	lo, hi := 0, len(s) // s[:lo] fits, s[:hi] does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if count(s[:runeBack(s, mid)]) <= n {
			lo = mid
		} else {
			hi = mid
		}
	}
	return s[:runeBack(s, lo)]
}

// runeStart moves i forward to the start of a rune (or len(s)).
func runeStart(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// runeBack moves i back to the start of a rune.
func runeBack(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// Estimate estimates the tokens of a text without a tokenizer:
// about four bytes of ASCII per token (BPE tokenizers average 3.5–4.5 on
// English and code) and one token per non-ASCII rune (CJK and most other
// scripts take one or more tokens per character). It errs on the high
// side for non-Latin scripts, which is the safe side for budgets.
func Estimate(s string) int {
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
