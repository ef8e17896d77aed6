package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// Due schedules and leased firings in a scope are only the scope's
// (limited in the query). A scoped lease takes only its scope's pending firings: one thread's, or
// all but one channel's; the unscoped lease takes every one.
func TestLeaseFiringsInScope(t *testing.T) {
	ctx := context.Background()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	due := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	threads := []string{
		kairos.ThreadKey(kairos.ChannelCLI, kairos.ChatDM, 1000, 1000, 0),
		kairos.ThreadKey(kairos.ChannelCLI, kairos.ChatDM, 1001, 1001, 0),
		kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, 42, 42, 0),
		kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatGroup, -100, 42, 7),
	}
	ids := map[int64]string{}
	var ss []*kairos.Schedule
	for i, th := range threads { // the terminal's come due last
		s := &kairos.Schedule{UserID: int64(i + 1), ThreadKey: th, Kind: kairos.ScheduleReminder, Text: th, TZ: "UTC",
			Start: due.Format("2006-01-02T15:04:05"), NextRun: due.Add(-time.Duration(i) * time.Minute)}
		if err := st.CreateSchedule(ctx, s, 0); err != nil {
			t.Fatal(err)
		}
		ids[s.ID] = th
		ss = append(ss, s)
	}
	// A batch of one still finds the scope's schedule behind others due
	// earlier (filtering after the query's limit found nothing).
	for scope, want := range map[store.Scope]string{{Thread: threads[0]}: threads[0], {NotChannel: kairos.ChannelCLI}: threads[3]} {
		if got, err := st.DueSchedulesIn(ctx, due, 1, scope); err != nil || len(got) != 1 || got[0].ThreadKey != want {
			t.Fatalf("due in %+v: %v %v, want %s", scope, got, err, want)
		}
	}
	for _, s := range ss {
		if f, err := st.ClaimFiring(ctx, s, kairos.Advance{Status: kairos.ScheduleDone}, due); err != nil || f == nil {
			t.Fatalf("claim %v %v", f, err)
		}
	}
	lease := func(at time.Duration, scope store.Scope) []string {
		fs, err := st.LeaseFiringsIn(ctx, due.Add(at), time.Minute, 10, scope)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, ids[f.ScheduleID])
		}
		return out
	}
	if got := lease(0, store.Scope{Thread: threads[0]}); len(got) != 1 || got[0] != threads[0] {
		t.Fatalf("one thread's: %v", got)
	}
	if got := lease(0, store.Scope{NotChannel: kairos.ChannelCLI}); len(got) != 2 || got[0] != threads[3] || got[1] != threads[2] {
		t.Fatalf("all but the terminal's: %v", got)
	}
	if got := lease(0, store.Scope{}); len(got) != 1 || got[0] != threads[1] {
		t.Fatalf("unscoped, after the others were leased: %v", got)
	}
	if got := lease(2*time.Minute, store.Scope{}); len(got) != 4 {
		t.Fatalf("unscoped, once the leases ran out: %v", got)
	}
}
