package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/robfig/cron/v3"
)

// Job names.
const (
	JobDivide       = "sessions.divide"
	JobRollup       = "summaries.rollup"
	JobClockCompact = "clock.compact"
	JobCodePrune    = "code_executions.prune"
	JobPrune        = "bookkeeping.prune"
	JobJournalPrune = "job_runs.prune"
	JobBackup       = "backup"
)

// ErrSkip, wrapped in a job's error, journals the run as skipped
// (nothing to do by configuration) rather than failed.
var ErrSkip = errors.New("skipped")

// Job is one scheduled job.
type Job struct {
	Name string
	// Spec returns the job's robfig/cron schedule: five fields, a
	// descriptor such as "@every 1m" or "@daily", optionally prefixed
	// with CRON_TZ=Zone. It is read at every tick, so a policy reload
	// reschedules the job; "" disables it.
	Spec func() string
	// AtStart runs the job at the first tick after Start (catch-up after
	// downtime) instead of waiting for its first scheduled time.
	AtStart bool
	// Run does the work; the detail it returns is journaled.
	Run func(ctx context.Context, now time.Time) (detail string, err error)
}

// Every returns a constant spec.
func Every(spec string) func() string { return func() string { return spec } }

type jobState struct {
	job     Job
	seen    bool // spec read at least once
	spec    string
	sched   cron.Schedule
	next    time.Time // zero until the first tick
	running atomic.Bool
}

// Scheduler runs jobs on one ticker; see the package documentation.
type Scheduler struct {
	cfg      *Config
	log      *slog.Logger
	sessions *Sessions

	mu   sync.Mutex
	jobs []*jobState

	runs   sync.WaitGroup // job runs in flight
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a scheduler with the standard jobs: sessions.divide
// (@every 1m), summaries.rollup (@every 5m), job_runs.prune (@every 24h),
// and, when their hooks are set, clock.compact (@every 1h),
// code_executions.prune (@every 6h) and backup (sessions.backup_schedule).
// All but the backup run at the first tick too, which is the catch-up
// after downtime. Nothing runs before Start or RunDue.
func New(cfg Config) *Scheduler {
	cfg.defaults()
	s := &Scheduler{cfg: &cfg, log: cfg.Logger.With("component", "jobs")}
	s.sessions = &Sessions{cfg: s.cfg}
	s.Add(Job{Name: JobDivide, Spec: Every("@every 1m"), AtStart: true, Run: func(ctx context.Context, now time.Time) (string, error) {
		n, err := s.sessions.Divide(ctx, now)
		return fmt.Sprintf("rolled over %d sessions", n), err
	}})
	s.Add(Job{Name: JobRollup, Spec: Every("@every 5m"), AtStart: true, Run: func(ctx context.Context, now time.Time) (string, error) {
		res, err := s.sessions.Rollup(ctx, now)
		return res.String(), err
	}})
	if cfg.CompactClock != nil {
		s.Add(Job{Name: JobClockCompact, Spec: Every("@every 1h"), AtStart: true, Run: func(ctx context.Context, now time.Time) (string, error) {
			return "", cfg.CompactClock(ctx, now)
		}})
	}
	if cfg.Code != nil {
		s.Add(Job{Name: JobCodePrune, Spec: Every("@every 6h"), AtStart: true, Run: s.pruneCode})
	}
	if cfg.Prune != nil {
		s.Add(Job{Name: JobPrune, Spec: Every("@every 1h"), AtStart: true, Run: s.pruneFinished})
	}
	if cfg.Journal != nil {
		s.Add(Job{Name: JobJournalPrune, Spec: Every("@every 24h"), AtStart: true, Run: func(ctx context.Context, now time.Time) (string, error) {
			n, err := cfg.Journal.PruneJobRuns(ctx, now.Add(-cfg.JournalRetention))
			return fmt.Sprintf("deleted %d runs", n), err
		}})
	}
	if cfg.Backup != nil && cfg.BackupDir != "" {
		s.Add(Job{Name: JobBackup, Spec: func() string { return strings.TrimSpace(s.cfg.Policy().Sessions.BackupSchedule) }, Run: s.backup})
	}
	return s
}

// Sessions returns the session service (End, Rollover, Divide, Rollup)
// that shares the scheduler's per-thread locks.
func (s *Scheduler) Sessions() *Sessions { return s.sessions }

// Add registers a job (after the standard ones; a job with the same name
// replaces the earlier one). Jobs due at the same tick run in the order
// they were added.
func (s *Scheduler) Add(j Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, st := range s.jobs {
		if st.job.Name == j.Name {
			s.jobs[i] = &jobState{job: j}
			return
		}
	}
	s.jobs = append(s.jobs, &jobState{job: j})
}

// Jobs returns the registered job names in order.
func (s *Scheduler) Jobs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.jobs))
	for i, st := range s.jobs {
		out[i] = st.job.Name
	}
	return out
}

// refresh re-reads a job's spec; it reports whether the job is enabled.
// The caller holds s.mu.
func (s *Scheduler) refresh(st *jobState, now time.Time) bool {
	spec := ""
	if st.job.Spec != nil {
		spec = strings.TrimSpace(st.job.Spec())
	}
	if st.seen && spec == st.spec {
		return st.sched != nil
	}
	first := !st.seen
	st.seen, st.spec, st.sched, st.next = true, spec, nil, time.Time{}
	if spec == "" {
		return false
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		s.log.Error("bad job schedule; the job is off until it is fixed", "job", st.job.Name, "spec", spec, "err", err)
		return false
	}
	st.sched = sched
	if first && st.job.AtStart {
		st.next = now
	} else {
		st.next = sched.Next(now)
	}
	return true
}

// takeDue returns the jobs due at now and moves their next time on.
func (s *Scheduler) takeDue(now time.Time) []*jobState {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []*jobState
	for _, st := range s.jobs {
		if !s.refresh(st, now) || st.next.After(now) {
			continue
		}
		due = append(due, st)
		st.next = st.sched.Next(now)
	}
	return due
}

// untilNext returns how long to wait for the earliest due job, at most
// max (so schedule changes and clock jumps are noticed).
func (s *Scheduler) untilNext(now time.Time, max time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	wait := max
	for _, st := range s.jobs {
		if !s.refresh(st, now) {
			continue
		}
		if d := st.next.Sub(now); d < wait {
			wait = d
		}
	}
	return wait
}

// RunDue runs, one after the other, the jobs due at now (a tick), and
// returns their journal entries. Start calls it on its ticker; tests call
// it with any now.
func (s *Scheduler) RunDue(ctx context.Context, now time.Time) []*kairos.JobRun {
	due := s.takeDue(now)
	s.runs.Add(1)
	defer s.runs.Done()
	return s.runAll(ctx, due, now)
}

func (s *Scheduler) runAll(ctx context.Context, due []*jobState, now time.Time) []*kairos.JobRun {
	out := make([]*kairos.JobRun, 0, len(due))
	for _, st := range due {
		out = append(out, s.run(ctx, st, now))
	}
	return out
}

// RunJob runs one job now whatever its schedule (an operator's command,
// tests). ENOTFOUND for an unknown job.
func (s *Scheduler) RunJob(ctx context.Context, name string, now time.Time) (*kairos.JobRun, error) {
	s.mu.Lock()
	var st *jobState
	for _, j := range s.jobs {
		if j.job.Name == name {
			st = j
		}
	}
	s.mu.Unlock()
	if st == nil {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no job %q", name)
	}
	s.runs.Add(1)
	defer s.runs.Done()
	return s.run(ctx, st, now), nil
}

// run runs a job once: skipped when it is still running, a panic
// recovered; the run is logged and journaled.
func (s *Scheduler) run(ctx context.Context, st *jobState, now time.Time) *kairos.JobRun {
	r := &kairos.JobRun{Job: st.job.Name, StartedAt: now}
	if !st.running.CompareAndSwap(false, true) {
		r.EndedAt, r.Outcome, r.Detail = now, kairos.JobSkipped, "the previous run is still in progress"
		s.log.Warn("job skipped: previous run still in progress", "job", r.Job)
		s.journal(ctx, r)
		return r
	}
	defer st.running.Store(false)
	begin := time.Now() // elapsed time only; the journal's times follow now
	detail, err, panicked := s.call(ctx, st.job, now)
	r.EndedAt = now.Add(time.Since(begin)).Round(time.Millisecond)
	if r.EndedAt.Before(now) {
		r.EndedAt = now
	}
	r.Detail = detail
	switch {
	case panicked:
		r.Outcome = kairos.JobPanic
	case errors.Is(err, ErrSkip):
		r.Outcome = kairos.JobSkipped
		r.Detail = joinDetail(detail, err.Error())
	case err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled):
		// Cut short by Stop (shutdown, or a start that failed): not a
		// failure, and no ERROR line ahead of the real cause.
		r.Outcome = kairos.JobSkipped
		r.Detail = joinDetail(detail, "interrupted: the scheduler stopped")
		s.log.Info("job interrupted: the scheduler stopped", "job", r.Job)
	case err != nil:
		r.Outcome = kairos.JobError
		r.Detail = joinDetail(detail, err.Error())
		s.log.Error("job failed", "job", r.Job, "err", err)
	default:
		r.Outcome = kairos.JobOK
		s.log.Debug("job done", "job", r.Job, "detail", detail)
	}
	s.journal(ctx, r)
	return r
}

func (s *Scheduler) call(ctx context.Context, j Job, now time.Time) (detail string, err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			detail, err, panicked = fmt.Sprintf("panic: %v", p), nil, true
			s.log.Error("job panicked", "job", j.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	detail, err = j.Run(ctx, now)
	return detail, err, false
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + ": " + b
}

func (s *Scheduler) journal(ctx context.Context, r *kairos.JobRun) {
	if s.cfg.Journal == nil {
		return
	}
	// A run that ended because of shutdown is still journaled.
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.cfg.Journal.RecordJobRun(jctx, r); err != nil {
		s.log.Error("journal job run", "job", r.Job, "err", err)
	}
}

// maxWait bounds the ticker's sleep.
const maxWait = time.Minute

// Start runs the ticker until ctx ends or Stop is called. Each tick runs
// the due jobs in their own goroutine, so a slow job (a backup) does not
// delay the next tick; it only makes its own next run skip.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return kairos.Errorf(kairos.ECONFLICT, "scheduler already started")
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go s.loop(ctx)
	s.log.Info("scheduler started", "jobs", len(s.jobs))
	return nil
}

func (s *Scheduler) loop(ctx context.Context) {
	defer close(s.done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		now := s.cfg.Now()
		if due := s.takeDue(now); len(due) > 0 {
			s.runs.Add(1)
			go func() {
				defer s.runs.Done()
				s.runAll(ctx, due, now)
			}()
		}
		timer.Reset(max(s.untilNext(s.cfg.Now(), maxWait), 10*time.Millisecond))
	}
}

// Stop ends the ticker and waits for running jobs (which see their
// context cancelled) until ctx ends.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	finished := make(chan struct{})
	go func() { s.runs.Wait(); close(finished) }()
	select {
	case <-finished:
		s.log.Info("scheduler stopped")
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop scheduler: %w", ctx.Err())
	}
}
