package schedules

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

func TestParseRepeat(t *testing.T) {
	for _, tc := range []struct {
		in, rule string
		h, m     int
		hasTime  bool
		bad      bool
	}{
		{in: "every weekday at 8am", rule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", h: 8, hasTime: true},
		{in: "every 2 weeks on Monday", rule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO"},
		{in: "on the last day of every month", rule: "FREQ=MONTHLY;BYMONTHDAY=-1"},
		{in: "daily at 18:30", rule: "FREQ=DAILY", h: 18, m: 30, hasTime: true},
		{in: "every Tuesday and Thursday at 7pm", rule: "FREQ=WEEKLY;BYDAY=TU,TH", h: 19, hasTime: true},
		{in: "every other day at noon", rule: "FREQ=DAILY;INTERVAL=2", h: 12, hasTime: true},
		{in: "every month on the 15th at 12am", rule: "FREQ=MONTHLY;BYMONTHDAY=15", h: 0, hasTime: true},
		{in: "RRULE:FREQ=WEEKLY;BYDAY=MO,WE", rule: "FREQ=WEEKLY;BYDAY=MO,WE"},
		{in: "FREQ=DAILY;COUNT=3", rule: "FREQ=DAILY;COUNT=3"},
		{in: "FREQ=SOMETIMES", bad: true},
		{in: "whenever you like", bad: true},
		{in: "", bad: true},
		{in: "every day at 25:00", bad: true},
		{in: "every 0 days", bad: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseRepeat(tc.in)
			if tc.bad {
				if kairos.ErrorCode(err) != kairos.EINVALID {
					t.Fatalf("got %+v, %v; want EINVALID", r, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.RRule != tc.rule || r.HasTime != tc.hasTime || r.Hour != tc.h || r.Minute != tc.m {
				t.Fatalf("got %+v, want %s %02d:%02d %v", r, tc.rule, tc.h, tc.m, tc.hasTime)
			}
		})
	}
}

func FuzzParseRepeat(f *testing.F) {
	for _, s := range []string{"every weekday at 8am", "FREQ=WEEKLY;BYDAY=MO", "every 3 hours", "on the last day of every month"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRepeat(s)
		if err != nil {
			if kairos.ErrorCode(err) != kairos.EINVALID {
				t.Fatalf("error code %v", err)
			}
			return
		}
		if _, err := Occurrences(context.Background(), r.RRule, time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC), time.UTC, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 3); err != nil {
			t.Fatalf("%q parsed to %q which does not expand: %v", s, r.RRule, err)
		}
	})
}

func mustLoc(t testing.TB, name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// Recurring schedules keep their wall-clock time across DST: 08:00 stays
// 08:00, a time the transition skips moves forward by the gap, and a time
// that happens twice fires once.
func TestOccurrencesAcrossDST(t *testing.T) {
	for _, tc := range []struct {
		name, zone, rule string
		start            time.Time // wall time (UTC fields)
		after            time.Time // wall time in zone
		want             []string  // RFC 3339 with the zone's offset
	}{
		{"Berlin spring 08:00", "Europe/Berlin", "FREQ=DAILY", wall(2026, 3, 27, 8, 0), wall(2026, 3, 27, 0, 0),
			[]string{"2026-03-27T08:00:00+01:00", "2026-03-28T08:00:00+01:00", "2026-03-29T08:00:00+02:00", "2026-03-30T08:00:00+02:00"}},
		{"Berlin autumn 08:00", "Europe/Berlin", "FREQ=DAILY", wall(2026, 10, 23, 8, 0), wall(2026, 10, 24, 0, 0),
			[]string{"2026-10-24T08:00:00+02:00", "2026-10-25T08:00:00+01:00", "2026-10-26T08:00:00+01:00"}},
		{"Berlin spring 02:30 skipped moves forward", "Europe/Berlin", "FREQ=DAILY", wall(2026, 3, 27, 2, 30), wall(2026, 3, 28, 0, 0),
			[]string{"2026-03-28T02:30:00+01:00", "2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"Berlin autumn 02:30 repeated fires once", "Europe/Berlin", "FREQ=DAILY", wall(2026, 10, 23, 2, 30), wall(2026, 10, 24, 0, 0),
			[]string{"2026-10-24T02:30:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"Berlin autumn every 30 min through the fold", "Europe/Berlin", "FREQ=MINUTELY;INTERVAL=30", wall(2026, 10, 25, 1, 30), wall(2026, 10, 25, 1, 0),
			[]string{"2026-10-25T01:30:00+02:00", "2026-10-25T02:00:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-25T03:00:00+01:00"}},
		{"New York spring weekday 08:00", "America/New_York", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", wall(2026, 3, 6, 8, 0), wall(2026, 3, 6, 9, 0),
			[]string{"2026-03-09T08:00:00-04:00", "2026-03-10T08:00:00-04:00"}},
		{"New York spring 02:15 skipped", "America/New_York", "FREQ=DAILY", wall(2026, 3, 7, 2, 15), wall(2026, 3, 7, 3, 0),
			[]string{"2026-03-08T03:15:00-04:00", "2026-03-09T02:15:00-04:00"}},
		{"New York autumn 01:30 repeated", "America/New_York", "FREQ=DAILY", wall(2026, 10, 31, 1, 30), wall(2026, 10, 31, 2, 0),
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"Lord Howe spring 02:15 (30 min gap)", "Australia/Lord_Howe", "FREQ=DAILY", wall(2026, 10, 3, 2, 15), wall(2026, 10, 3, 3, 0),
			[]string{"2026-10-04T02:45:00+11:00", "2026-10-05T02:15:00+11:00"}},
		{"Lord Howe autumn 01:45 repeated", "Australia/Lord_Howe", "FREQ=DAILY", wall(2026, 4, 4, 1, 45), wall(2026, 4, 4, 2, 0),
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"}},
		{"last day of month", "Europe/Lisbon", "FREQ=MONTHLY;BYMONTHDAY=-1", wall(2026, 1, 31, 9, 0), wall(2026, 1, 31, 10, 0),
			[]string{"2026-02-28T09:00:00Z", "2026-03-31T09:00:00+01:00"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc := mustLoc(t, tc.zone)
			after, _ := resolveWall(loc, tc.after)
			got, err := Occurrences(context.Background(), tc.rule, tc.start, loc, after, len(tc.want))
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, g := range got {
				s = append(s, g.In(loc).Format(time.RFC3339))
			}
			if len(s) != len(tc.want) {
				t.Fatalf("got %v, want %v", s, tc.want)
			}
			for i := range s {
				if s[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", s, tc.want)
				}
			}
		})
	}
}

func wall(y int, mo time.Month, d, h, mi int) time.Time {
	return time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
}

func resolveWall(loc *time.Location, w time.Time) (time.Time, error) { return resolve(loc, w), nil }

func TestNextRunCountsSkipped(t *testing.T) {
	s := &kairos.Schedule{TZ: "Europe/Berlin", RRule: "FREQ=DAILY", Start: "2026-03-01T08:00:00",
		NextRun: time.Date(2026, 3, 1, 7, 0, 0, 0, time.UTC)}
	next, skipped, err := NextRun(context.Background(), s, time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !next.Equal(time.Date(2026, 3, 5, 7, 0, 0, 0, time.UTC)) || skipped != 3 {
		t.Fatalf("next %v skipped %d", next, skipped)
	}
	s.RRule = "FREQ=DAILY;COUNT=2"
	next, _, err = NextRun(context.Background(), s, time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC))
	if err != nil || !next.IsZero() {
		t.Fatalf("ended recurrence: %v %v", next, err)
	}
}
