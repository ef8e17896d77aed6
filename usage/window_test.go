package usage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/usage"
)

// zones to hop between: both ends of the clock, half hours, and zones
// with summer time on either side of the equator.
var hopZones = []string{"UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Pacific/Auckland", "Asia/Kolkata",
	"America/St_Johns", "Europe/London", "America/Los_Angeles", "Australia/Lord_Howe", "Etc/GMT+12"}

// newestDay is the zone of zs whose day began most recently at now.
func newestDay(now time.Time, zs []*time.Location) *time.Location {
	best, since := zs[0], 48*time.Hour
	for _, z := range zs {
		l := now.In(z)
		if d := l.Sub(time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, z)); d < since {
			best, since = z, d
		}
	}
	return best
}

// The invariant of the daily window (doc/config.md): whatever zones the
// user sets and when, a window a call was counted in keeps its start
// and end, the next starts no earlier than its end, and every window is
// at least 23 hours long (a local day's shortest). So
//
//	(1) the calls admitted in any 23 hours are at most two windows'
//	    worth: twice the cap and the call that may cross each (here 8
//	    calls of 30 tokens under 100), as for a user who never changes
//	    zone; and
//	(2) the cap is never stuck: a call refused at t had a call admitted
//	    in the 48 hours before it (no window is longer).
//
// Generated sequences: time moves on by up to 7 hours a step, the user
// hops zone often (half the hops to the zone whose day began last, the
// exploit), and the guard is sometimes rebuilt on the same database (a
// restart, or another replica).
func TestZoneChangesCannotReopenADay(t *testing.T) {
	var locs []*time.Location
	for _, z := range hopZones {
		l, err := time.LoadLocation(z)
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, l)
	}
	worst := 0
	// One subtest a seed: its database is closed when the seed is done
	// (60 open at once ran PostgreSQL out of connections).
	for seed := range uint64(60) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 31))
			f := newFixture(t)
			f.pol.Budgets.Spend.DailyTokens = ptr(int64(100))
			rebuild := func() {
				f.guard = usage.New(usage.Config{Store: store.NewUsageStore(f.db), Recorder: store.NewSessionStore(f.db),
					Anchors: store.NewUpdateLog(f.db), Policy: func() *kairos.Policy { return f.pol }, Now: f.clock,
					Zone: func(context.Context, string) *time.Location { return f.zone }})
				f.model.Guard = f.guard
			}
			rebuild()
			now := time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(48*60)) * time.Minute)
			var made, refused []time.Time
			for range 80 {
				now = now.Add(time.Duration(r.IntN(7*60)) * time.Minute)
				f.set(now)
				switch r.IntN(6) {
				case 0, 1:
					f.zone = newestDay(now, locs)
				case 2:
					f.zone = locs[r.IntN(len(locs))]
				case 3:
					rebuild()
				}
				for range 1 + r.IntN(5) {
					err := f.call(context.Background(), "telegram:7")
					switch {
					case err == nil:
						made = append(made, now)
					case isRefusal(err):
						refused = append(refused, now)
					default:
						t.Fatal(err)
					}
				}
			}
			for _, start := range made {
				n := 0
				for _, m := range made {
					if !m.Before(start) && m.Sub(start) < 23*time.Hour {
						n++
					}
				}
				worst = max(worst, n)
				if n > 8 {
					t.Fatalf("seed %d: %d calls of 30 tokens admitted in the 23 hours from %v under a daily cap of 100", seed, n, start)
				}
			}
			for _, at := range refused {
				stuck := true
				for _, m := range made {
					if !m.After(at) && at.Sub(m) < 48*time.Hour {
						stuck = false
					}
				}
				if stuck {
					t.Fatalf("seed %d: refused at %v with no call in the 48 hours before", seed, at)
				}
			}
		})
	}
	t.Logf("the most calls admitted in any 23 hours: %d (bound 8)", worst)
}

// A zone change counts from the next window on: the day reached at 10:30
// in London stays reached after a hop to Auckland, where a new day began
// half an hour ago, until London's midnight; the next window is
// Auckland's, and at least 23 hours long.
func TestZoneChangeTakesEffectAtTheNextWindow(t *testing.T) {
	f := newFixture(t)
	f.zone, _ = time.LoadLocation("Europe/London")
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(30))
	ctx := context.Background()
	f.set(time.Date(2026, 11, 25, 10, 30, 0, 0, time.UTC))
	if err := f.call(ctx, "telegram:7"); err != nil {
		t.Fatal(err)
	}
	f.zone, _ = time.LoadLocation("Pacific/Auckland") // 00:30 on the 26th there
	f.set(time.Date(2026, 11, 25, 11, 30, 0, 0, time.UTC))
	r, ok := kairos.AsSpendRefusal(f.call(ctx, "telegram:7"))
	if !ok || !strings.Contains(r.Message, "resets at midnight (Europe/London), in 12 h 30 min") {
		t.Fatalf("after the hop: %v", r)
	}
	f.set(time.Date(2026, 11, 26, 0, 30, 0, 0, time.UTC)) // London's new day: the window to Auckland's next midnight
	if err := f.call(ctx, "telegram:7"); err != nil {
		t.Fatalf("after London's midnight: %v", err)
	}
	r, ok = kairos.AsSpendRefusal(f.call(ctx, "telegram:7"))
	// Auckland's 27th begins at 11:00 UTC on the 26th, less than 23 h
	// after London's midnight: this window runs to Auckland's 28th.
	if !ok || !strings.Contains(r.Message, "resets at midnight (Pacific/Auckland), in 34 h 30 min") {
		t.Fatalf("the next window: %v", r)
	}
}
