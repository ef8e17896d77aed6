package main

import (
	"context"
	"encoding/json"
	"testing"
)

// `kairos clock parse` prints the recurrence of a recurring phrase as an
// RRULE next to its first occurrence (CONTRACT: "repeat": RRULE?), and a
// half-read phrase as a question naming the word it could not read.
func TestClockParseCommand_RepeatAndUnreadWords(t *testing.T) {
	for _, tc := range []struct {
		text, start, repeat string
		question            bool
	}{
		// Wednesday 2026-07-15 11:00 in London.
		{"every weekday at 8am", "2026-07-16T08:00:00+01:00", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", false},
		{"on the 21st at 4pm", "2026-07-21T16:00:00+01:00", "", false},
		{"call mum in paris at 5pm", "", "", true},
	} {
		e := newEnv(t)
		code := e.main().Main(context.Background(), []string{"clock", "parse", tc.text, "--tz", "Europe/London", "--at", "2026-07-15T10:00:00Z"})
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.text, code, e.logs.String())
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(e.out.String()), &res); err != nil {
			t.Fatalf("output %q: %v", e.out.String(), err)
		}
		start, _ := res["start"].(string)
		repeat, _ := res["repeat"].(string)
		if start != tc.start || repeat != tc.repeat || res["needs_clarification"] != tc.question {
			t.Errorf("%q: %s", tc.text, e.out.String())
		}
	}
}

// `kairos clock parse` prints what it read into the text (issue 32): a
// typo taken for a word is an assumption in the JSON.
func TestClockParseCommand_Assumptions(t *testing.T) {
	e := newEnv(t)
	code := e.main().Main(context.Background(), []string{"clock", "parse", "thrusday at 3pm", "--tz", "Europe/London", "--at", "2026-07-15T10:00:00Z"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	var res struct {
		Start       string   `json:"start"`
		Assumptions []string `json:"assumptions"`
	}
	if err := json.Unmarshal([]byte(e.out.String()), &res); err != nil {
		t.Fatalf("output %q: %v", e.out.String(), err)
	}
	if res.Start != "2026-07-16T15:00:00+01:00" || len(res.Assumptions) != 1 || res.Assumptions[0] != `read "thrusday" as Thursday` {
		t.Errorf("%s", e.out.String())
	}
}
