package schedules_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/schedules"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

type sink struct {
	mu   sync.Mutex
	got  []schedules.Delivery
	fail atomic.Bool
}

func (s *sink) deliver(_ context.Context, d schedules.Delivery) (int64, error) {
	if s.fail.Load() {
		return 0, errors.New("telegram down")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, d)
	return int64(len(s.got)), nil
}

func (s *sink) all() []schedules.Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]schedules.Delivery(nil), s.got...)
}

func newRunner(st kairos.ScheduleStore, c *clock, out *sink, late time.Duration) *schedules.Runner {
	return schedules.NewRunner(schedules.Config{Store: st, Deliver: out.deliver, Now: c.Now,
		LateThreshold: func() time.Duration { return late }, Lease: time.Minute})
}

func mustCreate(t testing.TB, st kairos.ScheduleStore, s *kairos.Schedule) *kairos.Schedule {
	t.Helper()
	if s.UserID == 0 {
		s.UserID = 7
	}
	if s.ThreadKey == "" {
		s.ThreadKey = "telegram:7"
	}
	if s.Kind == "" {
		s.Kind = kairos.ScheduleReminder
	}
	if err := st.CreateSchedule(context.Background(), s, 0); err != nil {
		t.Fatal(err)
	}
	return s
}

// A daily 08:00 reminder in Europe/Berlin fires at 08:00 local on each
// side of the spring transition, once per day, and a one-off fires once.
func TestRunnerFiresInTheUsersZone(t *testing.T) {
	ctx := context.Background()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	berlin, _ := time.LoadLocation("Europe/Berlin")
	c := &clock{t: time.Date(2026, 3, 28, 7, 0, 0, 0, berlin)}
	out := &sink{}
	r := newRunner(st, c, out, time.Hour)
	daily := mustCreate(t, st, &kairos.Schedule{Text: "stretch", TZ: "Europe/Berlin", RRule: "FREQ=DAILY",
		Start: "2026-03-28T08:00:00", NextRun: time.Date(2026, 3, 28, 8, 0, 0, 0, berlin)})
	once := mustCreate(t, st, &kairos.Schedule{Text: "call mum", TZ: "Europe/Berlin",
		Start: "2026-03-29T09:15:00", NextRun: time.Date(2026, 3, 29, 9, 15, 0, 0, berlin)})

	var fired []string
	for m := c.Now(); m.Before(time.Date(2026, 3, 30, 12, 0, 0, 0, berlin)); m = m.Add(5 * time.Minute) {
		c.Set(m)
		if _, _, err := r.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range out.all() {
		fired = append(fired, d.Schedule.Text+"@"+d.Firing.DueAt.In(berlin).Format(time.RFC3339))
		if d.Late > 5*time.Minute || d.Missed {
			t.Fatalf("late delivery %+v", d)
		}
	}
	want := []string{"stretch@2026-03-28T08:00:00+01:00", "stretch@2026-03-29T08:00:00+02:00", "call mum@2026-03-29T09:15:00+02:00", "stretch@2026-03-30T08:00:00+02:00"}
	if len(fired) != len(want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	for i := range want {
		if fired[i] != want[i] {
			t.Fatalf("fired %v, want %v", fired, want)
		}
	}
	s, _ := st.Schedule(ctx, once.ID)
	if s.Status != kairos.ScheduleDone {
		t.Fatalf("one-off status %q", s.Status)
	}
	s, _ = st.Schedule(ctx, daily.ID)
	if s.Status != kairos.ScheduleActive || !s.NextRun.Equal(time.Date(2026, 3, 31, 8, 0, 0, 0, berlin)) {
		t.Fatalf("daily after: %+v", s)
	}
}

// After downtime a due reminder fires once with how late it is; a
// recurring one fires once for all the occurrences it missed; one older
// than the late threshold is reported as missed.
func TestRunnerCatchUpAfterDowntime(t *testing.T) {
	ctx := context.Background()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	c := &clock{t: t0.Add(3 * time.Hour)} // came back three hours later
	out := &sink{}
	r := newRunner(st, c, out, 12*time.Hour)
	mustCreate(t, st, &kairos.Schedule{Text: "late one", TZ: "UTC", Start: "2026-05-04T06:00:00", NextRun: t0})
	mustCreate(t, st, &kairos.Schedule{Text: "hourly", TZ: "UTC", RRule: "FREQ=HOURLY", Start: "2026-05-04T06:30:00", NextRun: t0.Add(30 * time.Minute)})
	mustCreate(t, st, &kairos.Schedule{Text: "ancient", TZ: "UTC", Start: "2026-05-02T06:00:00", NextRun: t0.Add(-48 * time.Hour)})
	claimed, delivered, err := r.Tick(ctx)
	if err != nil || claimed != 3 || delivered != 3 {
		t.Fatalf("claimed %d delivered %d err %v", claimed, delivered, err)
	}
	got := map[string]schedules.Delivery{}
	for _, d := range out.all() {
		got[d.Schedule.Text] = d
	}
	if d := got["late one"]; d.Late != 3*time.Hour || d.Missed {
		t.Fatalf("late one %+v", d)
	}
	if d := got["hourly"]; d.Firing.Skipped != 2 || d.Missed {
		t.Fatalf("hourly %+v (want 2 skipped: 07:30, 08:30)", d.Firing)
	}
	if d := got["ancient"]; !d.Missed {
		t.Fatalf("ancient not missed: %+v", d)
	}
	if _, delivered, _ := r.Tick(ctx); delivered != 0 {
		t.Fatalf("second tick delivered %d", delivered)
	}
}

// A crash after the claim committed and before the send (the process
// dies; its lease runs out) loses nothing: the next process delivers the
// firing once. A failing send is retried, never duplicated.
func TestRunnerCrashBetweenClaimAndSend(t *testing.T) {
	ctx := context.Background()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	out := &sink{}
	mustCreate(t, st, &kairos.Schedule{Text: "pills", TZ: "UTC", Start: "2026-05-04T06:00:00", NextRun: t0})
	dead := newRunner(st, c, &sink{}, time.Hour)
	if n, err := dead.Claim(ctx); err != nil || n != 1 {
		t.Fatalf("claim %d %v", n, err)
	}
	// The dead process had leased it too, then vanished.
	if fs, err := st.LeaseFirings(ctx, c.Now(), time.Minute, 10); err != nil || len(fs) != 1 {
		t.Fatalf("lease %v %v", fs, err)
	}
	r := newRunner(st, c, out, time.Hour)
	if _, d, _ := r.Tick(ctx); d != 0 {
		t.Fatal("delivered under another's lease")
	}
	out.fail.Store(true)
	c.Set(t0.Add(61 * time.Second))
	if _, d, _ := r.Tick(ctx); d != 0 {
		t.Fatal("delivered while failing")
	}
	out.fail.Store(false)
	c.Set(t0.Add(3 * time.Minute))
	if _, d, err := r.Tick(ctx); d != 1 || err != nil {
		t.Fatalf("after restart delivered %d %v", d, err)
	}
	c.Set(t0.Add(10 * time.Minute))
	r.Tick(ctx)
	if n := len(out.all()); n != 1 {
		t.Fatalf("%d deliveries", n)
	}
}

func TestClaimOnceAcrossConcurrentRunners(t *testing.T) {
	testClaimOnce(t, storetest.MustOpenDB(t), nil)
}

// Two replicas on one PostgreSQL database: each occurrence fires on
// exactly one of them.
func TestTwoReplicasOnPostgresFireOnce(t *testing.T) {
	base := os.Getenv(storetest.EnvURL)
	if base == "" {
		t.Skip(storetest.EnvURL + " not set")
	}
	url := storetest.FreshSchemaURL(t, base)
	open := func() *store.DB {
		db, err := store.Open(context.Background(), store.Config{DataDir: t.TempDir(), DatabaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a := open()
	testClaimOnce(t, a, open())
}

func testClaimOnce(t *testing.T, a, b *store.DB) {
	ctx := context.Background()
	sa := store.NewScheduleStore(a)
	sb := sa
	if b != nil {
		sb = store.NewScheduleStore(b)
	}
	t0 := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	const n = 40
	for i := range n {
		rule := ""
		if i%2 == 0 {
			rule = "FREQ=MINUTELY"
		}
		mustCreate(t, sa, &kairos.Schedule{UserID: int64(i + 1), Text: "x", TZ: "UTC", RRule: rule, Start: "2026-05-04T06:00:00", NextRun: t0})
	}
	c := &clock{t: t0}
	out := &sink{}
	var wg sync.WaitGroup
	for k := range 4 {
		st := sa
		if k%2 == 1 {
			st = sb
		}
		r := newRunner(st, c, out, time.Hour)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, _, err := r.Tick(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := map[int64]int{}
	for _, d := range out.all() {
		seen[d.Firing.ID]++
	}
	if len(out.all()) != n {
		t.Fatalf("%d deliveries for %d schedules", len(out.all()), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("firing %d delivered %d times", id, k)
		}
	}
}

func TestScheduleStoreLimitsAndCancel(t *testing.T) {
	ctx := context.Background()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	var ids []int64
	for range 2 {
		s := &kairos.Schedule{UserID: 9, ThreadKey: "telegram:9", Kind: kairos.ScheduleReminder, TZ: "UTC", Start: "2026-05-04T06:00:00", NextRun: t0}
		if err := st.CreateSchedule(ctx, s, 2); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	err := st.CreateSchedule(ctx, &kairos.Schedule{UserID: 9, ThreadKey: "telegram:9", Kind: kairos.ScheduleReminder, TZ: "UTC", Start: "x", NextRun: t0}, 2)
	if kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("third schedule: %v", err)
	}
	if err := st.CreateSchedule(ctx, &kairos.Schedule{UserID: 9, ThreadKey: "t", Kind: "alarm", TZ: "UTC", NextRun: t0}, 0); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("bad kind: %v", err)
	}
	if err := st.CancelSchedule(ctx, ids[0], 10); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("cancel by another user: %v", err)
	}
	if err := st.CancelSchedule(ctx, ids[0], 9); err != nil {
		t.Fatal(err)
	}
	if err := st.CancelSchedule(ctx, ids[0], 9); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("second cancel: %v", err)
	}
	list, err := st.Schedules(ctx, kairos.ScheduleFilter{UserID: 9})
	if err != nil || len(list) != 1 || list[0].ID != ids[1] {
		t.Fatalf("list %+v %v", list, err)
	}
	due, _ := st.DueSchedules(ctx, t0, 10)
	if len(due) != 1 {
		t.Fatalf("cancelled one is due: %+v", due)
	}
	// Snooze: a stale version is refused.
	s := list[0]
	if err := st.Reschedule(ctx, s.ID, s.Version, t0.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := st.Reschedule(ctx, s.ID, s.Version, t0.Add(time.Hour)); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("stale reschedule: %v", err)
	}
	got, _ := st.Schedule(ctx, s.ID)
	if !got.NextRun.Equal(t0.Add(10 * time.Minute)) {
		t.Fatalf("snoozed to %v", got.NextRun)
	}
}

// schedules.travel follow_user: a daily 08:00 set in Berlin fires at
// 08:00 in the user's new zone once they moved; keep_zone (no ZoneFor)
// stays on Berlin time.
func TestRunnerTravelFollowUser(t *testing.T) {
	ctx := context.Background()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	berlin, _ := time.LoadLocation("Europe/Berlin")
	ny, _ := time.LoadLocation("America/New_York")
	c := &clock{t: time.Date(2026, 6, 1, 8, 0, 30, 0, berlin)}
	s := mustCreate(t, st, &kairos.Schedule{Text: "walk", TZ: "Europe/Berlin", RRule: "FREQ=DAILY", Start: "2026-06-01T08:00:00",
		NextRun: time.Date(2026, 6, 1, 8, 0, 0, 0, berlin)})
	r := schedules.NewRunner(schedules.Config{Store: st, Deliver: (&sink{}).deliver, Now: c.Now,
		ZoneFor: func(context.Context, *kairos.Schedule) string { return "America/New_York" }})
	if _, _, err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Schedule(ctx, s.ID)
	if got.TZ != "America/New_York" || !got.NextRun.Equal(time.Date(2026, 6, 1, 8, 0, 0, 0, ny)) {
		t.Fatalf("after the move: %s %v", got.TZ, got.NextRun.In(ny))
	}
}

// TestDeliveredFiringIsRecordedWhileStopping: a firing that was delivered
// as the runner stopped (its context cancelled during the delivery) is
// still recorded as sent, so it is never delivered again (a door with no
// outbox, the terminal, would show it twice).
func TestDeliveredFiringIsRecordedWhileStopping(t *testing.T) {
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	s := mustCreate(t, st, &kairos.Schedule{Text: "pills", TZ: "UTC", Start: "2026-05-04T06:00:00", NextRun: t0})
	ctx, stop := context.WithCancel(context.Background())
	r := schedules.NewRunner(schedules.Config{Store: st, Now: c.Now, Lease: time.Minute,
		LateThreshold: func() time.Duration { return time.Hour },
		Deliver: func(context.Context, schedules.Delivery) (int64, error) {
			stop() // the process is stopping as the message goes out
			return 0, nil
		}})
	r.Tick(ctx)
	fs, err := st.Firings(context.Background(), s.ID)
	if err != nil || len(fs) != 1 || fs[0].Status != kairos.FiringSent {
		t.Fatalf("a delivered firing after a stop: %+v %v", fs, err)
	}
}
