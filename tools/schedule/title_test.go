package schedule_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// A watching cell is shown by what the user asked it to watch, never by
// its code: in the create approval's reason, the create result and the
// list the model reads. Its code appears only in the approval's detail.
func TestWatchingCellShownByItsTitle(t *testing.T) {
	ctx := context.Background()
	tool, _ := newTool(t, "UTC")
	code, _ := json.Marshal("const r = await getJSON(\"https://prices.example/btc\");\nif (r.usd < 90000) output({notify: \"BTC \" + r.usd})")
	args := `{"action":"create","when":"2026-11-25T09:00:00Z","repeat":"FREQ=HOURLY","text":"tell me when BTC drops below 90k","code":` + string(code) + `}`
	act, err := tool.Action(ctx, inv(args, false))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(act.Reason, `"tell me when BTC drops below 90k"`) || strings.Contains(act.Reason, "getJSON") || !strings.Contains(act.Detail, "getJSON") {
		t.Fatalf("approval %+v", act)
	}
	created, err := tool.Call(ctx, inv(args, false))
	if err != nil {
		t.Fatal(err)
	}
	listed, err := tool.Call(ctx, inv(`{"action":"list"}`, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*kairos.ToolResult{created, listed} {
		if s := string(res.Content); !strings.Contains(s, "tell me when BTC drops below 90k") || strings.Contains(s, "getJSON") || strings.Contains(s, "const r") {
			t.Fatalf("the model sees %s", s)
		}
	}
}

// A cell must say what it watches (the model is told to); with code cells
// off the refusal still names the flag, not the missing title.
func TestWatchingCellNeedsATitle(t *testing.T) {
	tool, _ := newTool(t, "UTC")
	_, err := tool.Call(context.Background(), inv(`{"action":"create","when":"2026-11-25T09:00:00Z","code":"output({notify:'x'})"}`, false))
	if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), "needs text") {
		t.Fatalf("a cell without a title: %v", err)
	}
}

// A cell stored before titles (code only) is shown by a neutral label.
func TestTitleNeverShowsCode(t *testing.T) {
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		s    kairos.Schedule
		want string
	}{
		{"reminder", kairos.Schedule{Kind: kairos.ScheduleReminder, Text: "dentist"}, "dentist"},
		{"task", kairos.Schedule{Kind: kairos.ScheduleTask, Task: "plan my week\nwith detail"}, "plan my week"},
		{"titled cell", kairos.Schedule{Kind: kairos.ScheduleCell, Text: "BTC below 90k", Code: "const k = 1;\noutput({notify: 'x'})"}, "BTC below 90k"},
		{"untitled cell", kairos.Schedule{Kind: kairos.ScheduleCell, Code: "const k = 1;\noutput({notify: 'x'})"}, schedtool.UntitledCell},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.TZ, tc.s.NextRun = "UTC", at
			if got := schedtool.ViewOf(&tc.s).Text; got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
