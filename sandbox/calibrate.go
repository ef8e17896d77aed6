package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
)

// Calibration: QuickJS-ng keeps its memory limit and interrupt handler in
// runtime fields whose offsets the C ABI does not export; they are found
// once per engine by probing a template instance, and checked.

// calibrate finds JSRuntime.malloc_limit, whose offset is private to
// QuickJS, by comparing two runtimes created with different limits, so that
// a snapshot instance can be given a per-cell memory limit. It then checks
// that the interrupt poll function was identified: a loop must call it.
func (e *engine) calibrate(ctx context.Context, rand io.Reader) error {
	const la, lb = 0x3A5A5000, 0x3A5A6000
	const sa, sb = 0x51230, 0x51240
	ia, err := e.newInstance(ctx, la, sa, rand)
	if err != nil {
		return err
	}
	defer ia.close(ctx)
	ib, err := e.newInstance(ctx, lb, sb, rand)
	if err != nil {
		return err
	}
	defer ib.close(ctx)
	ra, _ := ia.mem.Read(ia.rt, 512)
	rb, _ := ib.mem.Read(ib.rt, 512)
	stackOff := -1
	for off := 0; off+4 <= len(ra) && off+4 <= len(rb); off += 4 {
		a, b := binary.LittleEndian.Uint32(ra[off:]), binary.LittleEndian.Uint32(rb[off:])
		if a == la && b == lb && e.limitOffset < 0 {
			e.limitOffset = int32(off)
		}
		if a == sa && b == sb && stackOff < 0 {
			stackOff = off
		}
	}
	if e.limitOffset < 0 || stackOff < 0 {
		return errors.New("calibrate: quickjs runtime fields not found")
	}
	var polls atomic.Int64
	pctx := context.WithValue(ctx, pollCountKey{}, &polls)
	if exc, err := ia.eval(pctx, "<calibrate>", "for (let i = 0; i < 100000; i++) {}", evalGlobal); err != nil || exc != "" {
		return fmt.Errorf("calibrate: loop failed: %v %s", err, exc)
	}
	if polls.Load() < 10 {
		return fmt.Errorf("calibrate: interrupt poll function %d not called (%d calls)", e.pollFunc, polls.Load())
	}
	if err := e.checkJobs(ctx, ia); err != nil {
		return err
	}
	// interrupt_handler follows stack_size within a few words: the
	// candidate that makes a regexp with heavy backtracking trap, while a
	// short script runs, is it.
	for off := stackOff + 12; off <= stackOff+64 && off+4 <= len(ra); off += 4 {
		if binary.LittleEndian.Uint32(ra[off:]) != 0 {
			continue
		}
		ok, err := e.tryIRQ(ctx, off, rand)
		if err != nil {
			return err
		}
		if ok {
			e.irqOffset = int32(off)
			return e.checkHandler(ctx, rand)
		}
	}
	return errors.New("calibrate: quickjs interrupt handler not found")
}

// checkHandler installs the no-op interrupt handler and checks that a
// regexp with heavy backtracking and a loop run to the end while the
// listener sees the calls.
func (e *engine) checkHandler(ctx context.Context, rand io.Reader) error {
	in, err := e.newInstance(ctx, 0, 0, rand)
	if err != nil {
		return err
	}
	defer in.close(ctx)
	if !e.setHandler(in) {
		return errors.New("calibrate: cannot install interrupt handler")
	}
	var polls atomic.Int64
	pctx := context.WithValue(ctx, pollCountKey{}, &polls)
	exc, err := in.eval(pctx, "<calibrate>", `if (/(a+)+$/.test("a".repeat(16) + "b")) throw new Error("match")`, evalGlobal)
	if err != nil || exc != "" {
		return fmt.Errorf("calibrate: interrupt handler %d misbehaves: %v %s", e.handlerSlot, err, exc)
	}
	if polls.Load() == 0 {
		return errors.New("calibrate: interrupt handler not called by the regexp engine")
	}
	return nil
}

// checkJobs checks that the pending job function was identified: a chain
// of top-level awaits must call it at least once per await (cellListener).
func (e *engine) checkJobs(ctx context.Context, in *instance) error {
	var turns atomic.Int64
	jctx := context.WithValue(ctx, jobCountKey{}, &turns)
	const awaits = 50
	code := fmt.Sprintf("for (let i = 0; i < %d; i++) await null", awaits)
	if exc, err := in.eval(jctx, "<calibrate>", code, evalGlobal|evalAsync); err != nil || exc != "" {
		return fmt.Errorf("calibrate: awaits failed: %v %s", err, exc)
	}
	if turns.Load() < awaits {
		return fmt.Errorf("calibrate: pending job function %d not called (%d calls)", e.jobFunc, turns.Load())
	}
	return nil
}

// setHandler installs the no-op interrupt handler (see findHandler).
func (e *engine) setHandler(in *instance) bool {
	if e.irqOffset < 0 {
		return false
	}
	return in.mem.WriteUint32Le(in.rt+uint32(e.irqOffset), e.handlerSlot) &&
		in.mem.WriteUint32Le(in.rt+uint32(e.irqOffset)+4, 0)
}

func (e *engine) tryIRQ(ctx context.Context, off int, rand io.Reader) (bool, error) {
	in, err := e.newInstance(ctx, 0, 0, rand)
	if err != nil {
		return false, err
	}
	defer in.close(ctx)
	if !in.mem.WriteUint32Le(in.rt+uint32(off), irqIndex) {
		return false, nil
	}
	if exc, err := in.eval(ctx, "<calibrate>", "1+1", evalGlobal); err != nil || exc != "" {
		return false, nil
	}
	_, err = in.eval(ctx, "<calibrate>", `/(a+)+$/.test("a".repeat(16) + "b")`, evalGlobal)
	return err != nil && strings.Contains(err.Error(), "invalid table access"), nil
}

// irqIndex is a function table index far out of range: when QuickJS calls
// it as its interrupt handler the call traps (used to find the field).
const irqIndex = 0xFFFFFFF0

// pollCountKey carries a call counter for calibration.
type pollCountKey struct{}
