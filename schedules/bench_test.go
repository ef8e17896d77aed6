package schedules_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/schedules"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// seed inserts n pending schedules across users, due from first on, one
// every step, in one transaction (setup, not measured).
func seed(b *testing.B, db *store.DB, n, users int, first time.Time, step time.Duration) {
	b.Helper()
	ctx := context.Background()
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	ph := "?"
	if db.Dialect() == store.DialectPostgres {
		ph = "$%d"
	}
	cols := []string{"user_id", "chat_id", "thread_key", "kind", "text", "tz", "rrule", "start_local", "next_run", "status", "created_at", "updated_at"}
	args := make([]string, len(cols))
	for i := range args {
		args[i] = ph
		if ph != "?" {
			args[i] = fmt.Sprintf(ph, i+1)
		}
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO schedules ("+strings.Join(cols, ",")+") VALUES ("+strings.Join(args, ",")+")")
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		u := int64(i%users + 1)
		due := first.Add(time.Duration(i) * step)
		rule := ""
		if i%3 == 0 {
			rule = "FREQ=DAILY"
		}
		if _, err := stmt.ExecContext(ctx, u, u, fmt.Sprintf("telegram:%d", u), kairos.ScheduleReminder, "r", "Europe/Berlin", rule,
			due.In(time.UTC).Format(schedules.WallLayout), due.UnixMilli(), kairos.ScheduleActive, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	stmt.Close()
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDueQueryPerTick is the database cost of one idle tick (the
// usual one) with 100,000 pending schedules of 10,000 users: the due
// query and the pending-firings lease query, nothing due.
func BenchmarkDueQueryPerTick(b *testing.B) {
	db := storetest.MustOpenDB(b)
	now := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	seed(b, db, 100_000, 10_000, now.Add(time.Minute), 30*time.Second)
	st := store.NewScheduleStore(db)
	r := schedules.NewRunner(schedules.Config{Store: st, Now: func() time.Time { return now },
		Deliver: func(context.Context, schedules.Delivery) (int64, error) { return 1, nil }})
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if c, d, err := r.Tick(ctx); err != nil || c+d != 0 {
			b.Fatal(c, d, err)
		}
	}
}

// BenchmarkFiringLatency runs the real ticking loop (TickInterval, as in
// production) over 100,000 pending schedules of which 200 fall due over
// the next 2 s, and reports the latency from due time to delivery.
func BenchmarkFiringLatency(b *testing.B) {
	for range b.N {
		b.StopTimer()
		db := storetest.MustOpenDB(b)
		seed(b, db, 99_800, 10_000, time.Now().Add(time.Hour), 30*time.Second)
		start := time.Now().Add(500 * time.Millisecond)
		seed(b, db, 200, 200, start, 10*time.Millisecond)
		st := store.NewScheduleStore(db)
		var mu sync.Mutex
		var lat []time.Duration
		done := make(chan struct{})
		r := schedules.NewRunner(schedules.Config{Store: st, Deliver: func(_ context.Context, d schedules.Delivery) (int64, error) {
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, time.Since(d.Firing.DueAt))
			if len(lat) == 200 {
				close(done)
			}
			return 1, nil
		}})
		ctx, cancel := context.WithCancel(context.Background())
		b.StartTimer()
		go r.Run(ctx, schedules.TickInterval)
		<-done
		cancel()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Milliseconds()), "p99-ms")
		b.StartTimer()
	}
}
