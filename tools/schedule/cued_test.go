package schedule_test

import (
	"testing"

	"github.com/kairos-agent/kairos/tools"
	"github.com/kairos-agent/kairos/tools/schedule"
)

// TestScheduleIsCuedByAnyTime: the schedule tool itself is offered for a
// clock time or a span with no reminder word, not only for its cue words
// (tools.TestTimeMentionCuesSchedule holds the time rule to generated
// phrasings), and not for a message with neither.
func TestScheduleIsCuedByAnyTime(t *testing.T) {
	tl := &schedule.Tool{}
	for msg, want := range map[string]bool{
		"ping me at 5":             true,
		"mañana 17 30 llamar":      true,
		"in 20 min the oven":       true,
		"remind me about the oven": true,
		"hello there":              false,
		"room 101 is free":         false,
	} {
		if got := tl.CuedBy(tools.NewMessage(msg)); got != want {
			t.Errorf("%q: cued %v, want %v", msg, got, want)
		}
	}
}
