package schedule_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// outcome is what one create call did: its approval, its result and the
// schedules it stored.
type outcome struct {
	act      kairos.ToolAction
	question string
	nextRun  string
	stored   int
	content  string
}

func create(t *testing.T, cfg schedtool.Config, args string) outcome {
	t.Helper()
	ctx := context.Background()
	tool := schedtool.New(cfg)
	in := inv(args, false)
	act, err := tool.Action(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Call(ctx, in)
	if err != nil {
		return outcome{act: act, content: "error: " + kairos.ErrorMessage(err)}
	}
	var out struct {
		Question string `json:"clarification_question"`
		Schedule *struct {
			NextRun string `json:"next_run"`
		} `json:"schedule"`
	}
	json.Unmarshal(res.Content, &out)
	o := outcome{act: act, question: out.Question, content: string(res.Content)}
	if out.Schedule != nil {
		o.nextRun = out.Schedule.NextRun
	}
	list, _ := cfg.Store.Schedules(ctx, kairos.ScheduleFilter{UserID: 7})
	o.stored = len(list)
	return o
}

// Item 6 of issue 32: a day with no time of day never fires at midnight.
// Without schedules.default_time the tool asks for the time and stores
// nothing; every such phrase (a weekday, a date, "sometime tomorrow", a
// repeat of days) is asked.
func TestDateAloneAsksForTheTime(t *testing.T) {
	for _, when := range []string{"friday", "on the 3rd", "sometime tomorrow", "tomorrow", "December 3", "every sunday", "next week"} {
		o := create(t, testConfig(t, "Europe/Lisbon"), `{"action":"create","when":"`+when+`","text":"x"}`)
		if o.stored != 0 || o.question == "" || o.act.Impactful || strings.Contains(o.nextRun, "T00:00:00") {
			t.Errorf("%q: stored %d next %q question %q (%s)", when, o.stored, o.nextRun, o.question, o.content)
		}
	}
}

// With schedules.default_time the day gets that time, and the approval
// says so.
func TestDateAloneTakesThePolicyDefault(t *testing.T) {
	cfg := testConfig(t, "Europe/Lisbon")
	pol := kairos.DefaultPolicy()
	pol.Schedules.DefaultTime = "09:00"
	cfg.Policy = func() *kairos.Policy { return pol }
	// The reference is Tuesday 24 November 2026, 18:00 UTC.
	for _, tc := range []struct{ when, next string }{
		{"friday", "2026-11-27T09:00:00Z"},
		{"sometime tomorrow", "2026-11-25T09:00:00Z"},
		{"on the 3rd", "2026-12-03T09:00:00Z"},
	} {
		o := create(t, cfg, `{"action":"create","when":"`+tc.when+`","text":"x"}`)
		if o.nextRun != tc.next || !strings.Contains(o.act.Reason, "schedules.default_time") {
			t.Errorf("%q: next %q, reason %q (%s)", tc.when, o.nextRun, o.act.Reason, o.content)
		}
	}
	// A stretch of days is still asked: which day?
	before := create(t, cfg, `{"action":"list"}`).stored
	if o := create(t, cfg, `{"action":"create","when":"next week","text":"x"}`); o.stored != before || o.question == "" {
		t.Errorf("next week: %s", o.content)
	}
}

// Item 8 of issue 32: the model's own reading (when_iso) beside the
// user's words. When they agree the schedule is made; when they disagree,
// or the words are asked about, the user is asked with both readings
// shown; neither silently wins.
func TestTwoReadings(t *testing.T) {
	cfg := testConfig(t, "Europe/Lisbon")
	// Tuesday 24 November 2026 18:00 in Lisbon (UTC+0).
	agree := create(t, cfg, `{"action":"create","when":"tomorrow at 5pm","when_iso":"2026-11-25T17:00:00Z","text":"x"}`)
	if agree.nextRun != "2026-11-25T17:00:00Z" || agree.stored != 1 {
		t.Fatalf("agreeing readings: %s", agree.content)
	}
	for _, tc := range []struct{ args, shows string }{
		{`{"action":"create","when":"tomorrow at 5pm","when_iso":"2026-11-26T17:00:00Z","text":"x"}`, "Thu 26 Nov 17:00"},
		{`{"action":"create","when":"at 5","when_iso":"2026-11-25T05:00:00Z","text":"x"}`, "Wed 25 Nov 05:00"},
		{`{"action":"create","when":"friday","when_iso":"2026-11-27T09:00:00Z","text":"x"}`, "Fri 27 Nov 09:00"},
	} {
		cfg := testConfig(t, "Europe/Lisbon")
		o := create(t, cfg, tc.args)
		if o.stored != 0 || o.act.Impactful || !strings.Contains(o.question, tc.shows) {
			t.Errorf("%s: stored %d, question %q (%s)", tc.args, o.stored, o.question, o.content)
		}
	}
	if o := create(t, testConfig(t, "Europe/Lisbon"), `{"action":"create","when":"tomorrow at 5pm","when_iso":"tomorrow","text":"x"}`); o.stored != 0 || !strings.Contains(o.content, "when_iso") {
		t.Errorf("bad when_iso: %s", o.content)
	}
}

// The parser's assumptions (a typo read as a word) reach the approval.
func TestAssumptionsInTheApproval(t *testing.T) {
	o := create(t, testConfig(t, "Europe/Lisbon"), `{"action":"create","when":"thrusday at 3pm","text":"x"}`)
	if o.nextRun != "2026-11-26T15:00:00Z" || !strings.Contains(o.act.Reason, `read "thrusday" as Thursday`) {
		t.Errorf("next %q reason %q (%s)", o.nextRun, o.act.Reason, o.content)
	}
}
