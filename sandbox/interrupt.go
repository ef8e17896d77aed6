package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// Interruption: a wazero function listener on QuickJS's interrupt poll
// (and on its regexp interrupt handler) stops a cell at its deadline
// without closing the module on context cancellation.

// cellListener polls the running cell on every call of the function it
// listens on, or, outside a cell (calibration), counts the call in the
// *atomic.Int64 under the context key count.
//
// On QuickJS's interrupt poll (__js_poll_interrupts, count pollCountKey),
// which the interpreter calls every 10000 bytecodes and the regexp engine
// calls while matching, this is how a running cell is stopped: if its cell
// has been stopped (deadline, budget, cancellation) the listener panics,
// which unwinds the WASM stack and ends the eval with an error. It is also
// what keeps the process healthy: wazero's compiled code cannot be
// preempted by the Go scheduler, so without a regular exit into Go a long
// loop would hold up every stop-the-world (garbage collection) in the
// process. The cost is one exit into Go per 10000 bytecodes, where
// wazero's WithCloseOnContextDone pays one per loop iteration (about 4-5x
// on tight loops here).
//
// On QuickJS's JS_ExecutePendingJob (count jobCountKey): the job loop that
// waits for a top-level await (js_std_await) calls it once per turn, and
// when the awaited promise can never settle (nothing queued, no timer) it
// spins in C without running a bytecode or calling the host: the interrupt
// poll never runs there, so without this listener such a cell outlived its
// budget and its context, holding its instance and a core. Here the cell
// is polled once per job and per idle turn.
type cellListener struct{ count any }

func (l cellListener) Before(ctx context.Context, mod api.Module, _ api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if c, ok := ctx.Value(hostKey{}).(*cell); ok {
		c.poll(mod)
		return
	}
	if n, ok := ctx.Value(l.count).(*atomic.Int64); ok {
		n.Add(1)
	}
}

func (cellListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (cellListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// jobCountKey carries a counter of job-loop turns for calibration.
type jobCountKey struct{}

type pollFactory struct{ poll, handler, jobs uint32 }

func (f pollFactory) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	switch def.Index() {
	case f.poll, f.handler:
		return cellListener{pollCountKey{}}
	case f.jobs:
		return cellListener{jobCountKey{}}
	}
	return nil
}

// findJobFunction finds JS_ExecutePendingJob (not exported) through the
// exported js_std_await, whose loop calls it as
// "err = JS_ExecutePendingJob(rt, &ctx1); if (err < 0)": the one direct
// call of an (i32, i32) -> i32 function whose result is kept in a local
// and compared below zero (call f; local.tee; i32.const 0; i32.lt_s).
// calibrate checks the guess: a chain of awaits must call it.
func findJobFunction(m *wasmModule) (uint32, error) {
	await, ok := m.exports["js_std_await"]
	if !ok || await < m.nimp || int(await-m.nimp) >= len(m.bodies) {
		return 0, errors.New("js_std_await is not exported")
	}
	body := m.bodies[await-m.nimp]
	found := map[uint32]bool{}
	for i := 0; i < len(body); i++ {
		if body[i] != 0x10 { // call
			continue
		}
		f, n := uleb(body[i+1:])
		rest := body[i+1+n:]
		if n == 0 || len(rest) < 5 || rest[0] != 0x22 { // local.tee
			continue
		}
		if _, k := uleb(rest[1:]); k == 0 || !bytes.HasPrefix(rest[1+k:], []byte{0x41, 0x00, 0x48}) {
			continue
		}
		if f >= uint64(m.nimp) && f-uint64(m.nimp) < uint64(len(m.sig2)) && m.sig2[f-uint64(m.nimp)] {
			found[uint32(f)] = true
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("pending job function not identified (%d candidates)", len(found))
	}
	for f := range found {
		return f, nil
	}
	return 0, nil
}

// findPollFunction finds __js_poll_interrupts in the module (which has no
// name section): the only function of type (i32) -> i32 whose short body
// resets the interrupt counter (i32.const 10000) and calls the interrupt
// handler through the table (call_indirect). calibrate checks the guess.
func findPollFunction(m *wasmModule) (uint32, error) {
	found, index := 0, uint32(0)
	for k, body := range m.bodies {
		if m.sig[k] && len(body) < 400 &&
			bytes.Contains(body, []byte{0x41, 0x90, 0xce, 0x00}) && bytes.IndexByte(body, 0x11) >= 0 {
			found++
			index = m.nimp + uint32(k)
		}
	}
	if found != 1 {
		return 0, fmt.Errorf("interrupt poll function not identified (%d candidates)", found)
	}
	return index, nil
}

// findHandler finds a function to install as QuickJS's interrupt handler:
// one in the function table, of type (i32, i32) -> i32, tiny and pure (no
// calls, stores, global writes or memory growth). QuickJS's regexp engine
// calls the handler directly rather than through the interrupt poll, so the
// listener on this function is what stops a runaway regexp and lets the Go
// scheduler in. calibrate checks that it returns 0 ("go on").
func findHandler(m *wasmModule) (slot, index uint32, err error) {
	for _, e := range m.table {
		f := e[1]
		if f < m.nimp || int(f-m.nimp) >= len(m.bodies) {
			continue
		}
		k := f - m.nimp
		body := m.bodies[k]
		if !m.sig2[k] || len(body) > 48 || bytes.ContainsAny(body, "\x10\x11\x24\x36\x37\x38\x39\x3a\x3b\x3c\x3d\x3e\x40") {
			continue
		}
		return e[0], f, nil
	}
	return 0, 0, errors.New("no interrupt handler candidate in the function table")
}
