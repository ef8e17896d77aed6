package schedules_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/schedules"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// A schedule stored before COUNT became UNTIL at creation, with a COUNT
// far past MaxCount and more past occurrences than one call may pass
// over, is converted when claimed: it fires, keeps its next occurrence
// and its end, and is stored with UNTIL (no COUNT) from then on.
func TestOldCountRuleConvertedWhenClaimed(t *testing.T) {
	ctx := context.Background()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	now := time.Date(2026, 11, 24, 12, 0, 30, 0, time.UTC)
	start := now.Add(-10 * 24 * time.Hour).Truncate(time.Minute) // 14400 minutes ago
	s := mustCreate(t, st, &kairos.Schedule{Text: "tick", TZ: "UTC", RRule: "FREQ=MINUTELY;COUNT=100000",
		Start: start.Format(schedules.WallLayout), NextRun: now.Add(-30 * time.Second)})
	c := &clock{t: now}
	n, err := newRunner(st, c, &sink{}, time.Hour).Claim(ctx)
	if err != nil || n != 1 {
		t.Fatalf("claimed %d, %v", n, err)
	}
	got, err := st.Schedule(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Truncate(time.Minute).Add(time.Minute); !got.NextRun.Equal(want) || got.Status != kairos.ScheduleActive {
		t.Fatalf("next run %v (%s), want %v", got.NextRun, got.Status, want)
	}
	if strings.Contains(got.RRule, "COUNT") || !strings.Contains(got.RRule, "UNTIL=") {
		t.Fatalf("stored rule %q", got.RRule)
	}
	// The same end: the 100000th occurrence is the last.
	last := start.Add(99999 * time.Minute)
	occ, err := schedules.Occurrences(ctx, got.RRule, start, time.UTC, last.Add(-time.Minute-time.Second), 3)
	if err != nil || len(occ) != 2 || !occ[1].Equal(last) {
		t.Fatalf("occurrences at the end: %v, %v (want the last at %v)", occ, err, last)
	}
}
