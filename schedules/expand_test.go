package schedules

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/teambition/rrule-go"
)

// reference expands rule the slow way (rrule-go from DTSTART, as before
// the cursor) and returns the first n instants in loc after after.
func reference(t *testing.T, rule string, start time.Time, loc *time.Location, after time.Time, n int) []time.Time {
	t.Helper()
	opt, err := rrule.StrToROption(rule)
	if err != nil {
		t.Fatal(err)
	}
	opt.Dtstart = floating(start)
	r, err := rrule.NewRRule(*opt)
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	last := after
	it := r.Iterator()
	for w, ok := it(); ok && len(out) < n; w, ok = it() {
		if tt := resolve(loc, w); tt.After(last) {
			out = append(out, tt)
			last = tt
		}
	}
	return out
}

// Moving DTSTART keeps the rule's meaning: for rules of every kind
// (INTERVAL, BYSETPOS, WKST, UNTIL, COUNT, lists), zones with DST and
// a date-line jump, and "after" instants from the start to years on, the
// cursor expansion returns what expanding from the start returns.
func TestNextMatchesExpansionFromStart(t *testing.T) {
	rules := []string{
		"FREQ=SECONDLY;INTERVAL=7", "FREQ=MINUTELY;INTERVAL=13;BYSECOND=5,50", "FREQ=HOURLY;INTERVAL=5;BYMINUTE=0,1",
		"FREQ=DAILY;INTERVAL=3", "FREQ=DAILY;BYHOUR=1,2,3;BYMINUTE=30", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR",
		"FREQ=WEEKLY;INTERVAL=3;WKST=SU;BYDAY=SU,SA", "FREQ=WEEKLY;BYDAY=MO,TU,WE;BYSETPOS=-1", "FREQ=MONTHLY;BYMONTHDAY=31",
		"FREQ=MONTHLY;INTERVAL=5;BYDAY=-1FR", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1,-1", "FREQ=MONTHLY;INTERVAL=2",
		"FREQ=YEARLY", "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29", "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
		"FREQ=DAILY;UNTIL=20270301T000000Z", "FREQ=DAILY;COUNT=40", "FREQ=MINUTELY;INTERVAL=45;COUNT=300",
	}
	zones := []string{"UTC", "Europe/Lisbon", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia"}
	// A COUNT rule cannot move its DTSTART: nine days on, the 45-minute
	// rule walks some 290 steps from its start, past the first time check
	// (step 256). This test is about what the walk returns; on a loaded
	// machine a stall of 20 ms there ended it with EBUDGET (79 of 3000
	// such walks under stress -c 6 on 2 cores).
	defer func(b time.Duration) { callBudget = b }(callBudget)
	callBudget = time.Minute
	starts := []time.Time{time.Date(2011, 12, 20, 9, 30, 15, 0, time.UTC), time.Date(2026, 1, 31, 1, 30, 0, 0, time.UTC)}
	afters := []time.Duration{-time.Hour, 0, 90 * time.Minute, 50 * time.Hour, 9 * 24 * time.Hour, 400 * 24 * time.Hour, 1500 * 24 * time.Hour}
	ctx := context.Background()
	for _, rule := range rules {
		for _, z := range zones {
			loc, err := time.LoadLocation(z)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range starts {
				r, err := Compile(rule, st)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range afters {
					if d > 9*24*time.Hour && r.opt.Freq > rrule.DAILY {
						continue // the reference would take minutes
					}
					after := time.Date(st.Year(), st.Month(), st.Day(), st.Hour(), st.Minute(), st.Second(), 0, loc).Add(d)
					want := reference(t, rule, st, loc, after, 5)
					got, err := r.Next(ctx, loc, after, 5)
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%s in %s from %s after %s:\n got %v\nwant %v", rule, z, st, after, got, want)
					}
				}
			}
		}
	}
}

func TestInspect(t *testing.T) {
	start := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for _, tc := range []struct {
		rule string
		gap  time.Duration
		bad  string
	}{
		{rule: "FREQ=DAILY", gap: 24 * time.Hour},
		// The first gap is 59 minutes; the whole hour has one-second gaps.
		{rule: "FREQ=HOURLY;BYMINUTE=0;BYSECOND=0,1,2,3", gap: time.Second},
		{rule: "FREQ=DAILY;BYMINUTE=0,59", gap: 59 * time.Minute},
		{rule: "FREQ=HOURLY;BYMINUTE=0,59", gap: time.Minute},
		{rule: "FREQ=MONTHLY;BYSETPOS=9;BYDAY=MO", bad: "no occurrence"},
		{rule: "FREQ=YEARLY;BYYEARDAY=100;BYMONTH=1", bad: "no occurrence"},
		{rule: "FREQ=WEEKLY;BYDAY=MO,TU", gap: 24 * time.Hour},
		{rule: "FREQ=MINUTELY;INTERVAL=15;BYHOUR=9,10", gap: 15 * time.Minute},
		{rule: "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", bad: "no occurrence"},
		{rule: "FREQ=SECONDLY;BYHOUR=9", bad: "periods per cycle"},
		{rule: "FREQ=YEARLY;BYHOUR=1,2,3,4,5,6,7,8,9,10,11,12;BYMINUTE=0,5,10,15,20,25,30,35,40,45,50,55;BYYEARDAY=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50", bad: "too many occurrences"},
		{rule: "FREQ=DAILY;COUNT=5000", bad: "COUNT may be at most"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			sh, err := Inspect(ctx, tc.rule, start)
			if tc.bad != "" {
				if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("got %+v, %v; want EINVALID %q", sh, err, tc.bad)
				}
				return
			}
			if err != nil || sh.MinGap != tc.gap {
				t.Fatalf("got %+v, %v; want gap %s", sh, err, tc.gap)
			}
		})
	}
}

// COUNT becomes the UNTIL of its last occurrence: the same occurrences.
func TestInspectCountToUntil(t *testing.T) {
	start := time.Date(2026, 3, 27, 1, 30, 0, 0, time.UTC)
	sh, err := Inspect(context.Background(), "FREQ=HOURLY;INTERVAL=5;COUNT=30", start)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sh.RRule, "COUNT") || !strings.Contains(sh.RRule, "UNTIL=") {
		t.Fatalf("rule %q", sh.RRule)
	}
	loc, _ := time.LoadLocation("Europe/Lisbon")
	after := time.Date(2026, 3, 27, 0, 0, 0, 0, loc)
	want := reference(t, "FREQ=HOURLY;INTERVAL=5;COUNT=30", start, loc, after, 100)
	got, err := Occurrences(context.Background(), sh.RRule, start, loc, after, 100)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 30 {
		t.Fatalf("got %d %v\nwant %d %v", len(got), got, len(want), want)
	}
}

// Expansion ends with its context.
func TestNextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Occurrences(ctx, "FREQ=SECONDLY", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.UTC, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), MaxPerCall)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// Whether a rule is too dense does not hang on the machine's speed: with
// every timed walk out of time at once, Inspect still accepts a dense
// valid rule (300 a day; its gap walk passes the first time check) and
// refuses one past MaxPerCall occurrences per cycle as too dense, while a
// walk that does run out of time says the machine was busy (EBUDGET).
func TestInspectDoesNotHangOnTheClock(t *testing.T) {
	defer func(b time.Duration) { callBudget = b }(callBudget)
	callBudget = time.Nanosecond
	ctx := context.Background()
	start := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	const dense = "FREQ=MINUTELY;INTERVAL=2;BYHOUR=8,9,10,11,12,13,14,15,16,17"
	if _, err := Inspect(ctx, dense, start); err != nil {
		t.Fatalf("a valid dense rule on a busy machine: %v", err)
	}
	days := make([]string, 50)
	for i := range days {
		days[i] = fmt.Sprint(i + 1)
	}
	// 12 hours × 12 minutes × 50 days: 7,200 occurrences a cycle.
	tooDense := "FREQ=YEARLY;BYHOUR=1,2,3,4,5,6,7,8,9,10,11,12;BYMINUTE=0,5,10,15,20,25,30,35,40,45,50,55;BYYEARDAY=" + strings.Join(days, ",")
	if _, err := Inspect(ctx, tooDense, start); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("a rule too dense on a busy machine: %v, want EINVALID", err)
	}
	r, err := Compile(dense, start)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(ctx, time.UTC, start, 500); kairos.ErrorCode(err) != kairos.EBUDGET || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("a walk out of time: %v, want EBUDGET saying the machine is busy", err)
	}
}
