package schedules

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairos-agent/kairos"
)

// Delivery is one firing handed to Deliver.
type Delivery struct {
	Schedule *kairos.Schedule
	Firing   *kairos.Firing
	// Late is how long after its due time the firing is delivered; Missed
	// says it is older than the late threshold and is only reported.
	Late   time.Duration
	Missed bool
}

// Config configures a Runner.
type Config struct {
	Store kairos.ScheduleStore
	// Deliver sends a firing (the reminder, the task's answer, the cell's
	// notification, or the missed report) and returns the message id. It
	// must be idempotent per firing (the reply outbox key
	// "schedule:<firing id>"): a firing whose lease ran out is handed out
	// again.
	Deliver func(ctx context.Context, d Delivery) (messageID int64, err error)
	Now     func() time.Time
	// LateThreshold returns the policy's late threshold: a firing older
	// than that is reported as missed. <= 0 never misses.
	LateThreshold func() time.Duration
	// ZoneFor returns the zone a recurring schedule's next occurrences
	// are expanded in when it differs from the schedule's own (policy
	// schedules.travel: follow_user returns the user's current Session
	// TZ, keep_zone ""). nil keeps every schedule's zone.
	ZoneFor func(ctx context.Context, s *kairos.Schedule) string
	// Lease is how long a firing stays with the process delivering it
	// without renewal (default DefaultLease): a delivery renews it every
	// Lease/3 when the store is a LeaseRenewer, so a long task keeps it,
	// and a process killed mid-delivery gives it up within Lease.
	Lease time.Duration
	// Batch is how many schedules a tick claims at once and how many
	// firings the runner holds (leased, waiting or being delivered) at
	// once; default 500.
	Batch       int
	MaxAttempts int // deliveries tried before a firing fails; default 5
	// Workers bounds how many tasks and watching cells are delivered at
	// once, and apart from them how many reminders (default 8 each):
	// firings of different chats are delivered side by side, one chat's
	// in due order. A task waiting for its chat's turn holds back only its
	// own chat's later firings, and tasks stuck in every work slot never
	// delay another chat's reminder.
	Workers int
	Logger  *slog.Logger
}

// Runner claims due schedules and delivers their firings.
type Runner struct {
	cfg     Config
	wake    chan struct{}
	work    chan struct{} // one per task or watching cell under way
	notices chan struct{} // one per reminder under way

	mu    sync.Mutex
	held  map[int64]bool   // firings leased here and not yet let go
	lines map[string]*line // chats whose firings are being delivered
	busy  sync.WaitGroup   // one per line's drainer
	sent  atomic.Int64     // firings delivered (sent or reported missed)
}

// NewRunner returns a runner; call Tick, or Run for a ticking loop.
func NewRunner(cfg Config) *Runner {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LateThreshold == nil {
		cfg.LateThreshold = func() time.Duration { return 0 }
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	return &Runner{cfg: cfg, wake: make(chan struct{}, 1), work: make(chan struct{}, cfg.Workers),
		notices: make(chan struct{}, cfg.Workers), held: map[int64]bool{}, lines: map[string]*line{}}
}

// Wake makes Run tick now (after a schedule was created or snoozed).
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run ticks every interval until ctx ends, then waits for the
// deliveries under way (they see ctx end). A tick claims due schedules
// and hands the pending firings to their chats' lines without waiting
// for them, so a long task never holds back the next tick.
func (r *Runner) Run(ctx context.Context, interval time.Duration) {
	defer r.busy.Wait()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_, err := r.Claim(ctx)
		if err == nil {
			_, _, err = r.dispatch(ctx)
		}
		if err != nil && ctx.Err() == nil {
			r.cfg.Logger.Error("schedule tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
		}
	}
}

// Claim advances every due schedule and records its firing; it returns
// how many firings this process claimed.
func (r *Runner) Claim(ctx context.Context) (int, error) {
	claimed := 0
	for {
		now := r.cfg.Now()
		due, err := r.cfg.Store.DueSchedules(ctx, now, r.cfg.Batch)
		if err != nil {
			return claimed, err
		}
		before := claimed
		for _, s := range due {
			adv := kairos.Advance{Status: kairos.ScheduleDone}
			exp := s
			if r.cfg.ZoneFor != nil && s.RRule != "" {
				if z := r.cfg.ZoneFor(ctx, s); z != "" && z != s.TZ {
					if _, err := time.LoadLocation(z); err == nil {
						cp := *s
						cp.TZ = z // same wall-clock times, the user's new zone
						exp = &cp
					}
				}
			}
			next, skipped, until, err := nextRun(ctx, exp, now)
			if err != nil {
				r.cfg.Logger.Error("schedule recurrence", "schedule", s.ID, "err", err)
				if kairos.ErrorCode(err) != kairos.EINVALID {
					continue // out of budget or cancelled: the next tick tries again; only a bad rule ends it
				}
			}
			if !next.IsZero() {
				adv = kairos.Advance{NextRun: next, Status: kairos.ScheduleActive, Skipped: skipped, RRule: until}
				if exp.TZ != s.TZ {
					adv.TZ = exp.TZ
				}
			}
			f, err := r.cfg.Store.ClaimFiring(ctx, s, adv, now)
			if err != nil {
				return claimed, err
			}
			if f != nil {
				claimed++
			}
		}
		if len(due) < r.cfg.Batch || claimed == before { // a whole batch left for the next tick: no spinning
			return claimed, nil
		}
	}
}

// Tick claims due schedules, then delivers pending firings and waits for
// them. It returns how many it claimed and how many it delivered (sent or
// reported missed). Not for use while Run runs.
func (r *Runner) Tick(ctx context.Context) (claimed, delivered int, err error) {
	claimed, err = r.Claim(ctx)
	if err != nil {
		return claimed, 0, err
	}
	delivered, err = r.DeliverPending(ctx)
	return claimed, delivered, err
}

// DeliverPending leases pending firings, delivers them (chats side by
// side, each chat's in order) and waits for them. Not for use while Run
// runs.
func (r *Runner) DeliverPending(ctx context.Context) (int, error) {
	before := r.sent.Load()
	for {
		n, limit, err := r.dispatch(ctx)
		r.busy.Wait()
		if err != nil || n < limit || limit <= 0 {
			return int(r.sent.Load() - before), err
		}
	}
}

func (r *Runner) deliver(ctx context.Context, j *job) bool {
	f := j.f
	log := r.cfg.Logger.With("schedule", f.ScheduleID, "firing", f.ID)
	s, err := r.cfg.Store.Schedule(ctx, f.ScheduleID)
	if err != nil {
		log.Error("firing's schedule", "err", err)
		return false
	}
	// Late counts from when the firing was leased: time spent waiting for
	// its chat's turn is not time Kairos was down.
	d := Delivery{Schedule: s, Firing: f, Late: j.leased.Sub(f.DueAt)}
	if d.Late < 0 {
		d.Late = 0
	}
	if th := r.cfg.LateThreshold(); th > 0 && d.Late > th {
		d.Missed = true
	}
	id, err := r.cfg.Deliver(ctx, d)
	j.stop()
	now := r.cfg.Now()
	// What happened is recorded even when the runner is stopping: a
	// firing delivered as ctx ended must not be delivered again.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err != nil {
		if f.Attempts >= r.cfg.MaxAttempts {
			log.Error("firing failed for good", "attempts", f.Attempts, "err", err)
			if ferr := r.cfg.Store.FinishFiring(ctx, f.ID, kairos.FiringFailed, 0, err.Error(), now); ferr != nil {
				log.Error("finish firing", "err", ferr)
			}
			return false
		}
		log.Warn("firing delivery failed; retried when its lease ends", "attempt", f.Attempts, "err", err)
		return false
	}
	status, detail := kairos.FiringSent, ""
	if d.Missed {
		status, detail = kairos.FiringMissed, fmt.Sprintf("late by %s", d.Late.Round(time.Second))
	} else if d.Late >= LateNote {
		detail = fmt.Sprintf("late by %s", d.Late.Round(time.Second))
	}
	if err := r.cfg.Store.FinishFiring(ctx, f.ID, status, id, detail, now); err != nil {
		log.Error("finish firing", "err", err)
	}
	return true
}

// DefaultLease is the firing lease of a delivery: short, since a live
// delivery renews it (a killed process's firing is retried within it,
// issue 20), without a LeaseRenewer it bounds how long a delivery may
// take before another process retries it (the reply outbox keeps that
// retry from sending twice).
const DefaultLease = 30 * time.Second

// LeaseRenewer is a store that can extend the lease of a firing being
// delivered, and hand back one never tried.
type LeaseRenewer interface {
	RenewFiringLease(ctx context.Context, id int64, until time.Time) (bool, error)
	// ReturnFiring hands back a firing leased as try number attempts and
	// never tried (its runner stopped first): the try is not counted and
	// the firing may be leased again at once. Nothing happens when it was
	// leased again since.
	ReturnFiring(ctx context.Context, id int64, attempts int, now time.Time) error
}

// keepLease renews firing id's lease every Lease/3 until the returned
// stop is called (idempotent).
func (r *Runner) keepLease(ctx context.Context, id int64) (stop func()) {
	lr, ok := r.cfg.Store.(LeaseRenewer)
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(r.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := lr.RenewFiringLease(ctx, id, r.cfg.Now().Add(r.cfg.Lease)); err != nil && ctx.Err() == nil {
					r.cfg.Logger.Warn("renew firing lease", "firing", id, "err", err)
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}

// LateNote is how late a firing must be for its message to say so.
const LateNote = time.Minute

// TickInterval is how often Run looks for due schedules: an idle tick
// costs two indexed queries (well under a millisecond on SQLite with
// 100,000 pending schedules), and it bounds the firing latency.
const TickInterval = 250 * time.Millisecond
