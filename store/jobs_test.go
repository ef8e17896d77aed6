package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

func TestJobStore(t *testing.T) {
	ctx := context.Background()
	js := store.NewJobStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC)
	runs := []*kairos.JobRun{
		{Job: "a", StartedAt: t0, EndedAt: t0.Add(time.Second), Outcome: kairos.JobOK, Detail: "did 1"},
		{Job: "b", StartedAt: t0.Add(time.Minute), EndedAt: t0.Add(time.Minute), Outcome: kairos.JobSkipped},
		{Job: "a", StartedAt: t0.Add(2 * time.Minute), EndedAt: t0.Add(3 * time.Minute), Outcome: kairos.JobPanic, Detail: "panic: boom\x00" + strings.Repeat("é", 3000)},
	}
	for _, r := range runs {
		if err := js.RecordJobRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if r.ID == 0 {
			t.Fatal("no id set")
		}
	}

	t.Run("list one job newest first", func(t *testing.T) {
		got, err := js.JobRuns(ctx, "a", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Outcome != kairos.JobPanic || got[1].Outcome != kairos.JobOK {
			t.Fatalf("got %+v", got)
		}
		if !got[1].StartedAt.Equal(t0) || !got[1].EndedAt.Equal(t0.Add(time.Second)) || got[1].Detail != "did 1" {
			t.Errorf("round trip: %+v", got[1])
		}
		d := got[0].Detail
		if len(d) > store.JobDetailMax || strings.ContainsRune(d, 0) || !strings.HasPrefix(d, "panic: boom") || !utf8Valid(d) {
			t.Errorf("detail not bounded/cleaned: %d bytes", len(d))
		}
	})
	t.Run("list all with limit", func(t *testing.T) {
		got, err := js.JobRuns(ctx, "", 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Job != "a" || got[1].Job != "b" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		for _, r := range []*kairos.JobRun{{Outcome: kairos.JobOK}, {Job: "x", Outcome: "maybe"}} {
			if err := js.RecordJobRun(ctx, r); kairos.ErrorCode(err) != kairos.EINVALID {
				t.Errorf("%+v: err %v, want EINVALID", r, err)
			}
		}
	})
	t.Run("prune", func(t *testing.T) {
		n, err := js.PruneJobRuns(ctx, t0.Add(90*time.Second))
		if err != nil || n != 2 {
			t.Fatalf("pruned %d, %v; want 2", n, err)
		}
		got, _ := js.JobRuns(ctx, "", 0)
		if len(got) != 1 || got[0].Outcome != kairos.JobPanic {
			t.Fatalf("left %+v", got)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
