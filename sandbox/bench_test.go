package sandbox

import (
	"context"
	"crypto/rand"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// Scripts shared with bench/cells (node and Bun run the same code).
const (
	scriptTrivial = `output(1)`
	scriptFib     = `function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } output(fib(25))`
	scriptJSON    = `const rows = []; for (let i = 0; i < 2000; i++) rows.push({id: i, name: "item " + i, tags: ["a", "b", "c"], price: i * 1.5, ok: i % 3 === 0});
const text = JSON.stringify(rows); const back = JSON.parse(text);
const total = back.filter(r => r.ok).reduce((s, r) => s + r.price, 0); output({bytes: text.length, total})`
	scriptLoop = `let s = 0; for (let i = 0; i < 3000000; i++) { s = (s + i) | 0 } output(s)`
)

func benchRun(b *testing.B, r *Runner, code string) {
	b.Helper()
	ctx := context.Background()
	tk := &kairos.CellTask{Code: code, Verb: kairos.VerbBuild, Budget: kairos.Budget{TimeBudget: time.Minute}}
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := r.Run(ctx, tk)
		durs = append(durs, time.Since(t0))
		if err != nil || !res.Success {
			b.Fatalf("%v %+v", err, res)
		}
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "median-ms")
}

func BenchmarkWarmTrivial(b *testing.B) { benchRun(b, shared, scriptTrivial) }
func BenchmarkFib25(b *testing.B)       { benchRun(b, shared, scriptFib) }
func BenchmarkJSON(b *testing.B)        { benchRun(b, shared, scriptJSON) }

// BenchmarkAwaits is 10000 top-level awaits: each is a promise job, and
// every job-loop turn passes the job listener (interrupt.go).
func BenchmarkAwaits(b *testing.B) {
	benchRun(b, shared, `let s = 0; for (let i = 0; i < 10000; i++) s += await i; output(s)`)
}

// BenchmarkColdStart is the first cell of a new Runner: compile (or load
// from the compilation cache), calibrate, snapshot, run.
func BenchmarkColdStart(b *testing.B) {
	ctx := context.Background()
	cacheDir := b.TempDir()
	warm, err := New(ctx, Config{CacheDir: cacheDir, PoolSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	if err := warm.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	_ = warm.Close(ctx)
	for _, tc := range []struct {
		name string
		dir  string
	}{{"nocache", ""}, {"cache", cacheDir}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, err := New(ctx, Config{CacheDir: tc.dir, PoolSize: -1})
				if err != nil {
					b.Fatal(err)
				}
				res, err := r.Run(ctx, task(scriptTrivial))
				if err != nil || !res.Success {
					b.Fatalf("%v %+v", err, res)
				}
				_ = r.Close(ctx)
			}
		})
	}
}

// BenchmarkInterruption compares a tight loop on engines without any
// interruption, with the poll listener (production) and with wazero's
// WithCloseOnContextDone.
func BenchmarkInterruption(b *testing.B) {
	ctx := context.Background()
	for _, m := range []struct {
		name string
		mode engineMode
	}{{"none", modeNone}, {"listener", modeListener}, {"closeOnDone", modeCloseOnDone}} {
		b.Run(m.name, func(b *testing.B) {
			e, err := newEngineMode(ctx, "", maxPages, stackPages, m.mode)
			if err != nil {
				b.Fatal(err)
			}
			defer e.close(ctx)
			in, err := e.newInstance(ctx, 0, 0, rand.Reader)
			if err != nil {
				b.Fatal(err)
			}
			defer in.close(ctx)
			if m.mode == modeListener {
				if err := e.calibrate(ctx, rand.Reader); err != nil {
					b.Fatal(err)
				}
				e.setHandler(in)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if exc, err := in.eval(ctx, "<bench>", `(function () { let s = 0; for (let i = 0; i < 1000000; i++) { s = (s + i) | 0 } return s })()`, evalGlobal); err != nil || exc != "" {
					b.Fatal(err, exc)
				}
			}
		})
	}
}

// BenchmarkConcurrent50 runs 50 cells at once (each holding its instance
// for 20 ms) and reports the Go heap per concurrent cell.
func BenchmarkConcurrent50(b *testing.B) {
	ctx := context.Background()
	var peak uint64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var wg sync.WaitGroup
		ready := make(chan struct{}, 50)
		hold := make(chan struct{})
		errs := make(chan error, 50)
		for j := 0; j < 50; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := shared.Run(ctx, task(`const a = JSON.parse(JSON.stringify(Array.from({length: 1000}, (_, i) => ({i})))); await sleep(20); output(a.length)`))
				if err == nil && !res.Success {
					err = fmt.Errorf("%s: %s", res.ErrorCategory, res.Error)
				}
				errs <- err
				ready <- struct{}{}
			}()
		}
		// Sample the heap while the cells sleep.
		time.Sleep(15 * time.Millisecond)
		var during runtime.MemStats
		runtime.ReadMemStats(&during)
		if d := during.HeapInuse - before.HeapInuse; during.HeapInuse > before.HeapInuse && d > peak {
			peak = d
		}
		close(hold)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(peak)/50/(1<<20), "MiB/cell")
}
