package fit_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/fit"
)

func TestFitHeadAndTail(t *testing.T) {
	s := strings.Repeat("abcd é ", 50) // multi-byte runes on the cuts
	for _, n := range []int{0, 1, 3, 10, 40, 1000} {
		tail := fit.Tail(s, n, fit.Estimate)
		head := fit.Head(s, n, fit.Estimate)
		for _, part := range []string{tail, head} {
			if !utf8.ValidString(part) || fit.Estimate(part) > n {
				t.Fatalf("n=%d: %q (%d tokens)", n, part, fit.Estimate(part))
			}
		}
		if !strings.HasSuffix(s, tail) || !strings.HasPrefix(s, head) {
			t.Fatalf("n=%d: not an end/start", n)
		}
		// Longest: one more rune would not fit.
		if len(tail) < len(s) {
			_, w := utf8.DecodeLastRuneInString(s[:len(s)-len(tail)])
			if fit.Estimate(s[len(s)-len(tail)-w:]) <= n {
				t.Fatalf("n=%d: tail %q is not the longest", n, tail)
			}
		}
	}
	pol := kairos.DefaultPolicy()
	pol.Models = map[string]kairos.ModelSpec{"tiny": {ContextWindow: 200}}
	if got := fit.WindowRoom(pol, "tiny", 50); got != 140 {
		t.Fatalf("room %d", got)
	}
	if got := fit.WindowRoom(pol, "unknown-model-x", 50); got != 0 {
		t.Fatalf("unknown window: room %d", got)
	}
}
