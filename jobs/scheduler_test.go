package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/jobs"
	"github.com/kairos-agent/kairos/store"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 30, 0, time.UTC)

func ran(runs []*kairos.JobRun) string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Job+":"+r.Outcome)
	}
	return strings.Join(out, " ")
}

func TestJournalOutcomes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.sched.Add(jobs.Job{Name: "boom", Spec: jobs.Every("@every 1m"), AtStart: true, Run: func(context.Context, time.Time) (string, error) {
		var m map[string]int
		m["x"] = 1 // nil map write
		return "", nil
	}})
	e.sched.Add(jobs.Job{Name: "fails", Spec: jobs.Every("@every 1m"), AtStart: true, Run: func(context.Context, time.Time) (string, error) {
		return "half done", errors.New("disk full")
	}})
	e.sched.Add(jobs.Job{Name: "idle", Spec: jobs.Every("@every 1m"), AtStart: true, Run: func(context.Context, time.Time) (string, error) {
		return "nothing configured", jobs.ErrSkip
	}})
	runs := e.sched.RunDue(ctx, t0)
	if got := ran(runs); got != "sessions.divide:ok summaries.rollup:ok job_runs.prune:ok boom:panic fails:error idle:skipped" {
		t.Fatalf("ran %s", got)
	}
	stored, err := e.journal.JobRuns(ctx, "", 0)
	if err != nil || len(stored) != 6 {
		t.Fatalf("%d journaled, %v", len(stored), err)
	}
	byJob := map[string]*kairos.JobRun{}
	for _, r := range stored {
		byJob[r.Job] = r
		if !r.StartedAt.Equal(t0) || r.EndedAt.Before(r.StartedAt) {
			t.Errorf("%s: %s..%s", r.Job, r.StartedAt, r.EndedAt)
		}
	}
	if d := byJob["boom"].Detail; !strings.Contains(d, "panic: assignment to entry in nil map") {
		t.Errorf("panic detail %q", d)
	}
	if d := byJob["fails"].Detail; d != "half done: disk full" {
		t.Errorf("error detail %q", d)
	}
	if d := byJob["idle"].Detail; d != "nothing configured: skipped" {
		t.Errorf("skip detail %q", d)
	}
	if d := byJob[jobs.JobDivide].Detail; d != "rolled over 0 sessions" {
		t.Errorf("divide detail %q", d)
	}
	// The panicking job runs again at its next time.
	if got := ran(e.sched.RunDue(ctx, t0.Add(time.Minute))); got != "sessions.divide:ok boom:panic fails:error idle:skipped" {
		t.Fatalf("second tick ran %s", got)
	}
}

func TestJobNeverOverlapsItself(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	started, release := make(chan struct{}), make(chan struct{})
	e.sched.Add(jobs.Job{Name: "slow", Spec: jobs.Every("@every 1m"), Run: func(context.Context, time.Time) (string, error) {
		started <- struct{}{}
		<-release
		return "done", nil
	}})
	first := make(chan []*kairos.JobRun)
	e.sched.RunDue(ctx, t0) // schedules slow for t0+1m
	go func() { first <- e.sched.RunDue(ctx, t0.Add(time.Minute)) }()
	<-started
	// The next tick comes while the first run is still going.
	second := e.sched.RunDue(ctx, t0.Add(2*time.Minute))
	if got := ran(second); got != "sessions.divide:ok slow:skipped" {
		t.Fatalf("second tick %s", got)
	}
	if _, err := e.sched.RunJob(ctx, "slow", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	close(release)
	if got := ran(<-first); got != "sessions.divide:ok slow:ok" {
		t.Fatalf("first tick %s", got)
	}
	runs, _ := e.journal.JobRuns(ctx, "slow", 0)
	var outcomes []string
	for _, r := range runs {
		outcomes = append(outcomes, r.Outcome)
	}
	sort.Strings(outcomes)
	if got := strings.Join(outcomes, ","); got != "ok,skipped,skipped" {
		t.Fatalf("journal %s", got)
	}
	if _, err := e.sched.RunJob(ctx, "nope", t0); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("unknown job: %v", err)
	}
}

func TestSchedule(t *testing.T) {
	ctx := context.Background()
	compactions := []time.Time{}
	var pruner fakePruner
	e := newEnv(t, func(c *jobs.Config) {
		c.CompactClock = func(ctx context.Context, now time.Time) error { compactions = append(compactions, now); return nil }
		c.Code = &pruner
	})
	for _, tc := range []struct {
		after time.Duration
		want  string
	}{
		{0, "sessions.divide:ok summaries.rollup:ok clock.compact:ok code_executions.prune:ok job_runs.prune:ok"},
		{30 * time.Second, ""},
		{59 * time.Second, ""},
		{time.Minute, "sessions.divide:ok"},
		{5 * time.Minute, "sessions.divide:ok summaries.rollup:ok"},
		{time.Hour, "sessions.divide:ok summaries.rollup:ok clock.compact:ok"},
		// After a long gap every job runs once, not once per missed tick.
		{30 * time.Hour, "sessions.divide:ok summaries.rollup:ok clock.compact:ok code_executions.prune:ok job_runs.prune:ok"},
	} {
		if got := ran(e.sched.RunDue(ctx, t0.Add(tc.after))); got != tc.want {
			t.Errorf("+%s: ran %q, want %q", tc.after, got, tc.want)
		}
	}
	if len(compactions) != 3 || !compactions[0].Equal(t0) {
		t.Errorf("compactions %v", compactions)
	}
	if got := pruner.befores; len(got) != 2 || !got[0].Equal(t0.Add(-30*24*time.Hour)) {
		t.Errorf("prune cut-offs %v", got)
	}
	if got := e.sched.Jobs(); strings.Join(got, ",") != "sessions.divide,summaries.rollup,clock.compact,code_executions.prune,job_runs.prune" {
		t.Errorf("jobs %v", got)
	}
}

type fakePruner struct{ befores []time.Time }

func (p *fakePruner) PruneExecutions(ctx context.Context, before time.Time) (int64, error) {
	p.befores = append(p.befores, before)
	return 3, nil
}

func TestPruneCodeExecutions(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	code := store.NewCodeStore(e.db)
	e.cfg.Code = code
	e.sched = jobs.New(e.cfg)
	for i, age := range []time.Duration{40 * 24 * time.Hour, 31 * 24 * time.Hour, 29 * 24 * time.Hour, time.Hour} {
		if err := code.RecordExecution(ctx, &kairos.CodeExecution{ID: fmt.Sprint("x", i), Code: "1", Success: true, CreatedAt: t0.Add(-age)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		retention, outcome, detail string
	}{
		{"", kairos.JobSkipped, "no retention set: skipped"},
		{"P30D", kairos.JobOK, "deleted 2 executions before 2026-02-02T10:00:30Z"},
		{"PT2H", kairos.JobOK, "deleted 1 executions before 2026-03-04T08:00:30Z"},
	} {
		t.Run(tc.retention, func(t *testing.T) {
			e.setSessions(func(p *kairos.SessionsPolicy) {
				p.CodeExecutionsRetention = kairos.Duration{}
				if tc.retention != "" {
					p.CodeExecutionsRetention = kairos.MustDuration(tc.retention)
				}
			})
			r, err := e.sched.RunJob(ctx, jobs.JobCodePrune, t0)
			if err != nil || r.Outcome != tc.outcome || r.Detail != tc.detail {
				t.Fatalf("%+v %v", r, err)
			}
		})
	}
}

func TestScheduledBackup(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "backups")
	var mu sync.Mutex
	var paths []string
	e := newEnv(t, func(c *jobs.Config) {
		c.BackupDir = dir
		c.BackupKeep = 2
		c.Backup = func(ctx context.Context, path string) error {
			mu.Lock()
			defer mu.Unlock()
			paths = append(paths, path)
			return os.WriteFile(path, []byte("db"), 0o600)
		}
	})
	e.setSessions(func(p *kairos.SessionsPolicy) { p.BackupSchedule = "30 3 * * *" })
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "kairos-manual.db"), []byte("mine"), 0o600) // not ours to prune
	ranBackup := func(now time.Time) bool {
		for _, r := range e.sched.RunDue(ctx, now) {
			if r.Job == jobs.JobBackup {
				if r.Outcome != kairos.JobOK {
					t.Fatalf("backup %+v", r)
				}
				return true
			}
		}
		return false
	}
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	if ranBackup(day) {
		t.Fatal("backup ran at start")
	}
	for d := 0; d < 3; d++ {
		at := day.AddDate(0, 0, d).Add(3*time.Hour + 30*time.Minute)
		if ranBackup(at.Add(-time.Minute)) || !ranBackup(at) {
			t.Fatalf("day %d: backup not at 03:30", d)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	if got := strings.Join(names, ","); got != "kairos-20260305T033000Z.db,kairos-20260306T033000Z.db,kairos-manual.db" {
		t.Fatalf("backup dir %s", got)
	}
	if paths[0] != jobs.BackupPath(dir, day.Add(3*time.Hour+30*time.Minute)) {
		t.Fatalf("path %s", paths[0])
	}
	// A policy reload that clears the schedule stops the backups.
	e.setSessions(func(p *kairos.SessionsPolicy) { p.BackupSchedule = "" })
	if ranBackup(day.AddDate(0, 0, 5).Add(3*time.Hour + 30*time.Minute)) {
		t.Fatal("backup ran with no schedule")
	}
	// A bad spec turns the job off without stopping the others.
	e.setSessions(func(p *kairos.SessionsPolicy) { p.BackupSchedule = "every night" })
	if runs := e.sched.RunDue(ctx, day.AddDate(0, 0, 9)); ran(runs) != "sessions.divide:ok summaries.rollup:ok job_runs.prune:ok" {
		t.Fatalf("ran %s", ran(runs))
	}
}

func TestStartStop(t *testing.T) {
	e := newEnv(t, func(c *jobs.Config) { c.Now = time.Now })
	ran := make(chan struct{}, 10)
	e.sched.Add(jobs.Job{Name: "ping", Spec: jobs.Every("@every 1h"), AtStart: true, Run: func(ctx context.Context, now time.Time) (string, error) {
		ran <- struct{}{}
		return "", nil
	}})
	ctx := context.Background()
	if err := e.sched.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.sched.Start(ctx); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("second start: %v", err)
	}
	select {
	case <-ran:
	case <-testkit.Deadline(t).Done():
		t.Fatal("the first tick did not run the job")
	}
	if err := e.sched.Stop(testkit.Deadline(t)); err != nil {
		t.Fatal(err)
	}
	// Stop waited for the run, which is journaled.
	runs, err := e.journal.JobRuns(ctx, "ping", 0)
	if err != nil || len(runs) != 1 || runs[0].Outcome != kairos.JobOK {
		t.Fatalf("journal %+v %v", runs, err)
	}
}

// TestStopInterruptsWithoutAnError: a run cut short by Stop (a shutdown,
// or a start that failed after the scheduler began) is journaled as
// skipped with the reason and logs no ERROR; it logged "job failed …
// context canceled" ahead of the cause of a failed start.
func TestStopInterruptsWithoutAnError(t *testing.T) {
	logs := &testkit.SyncBuffer{}
	e := newEnv(t, func(c *jobs.Config) {
		c.Now = time.Now
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	started := make(chan struct{})
	e.sched.Add(jobs.Job{Name: "slow", Spec: jobs.Every("@every 1h"), AtStart: true, Run: func(ctx context.Context, now time.Time) (string, error) {
		close(started)
		<-ctx.Done()
		return "", fmt.Errorf("roll up token usage: %w", ctx.Err())
	}})
	ctx := context.Background()
	if err := e.sched.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := e.sched.Stop(testkit.Deadline(t)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("an interrupted run logged an error:\n%s", logs.String())
	}
	runs, err := e.journal.JobRuns(ctx, "slow", 0)
	if err != nil || len(runs) != 1 || runs[0].Outcome != kairos.JobSkipped || !strings.Contains(runs[0].Detail, "interrupted") {
		t.Fatalf("journal %+v %v", runs, err)
	}
}
