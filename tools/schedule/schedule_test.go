package schedule_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/clockstate"
	"github.com/kairos-agent/kairos/schedules"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

func newTool(t *testing.T, zone string) (*schedtool.Tool, *store.ScheduleStore) {
	cfg := testConfig(t, zone)
	return schedtool.New(cfg), cfg.Store.(*store.ScheduleStore)
}

// testConfig wires the tool to a real store and to clockstate's and
// schedules' parsers, as cmd/kairos does, in a fixed zone.
func testConfig(t testing.TB, zone string) schedtool.Config {
	return schedtool.Config{Store: store.NewScheduleStore(storetest.MustOpenDB(t)),
		Zone: func(context.Context, *kairos.ToolInvocation) (string, error) { return zone, nil },
		Parse: func(text, tz string, ref time.Time) schedtool.Parsed {
			r := clockstate.ParseAnchoredTime(text, tz, ref)
			return schedtool.Parsed{Start: r.Start, End: r.End, DayOnly: r.DayOnly, Floating: r.Kind == clockstate.KindFloating, NeedsClarification: r.NeedsClarification,
				ClarificationQuestion: r.ClarificationQuestion, Repeat: r.Repeat, Assumptions: r.Assumptions}
		},
		ParseRepeat: func(s string) (schedtool.Repeat, error) {
			r, err := schedules.ParseRepeat(s)
			return schedtool.Repeat(r), err
		},
		Occurrences: schedules.Occurrences,
		Inspect: func(ctx context.Context, rule string, start time.Time) (schedtool.Shape, error) {
			sh, err := schedules.Inspect(ctx, rule, start)
			return schedtool.Shape{RRule: sh.RRule, MinGap: sh.MinGap}, err
		}}
}

func inv(args string, tainted bool) *kairos.ToolInvocation {
	return &kairos.ToolInvocation{Name: "schedule", Arguments: json.RawMessage(args), UserKey: "telegram:7",
		ThreadKey: kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, 7, 7, 0),
		Now:       time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC), Tainted: tainted}
}

func TestCreate(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, zone, args string
		reason, errSub   string
		clarify          bool
		next             string
	}{
		{name: "floating anchored to the session zone", zone: "Europe/Lisbon", args: `{"action":"create","when":"2026-11-25T09:00:00","text":"dentist"}`,
			reason: `creates a reminder "dentist" for Wed 25 Nov 09:00 Europe/Lisbon`, next: "2026-11-25T09:00:00Z"},
		{name: "weekday plain form", zone: "America/New_York", args: `{"action":"create","repeat":"every weekday at 8am","text":"stand-up"}`,
			reason: "Wed 25 Nov 08:00 America/New_York, repeating every weekday at 8am", next: "2026-11-25T08:00:00-05:00"},
		// The recurrence read in when itself ("every weekday" was dropped).
		{name: "repeat read from when", zone: "America/New_York", args: `{"action":"create","when":"every weekday at 8am","text":"stand-up"}`,
			reason: "Wed 25 Nov 08:00 America/New_York, repeating FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", next: "2026-11-25T08:00:00-05:00"},
		{name: "no zone asks", zone: "", args: `{"action":"create","when":"tomorrow at 9","text":"x"}`, clarify: true},
		{name: "past", zone: "UTC", args: `{"action":"create","when":"2026-11-20T09:00:00Z","text":"x"}`, errSub: "in the past"},
		{name: "two kinds", zone: "UTC", args: `{"action":"create","when":"2026-11-25T09:00:00Z","text":"x","task":"y"}`, errSub: "exactly one"},
		{name: "task repeating too often", zone: "UTC", args: `{"action":"create","repeat":"FREQ=MINUTELY","when":"2026-11-25T09:00:00Z","task":"check"}`, errSub: "min_interval"},
		{name: "bad repeat", zone: "UTC", args: `{"action":"create","repeat":"now and then","text":"x","when":"2026-11-25T09:00:00Z"}`, errSub: "neither an RRULE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, st := newTool(t, tc.zone)
			in := inv(tc.args, tc.name == "floating anchored to the session zone")
			act, err := tool.Action(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			res, err := tool.Call(ctx, in)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(kairos.ErrorMessage(err), tc.errSub) || act.Impactful {
					t.Fatalf("want error %q, got %v (impactful %v)", tc.errSub, err, act.Impactful)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Success            bool `json:"success"`
				NeedsClarification bool `json:"needs_clarification"`
				Schedule           *struct {
					ID      string `json:"id"`
					NextRun string `json:"next_run"`
				} `json:"schedule"`
			}
			json.Unmarshal(res.Content, &out)
			if tc.clarify {
				if !out.NeedsClarification || out.Success || act.Impactful {
					t.Fatalf("want a clarification: %s", res.Content)
				}
				return
			}
			if !act.Impactful || act.Name != kairos.ActionScheduleCreate || !strings.Contains(act.Reason, tc.reason) {
				t.Fatalf("action %+v", act)
			}
			if !out.Success || out.Schedule == nil || out.Schedule.NextRun != tc.next {
				t.Fatalf("result %s", res.Content)
			}
			s, err := st.OwnSchedule(ctx, out.Schedule.ID, kairos.ScheduleScope{UserID: 7})
			if err != nil || s.Tainted != in.Tainted {
				t.Fatalf("stored %+v %v", s, err)
			}
		})
	}
}

func TestListAndCancel(t *testing.T) {
	ctx := context.Background()
	tool, _ := newTool(t, "UTC")
	res, err := tool.Call(ctx, inv(`{"action":"create","when":"2026-11-25T09:00:00Z","text":"x"}`, false))
	if err != nil {
		t.Fatal(err)
	}
	id := createdID(t, res)
	res, err = tool.Call(ctx, inv(`{"action":"list"}`, false))
	if err != nil || !strings.Contains(string(res.Content), `"text":"x"`) {
		t.Fatalf("%s %v", res.Content, err)
	}
	act, _ := tool.Action(ctx, inv(`{"action":"cancel","schedule_id":"`+id+`"}`, false))
	if !act.Impactful || !strings.Contains(act.Reason, "Wed 25 Nov 09:00 UTC") {
		t.Fatalf("cancel action %+v", act)
	}
	if _, err := tool.Call(ctx, inv(`{"action":"cancel","schedule_id":"`+id+`"}`, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Call(ctx, inv(`{"action":"cancel","schedule_id":"`+id+`"}`, false)); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("second cancel %v", err)
	}
}

func createdID(t *testing.T, res *kairos.ToolResult) string {
	t.Helper()
	var out struct {
		Schedule struct {
			ID string `json:"id"`
		} `json:"schedule"`
	}
	if err := json.Unmarshal(res.Content, &out); err != nil || len(out.Schedule.ID) != 26 {
		t.Fatalf("created %s: %v", res.Content, err)
	}
	return out.Schedule.ID
}
