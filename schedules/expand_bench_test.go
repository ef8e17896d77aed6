package schedules

import (
	"context"
	"github.com/kairos-agent/kairos"
	"testing"
	"time"
)

// benchRules are accepted rules of every frequency.
var benchRules = []struct{ name, rule string }{
	{"secondly", "FREQ=SECONDLY"},
	{"minutely-list", "FREQ=MINUTELY;BYSECOND=0,30"},
	{"daily", "FREQ=DAILY"},
	{"weekdays", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"},
	{"monthly-last", "FREQ=MONTHLY;BYMONTHDAY=-1"},
	{"yearly", "FREQ=YEARLY"},
}

// BenchmarkNextOccurrence is the next occurrence of a rule that started
// age ago: its cost must not grow with the age.
func BenchmarkNextOccurrence(b *testing.B) {
	loc, _ := time.LoadLocation("Europe/Lisbon")
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, age := range []time.Duration{time.Hour, 3 * time.Hour, 24 * time.Hour, 365 * 24 * time.Hour} {
		for _, r := range benchRules {
			b.Run(r.name+"/"+age.String(), func(b *testing.B) {
				start := floating(now.Add(-age).In(loc))
				for b.Loop() {
					benchNext(b, r.rule, start, loc, now)
				}
			})
		}
	}
}
func benchNext(b *testing.B, rule string, start time.Time, loc *time.Location, now time.Time) {
	occ, err := Occurrences(context.Background(), rule, start, loc, now, 1)
	if err != nil || len(occ) != 1 {
		b.Fatal(occ, err)
	}
}

// BenchmarkNextRunAged is what a runner tick does for a due recurring
// schedule: its next run after now and the occurrences passed over,
// for a secondly rule started a year ago and one second late.
func BenchmarkNextRunAged(b *testing.B) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, rule := range []string{"FREQ=SECONDLY", "FREQ=MINUTELY", "FREQ=DAILY"} {
		b.Run(rule, func(b *testing.B) {
			s := &kairos.Schedule{TZ: "Europe/Berlin", RRule: rule, Start: now.AddDate(-1, 0, 0).Format(WallLayout), NextRun: now.Add(-time.Second)}
			for b.Loop() {
				if next, _, err := NextRun(context.Background(), s, now); err != nil || next.IsZero() {
					b.Fatal(next, err)
				}
			}
		})
	}
}
