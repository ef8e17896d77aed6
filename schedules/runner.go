package schedules

import (
	"context"
	"fmt"
	"log/slog"
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
	Lease       time.Duration
	Batch       int // schedules claimed per tick; default 500
	MaxAttempts int // deliveries tried before a firing fails; default 5
	Logger      *slog.Logger
}

// Runner claims due schedules and delivers their firings.
type Runner struct {
	cfg  Config
	wake chan struct{}
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
	return &Runner{cfg: cfg, wake: make(chan struct{}, 1)}
}

// Wake makes Run tick now (after a schedule was created or snoozed).
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run ticks every interval until ctx ends.
func (r *Runner) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, _, err := r.Tick(ctx); err != nil && ctx.Err() == nil {
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

// Tick claims due schedules, then delivers pending firings. It returns
// how many it claimed and how many it delivered (sent or reported missed).
func (r *Runner) Tick(ctx context.Context) (claimed, delivered int, err error) {
	claimed, err = r.Claim(ctx)
	if err != nil {
		return claimed, 0, err
	}
	delivered, err = r.DeliverPending(ctx)
	return claimed, delivered, err
}

// DeliverPending leases pending firings and delivers each.
func (r *Runner) DeliverPending(ctx context.Context) (int, error) {
	n := 0
	for {
		now := r.cfg.Now()
		fs, err := r.cfg.Store.LeaseFirings(ctx, now, r.cfg.Lease, r.cfg.Batch)
		if err != nil {
			return n, err
		}
		for _, f := range fs {
			if r.deliver(ctx, f) {
				n++
			}
		}
		if len(fs) < r.cfg.Batch {
			return n, nil
		}
	}
}

func (r *Runner) deliver(ctx context.Context, f *kairos.Firing) bool {
	log := r.cfg.Logger.With("schedule", f.ScheduleID, "firing", f.ID)
	s, err := r.cfg.Store.Schedule(ctx, f.ScheduleID)
	if err != nil {
		log.Error("firing's schedule", "err", err)
		return false
	}
	now := r.cfg.Now()
	d := Delivery{Schedule: s, Firing: f, Late: now.Sub(f.DueAt)}
	if d.Late < 0 {
		d.Late = 0
	}
	if th := r.cfg.LateThreshold(); th > 0 && d.Late > th {
		d.Missed = true
	}
	stop := r.keepLease(ctx, f.ID)
	id, err := r.cfg.Deliver(ctx, d)
	stop()
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
	if err := r.cfg.Store.FinishFiring(ctx, f.ID, status, id, detail, r.cfg.Now()); err != nil {
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
// delivered.
type LeaseRenewer interface {
	RenewFiringLease(ctx context.Context, id int64, until time.Time) (bool, error)
}

// keepLease renews firing id's lease every Lease/3 until the returned
// stop is called.
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
	return func() { close(done); <-finished }
}

// LateNote is how late a firing must be for its message to say so.
const LateNote = time.Minute

// TickInterval is how often Run looks for due schedules: an idle tick
// costs two indexed queries (well under a millisecond on SQLite with
// 100,000 pending schedules), and it bounds the firing latency.
const TickInterval = 250 * time.Millisecond
