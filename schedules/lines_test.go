package schedules_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/schedules"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// renewSpy tells of the lease renewals that reach past after.
type renewSpy struct {
	*store.ScheduleStore
	after   time.Time
	renewed chan int64
}

func (s renewSpy) RenewFiringLease(ctx context.Context, id int64, until time.Time) (bool, error) {
	ok, err := s.ScheduleStore.RenewFiringLease(ctx, id, until)
	if until.After(s.after) {
		select {
		case s.renewed <- id:
		default:
		}
	}
	return ok, err
}

// holdingSink records what it delivers, in order, and holds the firing
// named hold (closing stuck) until finish releases it or its context
// ends.
type holdingSink struct {
	hold           string
	stuck, release chan struct{}
	delivered      chan string
	mu             sync.Mutex
	order          []string
}

func newHoldingSink(hold string) *holdingSink {
	return &holdingSink{hold: hold, stuck: make(chan struct{}), release: make(chan struct{}), delivered: make(chan string, 8)}
}

func (h *holdingSink) deliver(ctx context.Context, d schedules.Delivery) (int64, error) {
	if d.Schedule.Text == h.hold {
		close(h.stuck)
		select {
		case <-h.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	h.mu.Lock()
	h.order = append(h.order, d.Schedule.Text)
	h.mu.Unlock()
	h.delivered <- d.Schedule.Text
	return 1, nil
}

// finish releases the held firing, waits for all of want to be
// delivered and checks their order.
func (h *holdingSink) finish(t *testing.T, want ...string) {
	t.Helper()
	close(h.release)
	for {
		h.mu.Lock()
		n := len(h.order)
		h.mu.Unlock()
		if n >= len(want) {
			break
		}
		recv(t, h.delivered) // returns at once for one delivered earlier
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !slices.Equal(h.order, want) {
		t.Fatalf("delivered %v, want %v", h.order, want)
	}
}

// While one chat's firing is stuck in its delivery (a task waiting for
// the chat's turn), another chat's firing due later is delivered, the
// stuck chat's next firing waits for the stuck one (one chat's firings
// keep their order), and the waiting firing's lease is renewed, so
// another replica finds nothing to take even after the lease would have
// run out.
func TestRunnerDeliversChatsSideBySideInOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := storetest.MustOpenDB(t)
	st := store.NewScheduleStore(db)
	t0 := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	mk := func(chat int64, text string, at time.Time) *kairos.Schedule {
		return mustCreate(t, st, &kairos.Schedule{UserID: chat, ChatID: chat, ThreadKey: "telegram:dm:" + text, Text: text, TZ: "UTC",
			Start: at.Format("2006-01-02T15:04:05"), NextRun: at})
	}
	a1, a2 := mk(1, "A1", t0), mk(1, "A2", t0.Add(time.Second))
	mk(2, "B", t0.Add(time.Hour))

	h := newHoldingSink("A1")
	deliver := h.deliver
	spy := renewSpy{ScheduleStore: st, after: t0.Add(time.Hour), renewed: make(chan int64, 1)}
	const lease = 30 * time.Millisecond // renewed every 10 ms of real time
	r := schedules.NewRunner(schedules.Config{Store: spy, Deliver: deliver, Now: c.Now, Lease: lease, Workers: 2})
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, time.Millisecond) }()
	defer func() { cancel(); <-done }()

	c.Set(t0.Add(2 * time.Second)) // A1 and A2 are due
	recv(t, h.stuck)
	c.Set(t0.Add(time.Hour + time.Second)) // B is due, and A2's lease has long run out unless renewed
	if got := recv(t, h.delivered); got != "B" {
		t.Fatalf("delivered %q while A1 was stuck, want B", got)
	}
	// Renewals after the clock moved put A1's and A2's leases ahead of it.
	want := map[int64]bool{firingOf(t, st, a1.ID): true, firingOf(t, st, a2.ID): true}
	for len(want) > 0 {
		delete(want, recv(t, spy.renewed))
	}
	other := schedules.NewRunner(schedules.Config{Store: st, Deliver: deliver, Now: c.Now, Lease: lease})
	if _, n, err := other.Tick(ctx); n != 0 || err != nil {
		t.Fatalf("another replica delivered %d firings (%v) held by the runner", n, err)
	}
	h.finish(t, "B", "A1", "A2")
}

func firingOf(t *testing.T, st *store.ScheduleStore, scheduleID int64) int64 {
	t.Helper()
	fs, err := st.Firings(context.Background(), scheduleID)
	if err != nil || len(fs) != 1 {
		t.Fatalf("firings of %d: %v %v", scheduleID, fs, err)
	}
	return fs[0].ID
}

// recv waits for a value of ch; the test's deadline only ends a failing
// test.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-testkit.Deadline(t).Done():
		t.Fatal("no value by the test's deadline")
	}
	var zero T
	return zero
}

// A firing let go at shutdown, never tried (it waited behind its chat's
// stuck firing), keeps its tries and its lease ends: another replica
// delivers it at once, and restarts cannot use up its tries. The stuck
// one, tried, keeps its count.
func TestUntriedFiringIsHandedBackAtShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	db := storetest.MustOpenDB(t)
	st := store.NewScheduleStore(db)
	t0 := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	mk := func(text string, at time.Time) *kairos.Schedule {
		return mustCreate(t, st, &kairos.Schedule{UserID: 1, ChatID: 1, ThreadKey: "telegram:dm:1", Text: text, TZ: "UTC",
			Start: at.Format("2006-01-02T15:04:05"), NextRun: at})
	}
	a1, a2 := mk("A1", t0), mk("A2", t0.Add(time.Second))
	stuck := make(chan struct{})
	deliver := func(ctx context.Context, d schedules.Delivery) (int64, error) {
		if d.Schedule.Text == "A1" {
			close(stuck)
			<-ctx.Done()
			return 0, ctx.Err()
		}
		return 1, nil
	}
	c.Set(t0.Add(2 * time.Second)) // both due: claimed and leased in one tick
	r := schedules.NewRunner(schedules.Config{Store: st, Deliver: deliver, Now: c.Now, Lease: time.Minute})
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, time.Hour) }()
	recv(t, stuck)
	cancel()
	<-done

	tries := func(scheduleID int64) int {
		fs, err := st.Firings(context.Background(), scheduleID)
		if err != nil || len(fs) != 1 {
			t.Fatalf("firings of %d: %v %v", scheduleID, fs, err)
		}
		return fs[0].Attempts
	}
	if n1, n2 := tries(a1.ID), tries(a2.ID); n1 != 1 || n2 != 0 {
		t.Fatalf("tries after shutdown: A1 %d, A2 %d; want 1 and 0", n1, n2)
	}
	out := &sink{}
	other := schedules.NewRunner(schedules.Config{Store: st, Deliver: out.deliver, Now: c.Now, Lease: time.Minute})
	if _, n, err := other.Tick(context.Background()); n != 1 || err != nil {
		t.Fatalf("another replica delivered %d firings (%v), want A2 at once", n, err)
	}
	if got := out.all(); got[0].Schedule.Text != "A2" {
		t.Fatalf("delivered %q, want A2", got[0].Schedule.Text)
	}
}

// Tasks stuck in every work slot (one, here) never delay another chat's
// reminder: reminders are delivered in slots of their own. Another task
// still waits for the work slot.
func TestStuckTasksDoNotHoldBackReminders(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	mk := func(chat int64, kind, text string, at time.Time) {
		mustCreate(t, st, &kairos.Schedule{UserID: chat, ChatID: chat, ThreadKey: "telegram:dm:" + text, Text: text, TZ: "UTC",
			Kind: kind, Start: at.Format("2006-01-02T15:04:05"), NextRun: at})
	}
	mk(1, kairos.ScheduleTask, "T1", t0)
	mk(2, kairos.ScheduleReminder, "R2", t0.Add(time.Minute))
	mk(3, kairos.ScheduleTask, "T3", t0.Add(time.Minute))
	h := newHoldingSink("T1")
	r := schedules.NewRunner(schedules.Config{Store: st, Deliver: h.deliver, Now: c.Now, Lease: time.Minute, Workers: 1})
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, time.Hour) }()
	defer func() { cancel(); <-done }()
	recv(t, h.stuck) // T1 holds the one work slot
	c.Set(t0.Add(2 * time.Minute))
	r.Wake() // R2 and T3 are due
	if got := recv(t, h.delivered); got != "R2" {
		t.Fatalf("delivered %q while T1 held the work slot, want R2", got)
	}
	h.finish(t, "R2", "T1", "T3")
}

// Handing back checks the count it was leased with: a firing leased again
// since keeps its count, and one never leased (the terminal's, count 0)
// is left as it is, never counted below zero.
func TestReturnFiringOnlyUndoesItsOwnLease(t *testing.T) {
	ctx := context.Background()
	st := store.NewScheduleStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	s := mustCreate(t, st, &kairos.Schedule{Text: "pills", TZ: "UTC", Start: "2026-05-04T06:00:00", NextRun: t0})
	f, err := st.ClaimFiring(ctx, s, kairos.Advance{Status: kairos.ScheduleDone}, t0)
	if err != nil || f == nil {
		t.Fatalf("claim %v %v", f, err)
	}
	tries := func() int {
		fs, err := st.Firings(ctx, s.ID)
		if err != nil || len(fs) != 1 {
			t.Fatalf("firings %v %v", fs, err)
		}
		return fs[0].Attempts
	}
	if err := st.ReturnFiring(ctx, f.ID, f.Attempts, t0); err != nil || tries() != 0 {
		t.Fatalf("a firing never leased, handed back: %d tries, %v", tries(), err)
	}
	for i := 0; i < 2; i++ { // leased twice: its first lease ran out
		if fs, err := st.LeaseFirings(ctx, t0.Add(time.Duration(i)*time.Hour), time.Minute, 1); err != nil || len(fs) != 1 {
			t.Fatalf("lease %d: %v %v", i, fs, err)
		}
	}
	if err := st.ReturnFiring(ctx, f.ID, 1, t0); err != nil || tries() != 2 {
		t.Fatalf("handed back under an old lease: %d tries, %v", tries(), err)
	}
	if err := st.ReturnFiring(ctx, f.ID, 2, t0.Add(time.Hour)); err != nil || tries() != 1 {
		t.Fatalf("handed back under its own lease: %d tries, %v", tries(), err)
	}
}
