package kairos

import (
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
