package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

func TestCodeStoreRecordFind(t *testing.T) {
	ctx := context.Background()
	s := store.NewCodeStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 123e6, time.UTC)

	want := &kairos.CodeExecution{
		ID: "job-1", Code: "output(1)", Stdout: "hello\n", Stderr: "warn\n", ExitCode: 0,
		DurationMS: 42, Success: true, SessionID: "s1", UserKey: "telegram:1",
		TriggerMessage: "compute", LLMReasoning: "because", Verb: kairos.VerbBuild,
		RiskTier: "low", Result: `{"n":1}`, CreatedAt: t0,
	}
	if err := s.RecordExecution(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindExecution(ctx, "job-1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	if _, err := s.FindExecution(ctx, "nope"); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("FindExecution(missing) = %v, want ENOTFOUND", err)
	}
	if err := s.RecordExecution(ctx, nil); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("RecordExecution(nil) = %v, want EINVALID", err)
	}
}

func TestCodeStoreDefaultsAndCleanText(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	now := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	s := store.NewCodeStore(db)

	e := &kairos.CodeExecution{Code: "x", Stdout: "a\x00b\xffc", ErrorCategory: kairos.CatRuntime}
	if err := s.RecordExecution(ctx, e); err != nil {
		t.Fatal(err)
	}
	if e.ID == "" || !e.CreatedAt.Equal(now) {
		t.Fatalf("defaults not written back: id %q created %v", e.ID, e.CreatedAt)
	}
	got, err := s.FindExecution(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stdout != "a\uFFFDb\uFFFDc" {
		t.Fatalf("stdout stored as %q, want NUL and invalid UTF-8 replaced", got.Stdout)
	}
}

// TestCodeStoreAsyncJob: a job recorded while running is upserted with its
// outcome; created_at keeps its first value; running rows stay out of the
// statistics and failures until done.
func TestCodeStoreAsyncJob(t *testing.T) {
	ctx := context.Background()
	s := store.NewCodeStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

	running := &kairos.CodeExecution{ID: "j", Code: "await sleep(1e6)", UserKey: "u", Verb: kairos.VerbBuild, CreatedAt: t0}
	if err := s.RecordExecution(ctx, running); err != nil {
		t.Fatal(err)
	}
	st, err := s.CodeStats(ctx, t0.Add(-time.Hour))
	if err != nil || st.Total != 0 {
		t.Fatalf("stats with a running job = %+v, %v; want nothing counted", st, err)
	}
	fs, err := s.CodeFailures(ctx, 5)
	if err != nil || len(fs) != 0 {
		t.Fatalf("failures with a running job = %d, %v; want none", len(fs), err)
	}

	done := &kairos.CodeExecution{ID: "j", Code: "await sleep(1e6)", UserKey: "u", Verb: kairos.VerbBuild,
		ErrorCategory: kairos.CatTimeout, Stderr: "time budget exhausted", ExitCode: 1, DurationMS: 30000,
		CreatedAt: t0.Add(time.Minute)}
	if err := s.RecordExecution(ctx, done); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindExecution(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	if got.ErrorCategory != kairos.CatTimeout || got.DurationMS != 30000 || !got.CreatedAt.Equal(t0) {
		t.Fatalf("after completion: %+v; want timeout, 30000 ms, created_at kept at %v", got, t0)
	}
	fs, err = s.CodeFailures(ctx, 5)
	if err != nil || len(fs) != 1 || fs[0].ID != "j" {
		t.Fatalf("failures after completion = %v, %v", fs, err)
	}
}

func TestCodeStoreStatsFailuresPrune(t *testing.T) {
	ctx := context.Background()
	s := store.NewCodeStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

	seedExecutions(t, s, t0)
	since := t0.Add(-7 * 24 * time.Hour)
	st, err := s.CodeStats(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	want := &kairos.CodeStats{
		Total: 7, Successes: 3, Failures: 4, AvgDurationMS: 40,
		Categories: []kairos.CategoryCount{
			{Category: kairos.CatSyntax, Count: 2},
			{Category: kairos.CatTimeout, Count: 1},
			{Category: kairos.CatType, Count: 1},
		},
	}
	if d := cmp.Diff(want, st); d != "" {
		t.Fatalf("CodeStats (-want +got):\n%s", d)
	}

	empty, err := s.CodeStats(ctx, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&kairos.CodeStats{Categories: []kairos.CategoryCount{}}, empty); d != "" {
		t.Fatalf("CodeStats of an empty window (-want +got):\n%s", d)
	}

	checkCodeFailures(t, s)

	n, err := s.PruneExecutions(ctx, since)
	if err != nil || n != 2 {
		t.Fatalf("PruneExecutions = %d, %v; want 2", n, err)
	}
	if _, err := s.FindExecution(ctx, "old-ok"); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("old execution survived the prune: %v", err)
	}
	if _, err := s.FindExecution(ctx, "a"); err != nil {
		t.Fatalf("recent execution was pruned: %v", err)
	}
	n, err = s.PruneExecutions(ctx, since)
	if err != nil || n != 0 {
		t.Fatalf("second PruneExecutions = %d, %v; want 0", n, err)
	}
}

// seedExecutions records executions around t0: two older than 7 days, 3
// successes and 4 failures (2 syntax, 1 timeout, 1 type) within, and a
// running job.
func seedExecutions(t *testing.T, s *store.CodeStore, t0 time.Time) {
	t.Helper()
	rec := func(id string, at time.Time, ok bool, cat string, dur int64) {
		t.Helper()
		e := &kairos.CodeExecution{ID: id, Code: "code " + id, Success: ok, ErrorCategory: cat, DurationMS: dur, CreatedAt: at}
		if err := s.RecordExecution(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	// Old: outside the 7-day window.
	rec("old-ok", t0.Add(-10*24*time.Hour), true, "", 1000)
	rec("old-fail", t0.Add(-8*24*time.Hour), false, kairos.CatNetwork, 1000)
	// In the window: 3 successes, 4 failures (2 syntax, 1 timeout, 1 type).
	rec("a", t0.Add(-6*24*time.Hour), true, "", 10)
	rec("b", t0.Add(-5*24*time.Hour), true, "", 20)
	rec("c", t0.Add(-4*24*time.Hour), true, "", 30)
	rec("d", t0.Add(-3*24*time.Hour), false, kairos.CatSyntax, 40)
	rec("e", t0.Add(-2*24*time.Hour), false, kairos.CatTimeout, 50)
	rec("f", t0.Add(-1*24*time.Hour), false, kairos.CatSyntax, 60)
	rec("g", t0.Add(-1*time.Hour), false, kairos.CatType, 70)
	// A running job: not counted.
	rec("h", t0.Add(-time.Minute), false, "", 0)
}

// checkCodeFailures checks CodeFailures over seedExecutions' rows: the n
// most recent failures, all of them when n is 0 or more than there are.
func checkCodeFailures(t *testing.T, s *store.CodeStore) {
	tests := []struct {
		n    int
		want []string
	}{
		{n: 2, want: []string{"g", "f"}},
		{n: 0, want: []string{"g", "f", "e", "d", "old-fail"}},
		{n: 100, want: []string{"g", "f", "e", "d", "old-fail"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("failures %d", tc.n), func(t *testing.T) {
			fs, err := s.CodeFailures(context.Background(), tc.n)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, f := range fs {
				ids = append(ids, f.ID)
			}
			if d := cmp.Diff(tc.want, ids); d != "" {
				t.Fatalf("CodeFailures(%d) (-want +got):\n%s", tc.n, d)
			}
		})
	}
}

func TestCodeStoreLargeText(t *testing.T) {
	ctx := context.Background()
	s := store.NewCodeStore(storetest.MustOpenDB(t))
	big := strings.Repeat("x", 1<<20)
	if err := s.RecordExecution(ctx, &kairos.CodeExecution{ID: "big", Stdout: big, Success: true}); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindExecution(ctx, "big")
	if err != nil || len(got.Stdout) != len(big) {
		t.Fatalf("large stdout: %d bytes, %v", len(got.Stdout), err)
	}
}
