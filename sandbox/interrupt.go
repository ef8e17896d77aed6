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

// pollListener runs on every call of QuickJS's interrupt poll function
// (__js_poll_interrupts), which the interpreter calls every 10000
// bytecodes and the regexp engine calls while matching. This is how a
// running cell is stopped: if its cell has been stopped (deadline, budget,
// cancellation) the listener panics, which unwinds the WASM stack and ends
// the eval with an error. It is also what keeps the process healthy:
// wazero's compiled code cannot be preempted by the Go scheduler, so
// without a regular exit into Go a long loop would hold up every
// stop-the-world (garbage collection) in the process. The cost is one exit
// into Go per 10000 bytecodes, where wazero's WithCloseOnContextDone pays
// one per loop iteration (about 4-5x on tight loops here).
type pollListener struct{}

func (pollListener) Before(ctx context.Context, mod api.Module, _ api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if c, ok := ctx.Value(hostKey{}).(*cell); ok {
		c.poll(mod)
		return
	}
	if n, ok := ctx.Value(pollCountKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}

func (pollListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (pollListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

type pollFactory struct{ poll, handler uint32 }

func (f pollFactory) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if def.Index() == f.poll || def.Index() == f.handler {
		return pollListener{}
	}
	return nil
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
