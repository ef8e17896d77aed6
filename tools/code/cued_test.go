package code_test

import (
	"testing"

	"github.com/kairos-agent/kairos/tools"
	"github.com/kairos-agent/kairos/tools/code"
)

// TestCodeIsCuedByACalculation: the code tool itself is offered for a
// calculation written out with no cue word (tools.TestArithmeticIsMentioned
// holds the rule to generated phrasings), for its cue words, and not for
// a message with neither.
func TestCodeIsCuedByACalculation(t *testing.T) {
	tl := &code.Tool{}
	for msg, want := range map[string]bool{
		"what's 17*23":                true,
		"1,234.5 divided by 7?":       true,
		"15% of 240":                  true,
		"calculate my rent share":     true,
		"hello there":                 false,
		"meet on 2026-11-28 at 17:30": false,
	} {
		if got := tl.CuedBy(tools.NewMessage(msg)); got != want {
			t.Errorf("%q: cued %v, want %v", msg, got, want)
		}
	}
}
