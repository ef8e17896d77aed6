package schedule_test

import (
	"context"
	"strings"
	"testing"

	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// With no known zone a wall-clock time or a repeat asks where the user
// is (nothing to approve); an instant does not need the zone.
func TestUnknownZone(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args string
		ask  bool
	}{
		{`{"action":"create","when":"tomorrow at 9am","text":"x"}`, true},
		{`{"action":"create","repeat":"every weekday at 8am","text":"x"}`, true},
		{`{"action":"create","when":"in 20 minutes","text":"x"}`, false},
		{`{"action":"create","when":"2026-11-25T09:00:00+01:00","text":"x"}`, false},
	} {
		t.Run(tc.args, func(t *testing.T) {
			tool, _ := newTool(t, "")
			in := inv(tc.args, false)
			act, err := tool.Action(ctx, in)
			if err != nil || act.Impactful == tc.ask {
				t.Fatalf("action %+v %v", act, err)
			}
			res, err := tool.Call(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if asked := strings.Contains(string(res.Content), schedtool.ZoneQuestion); asked != tc.ask {
				t.Fatalf("result %s", res.Content)
			}
			if !tc.ask && !strings.Contains(string(res.Content), `"tz":"UTC"`) {
				t.Fatalf("result %s", res.Content)
			}
		})
	}
}
