package code_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/tools/code"
)

// TestCloseDoesNotWaitForeverOnAStuckRun: a background run whose runner
// ignores the cancellation (as a cell the engine failed to stop would)
// must not hold Close: Close gives up after CloseWait, says so, and
// records the run as stopped; when the run ends after all, its late result
// does not replace that record.
func TestCloseDoesNotWaitForeverOnAStuckRun(t *testing.T) {
	release := make(chan struct{})
	runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		<-release // deaf to ctx
		return &kairos.CellResult{ID: "late", Success: true}, nil
	}}
	tool, st := newTool(t, code.Config{Runner: runner, AsyncAfter: time.Millisecond, CloseWait: 50 * time.Millisecond})
	r, _ := call(t, tool, `{"action":"execute","code":"await new Promise(() => {})"}`)
	if r.Status != code.StatusRunning {
		t.Fatalf("status = %q, want running", r.Status)
	}
	closed := make(chan error, 1)
	go func() { closed <- tool.Close() }()
	select {
	case err := <-closed:
		if err == nil || !strings.Contains(err.Error(), "did not stop") {
			t.Fatalf("Close = %v; want an error about the run left behind", err)
		}
	case <-testkit.Deadline(t).Done():
		close(release)
		t.Fatal("Close is still waiting for a run that ignores its cancellation")
	}
	e, err := st.FindExecution(context.Background(), r.JobID)
	if err != nil || e.ErrorCategory != kairos.CatTimeout || e.Success {
		t.Fatalf("trace after Close = %+v, %v; want a recorded timeout", e, err)
	}

	close(release)
	if err := tool.Close(); err != nil { // now the run ends, and Close waits for it
		t.Fatalf("second Close = %v", err)
	}
	e, err = st.FindExecution(context.Background(), r.JobID)
	if err != nil || e.ErrorCategory != kairos.CatTimeout || e.Success {
		t.Fatalf("trace after the late result = %+v, %v; want the timeout kept", e, err)
	}
}
