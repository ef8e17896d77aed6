package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// stuckAwaits are cells whose top-level await waits on something that
// never settles. Each must end at its time budget, or when its context is
// cancelled, like any other cell.
var stuckAwaits = []struct{ name, code string }{
	{"never settling promise", `await new Promise(() => {})`},
	{"never settling promise in async function", `async function f() { await new Promise(() => {}); return 1 } output(await f())`},
	{"never settling chain", `await new Promise(() => {}).then(() => 1).then(() => 2)`},
	{"jobs then a never settling promise", `for (let i = 0; i < 100; i++) await Promise.resolve(i); await new Promise(() => {})`},
	{"sleep a billion milliseconds", `await sleep(1e9)`},
	{"timer far away", `await new Promise((r) => setTimeout(r, 1e9))`},
}

// stuckRunner is a warmed runner of its own for a test of stuck cells, so
// that a cell that never ends cannot hold up the package's shared runner;
// it is closed at the end only if the test passed (closing waits for the
// running cells).
func stuckRunner(t *testing.T) *Runner {
	t.Helper()
	r, err := New(context.Background(), Config{PoolSize: -1, CacheDir: engineCache})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			if err := r.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	})
	return r
}

// runStuck runs tk and waits for its result; it fails the test if Run has
// not returned by the test's deadline.
func runStuck(t *testing.T, r *Runner, ctx context.Context, tk *kairos.CellTask) *kairos.CellResult {
	t.Helper()
	type out struct {
		res *kairos.CellResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := r.Run(ctx, tk)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("Run: %v", o.err)
		}
		return o.res
	case <-testkit.Deadline(t).Done():
		t.Fatal("Run never returned after the cell started")
		return nil
	}
}

func TestStuckAwaitEndsAtBudget(t *testing.T) {
	r := stuckRunner(t)
	for _, tc := range stuckAwaits {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tk := task(tc.code)
			tk.Budget = kairos.Budget{TimeBudget: 300 * time.Millisecond}
			res := runStuck(t, r, context.Background(), tk)
			if res.Success || res.ErrorCategory != kairos.CatTimeout {
				t.Fatalf("success=%v category=%q error=%q, want a timeout", res.Success, res.ErrorCategory, res.Error)
			}
		})
	}
}

func TestStuckAwaitEndsOnCancel(t *testing.T) {
	r := stuckRunner(t)
	for _, tc := range stuckAwaits {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tk := task(tc.code)
			tk.Budget = kairos.Budget{TimeBudget: time.Hour}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Cancel once the cell is running: its first host call or
			// interrupt poll proves it started; a timer is enough here
			// because either order must end the cell.
			stop := time.AfterFunc(100*time.Millisecond, cancel)
			defer stop.Stop()
			res := runStuck(t, r, ctx, tk)
			if res.Success || res.ErrorCategory != kairos.CatTimeout {
				t.Fatalf("success=%v category=%q error=%q, want a timeout", res.Success, res.ErrorCategory, res.Error)
			}
			if res.Error != "cell cancelled" {
				t.Errorf("error %q, want cell cancelled", res.Error)
			}
		})
	}
}
