package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// The per-user cap holds under concurrent creates (on PostgreSQL too,
// where READ COMMITTED would let every transaction count the same room),
// and a create keyed by a taken Ref happens once.
func TestScheduleCapUnderConcurrentCreates(t *testing.T) {
	ctx := context.Background()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	const max, tries = 5, 24
	at := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	mk := func(ref string) *kairos.Schedule {
		return &kairos.Schedule{Ref: ref, UserID: 7, ChatID: 7, ThreadKey: "agent:main:telegram:dm:7", Kind: kairos.ScheduleReminder,
			Text: "x", TZ: "UTC", NextRun: at, Start: "2030-01-01T09:00:00"}
	}
	var wg sync.WaitGroup
	errs := make(chan error, tries)
	start := make(chan struct{})
	for range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- st.CreateSchedule(ctx, mk(""), max)
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		switch kairos.ErrorCode(err) {
		case "":
			ok++
		case kairos.ECONFLICT:
		default:
			t.Fatalf("create: %v", err)
		}
	}
	list, err := st.Schedules(ctx, kairos.ScheduleFilter{UserID: 7})
	if err != nil || ok != max || len(list) != max {
		t.Fatalf("%d creates succeeded, %d active (%v); the cap is %d", ok, len(list), err, max)
	}

	// One Ref, many concurrent creates: one row.
	other := store.NewScheduleStore(storetest.MustOpenDB(t))
	wins := make(chan bool, tries)
	for range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wins <- other.CreateSchedule(ctx, mk("snoozekey"), 0) == nil
		}()
	}
	wg.Wait()
	close(wins)
	n := 0
	for w := range wins {
		if w {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d creates with one ref succeeded", n)
	}
}
