package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// qjsWasm is QuickJS-ng compiled to WASI by github.com/fastschema/qjs v0.0.6
// (MIT licence), byte for byte the qjs.wasm of that module. It is embedded
// here because the qjs package does not export it; we drive its exported C
// ABI directly so that we own the wazero runtime (one per Runner, no host
// file system, injected clocks, cheap interruption). Refresh with:
//
//	go generate ./sandbox
//
//go:generate sh -c "cp $(go env GOMODCACHE)/github.com/fastschema/qjs@v0.0.6/qjs.wasm qjs.wasm && chmod 644 qjs.wasm"
//go:embed qjs.wasm
var qjsWasm []byte

// wasmPage is the size of one WASM memory page.
const wasmPage = 65536

// engine is one wazero runtime with the QuickJS module compiled once.
type engine struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	cache    wazero.CompilationCache

	// The C stack occupies [stackLow, stackTop) after patchLayout.
	stackLow, stackTop uint32

	// limitOffset is the offset of malloc_limit from the JSRuntime pointer,
	// found by calibrate; -1 if unknown.
	limitOffset int32
	// pollFunc is the function index of QuickJS's interrupt poll.
	pollFunc uint32
	// handlerSlot (table index) and handlerFunc (function index) name the
	// no-op function installed as QuickJS's interrupt handler.
	handlerSlot, handlerFunc uint32
	// irqOffset is the offset of interrupt_handler from the JSRuntime
	// pointer, found by calibrate; -1 if unknown.
	irqOffset int32

	// snapshot is the linear memory of an instance with QuickJS and the
	// prelude initialised; fresh instances start as a copy of it.
	snapshot        []byte
	snapQJS, snapRT uint32 // QJSRuntime* and JSRuntime* in the snapshot
	snapCtx         uint32 // JSContext* in the snapshot
}

// hostKey is the context key under which a cell's host state travels into
// the jsFunctionProxy host function.
type hostKey struct{}

// newEngine creates the runtime and compiles the module. cacheDir may be
// empty (an in-memory compilation cache is used then).
// engineMode selects the interruption mechanism; only benchmarks use
// anything but modeListener.
type engineMode int

const (
	modeListener    engineMode = iota // the poll listener (production)
	modeNone                          // no interruption at all (baseline)
	modeCloseOnDone                   // wazero's WithCloseOnContextDone
)

func newEngine(ctx context.Context, cacheDir string, maxPages, stackPages uint32) (*engine, error) {
	return newEngineMode(ctx, cacheDir, maxPages, stackPages, modeListener)
}

func newEngineMode(ctx context.Context, cacheDir string, maxPages, stackPages uint32, mode engineMode) (*engine, error) {
	wasm, err := patchLayout(qjsWasm, stackPages)
	if err != nil {
		return nil, fmt.Errorf("patch quickjs module: %w", err)
	}
	var cache wazero.CompilationCache
	if cacheDir != "" {
		cache, err = wazero.NewCompilationCacheWithDir(cacheDir)
		if err != nil {
			return nil, fmt.Errorf("open compilation cache: %w", err)
		}
	} else {
		cache = wazero.NewCompilationCache()
	}
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithCloseOnContextDone(mode == modeCloseOnDone). // interruption: see pollListener
		WithMemoryLimitPages(maxPages).
		WithDebugInfoEnabled(false)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	e := &engine{rt: rt, cache: cache, limitOffset: -1, irqOffset: -1}
	oldMin, err := memoryMin(qjsWasm)
	if err != nil {
		return nil, err
	}
	e.stackLow = oldMin * wasmPage
	e.stackTop = (oldMin + stackPages) * wasmPage
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		e.close(ctx)
		return nil, fmt.Errorf("instantiate wasi: %w", err)
	}
	_, err = rt.NewHostModuleBuilder("env").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostProxy),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32, api.ValueTypeI32},
			[]api.ValueType{api.ValueTypeI64}).
		Export("jsFunctionProxy").
		Instantiate(ctx)
	if err != nil {
		e.close(ctx)
		return nil, fmt.Errorf("instantiate host module: %w", err)
	}
	e.pollFunc, err = findPollFunction(wasm)
	if err != nil {
		e.close(ctx)
		return nil, err
	}
	e.handlerSlot, e.handlerFunc, err = findHandler(wasm)
	if err != nil {
		e.close(ctx)
		return nil, err
	}
	cctx := ctx
	if mode == modeListener {
		cctx = experimental.WithFunctionListenerFactory(ctx, pollFactory{poll: e.pollFunc, handler: e.handlerFunc})
	}
	e.compiled, err = rt.CompileModule(cctx, wasm)
	if err != nil {
		e.close(ctx)
		return nil, fmt.Errorf("compile quickjs: %w", err)
	}
	return e, nil
}

func (e *engine) close(ctx context.Context) error {
	err := e.rt.Close(ctx)
	if e.cache != nil {
		err = errors.Join(err, e.cache.Close(ctx))
	}
	return err
}

// instance is one QuickJS module instance with its runtime and context.
// It belongs to at most one cell and is closed after it.
type instance struct {
	mod  api.Module
	mem  api.Memory
	qjs  uint32 // QJSRuntime*
	rt   uint32 // JSRuntime*
	jctx uint32 // JSContext*
	io   *instanceIO
	fns  map[string]api.Function
}

// instanceIO is what the module's WASI imports see. It is filled in when
// the instance is handed to a cell; before that stdout goes nowhere and the
// clocks start at zero.
type instanceIO struct {
	mu    sync.Mutex
	cell  *cell
	start time.Time // monotonic start of the cell
	epoch time.Time // what the cell sees as "now" at start
}

func (o *instanceIO) Write(p []byte) (int, error) {
	o.mu.Lock()
	c := o.cell
	o.mu.Unlock()
	if c == nil {
		return len(p), nil
	}
	return c.writeStd(p)
}

func (o *instanceIO) elapsed() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.start.IsZero() {
		return 0
	}
	return time.Since(o.start)
}

func (o *instanceIO) walltime() (int64, int32) {
	o.mu.Lock()
	epoch, start := o.epoch, o.start
	o.mu.Unlock()
	if start.IsZero() {
		return 0, 0
	}
	t := epoch.Add(time.Since(start))
	return t.Unix(), int32(t.Nanosecond())
}

func (o *instanceIO) nanotime() int64 { return int64(o.elapsed()) }

// nanosleep backs os.sleep and timers: it sleeps for real, but never past
// the cell's deadline, and wakes when the cell is stopped.
func (o *instanceIO) nanosleep(ns int64) {
	o.mu.Lock()
	c := o.cell
	o.mu.Unlock()
	if c == nil || ns <= 0 {
		return
	}
	c.sleep(time.Duration(ns))
}

// moduleConfig gives an instance no arguments, no environment, no file
// system (not even a working directory), stdout and stderr into the cell,
// and clocks and sleep that belong to the cell.
func (e *engine) moduleConfig(io *instanceIO, rand io.Reader) wazero.ModuleConfig {
	return wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithStdout(io).
		WithStderr(io).
		WithWalltime(io.walltime, sys.ClockResolution(time.Microsecond)).
		WithNanotime(io.nanotime, sys.ClockResolution(time.Microsecond)).
		WithNanosleep(io.nanosleep).
		WithRandSource(rand)
}

// newInstance instantiates the module and creates a QuickJS runtime with
// the given JS memory limit (0 = none) and stack limit.
func (e *engine) newInstance(ctx context.Context, memLimit, stackSize uint32, rand io.Reader) (*instance, error) {
	io := &instanceIO{}
	mod, err := e.rt.InstantiateModule(ctx, e.compiled, e.moduleConfig(io, rand))
	if err != nil {
		return nil, fmt.Errorf("instantiate quickjs: %w", err)
	}
	in := &instance{mod: mod, mem: mod.Memory(), io: io, fns: make(map[string]api.Function, 24)}
	if err := e.guard(ctx, in); err != nil {
		in.close(ctx)
		return nil, err
	}
	q, err := in.call(ctx, "New_QJS", uint64(memLimit), uint64(stackSize), 0, 0)
	if err != nil || q == 0 {
		in.close(ctx)
		return nil, fmt.Errorf("create quickjs runtime: %v", err)
	}
	in.qjs = uint32(q)
	jctx, err := in.call(ctx, "QJS_GetContext", q)
	if err != nil {
		in.close(ctx)
		return nil, err
	}
	in.jctx = uint32(jctx)
	rtp, ok := in.mem.ReadUint32Le(in.qjs)
	if !ok {
		in.close(ctx)
		return nil, errors.New("read JSRuntime pointer")
	}
	in.rt = rtp
	if rtp < e.stackTop {
		in.close(ctx)
		return nil, errors.New("quickjs runtime allocated below the stack")
	}
	return in, nil
}

// canaryLen bytes just below the stack region hold a pattern; a stack
// overflow overwrites them (see overflowed).
const canaryLen = 256

// guard fills the heap below the stack region with blocks that are never
// freed, so nothing of QuickJS lives where a stack overflow lands first,
// and writes the canary below the stack.
func (e *engine) guard(ctx context.Context, in *instance) error {
	for _, size := range []uint64{4096, 512, 64, 8} {
		for i := 0; ; i++ {
			if i > 256 {
				return errors.New("heap layout: guard blocks never reached the stack")
			}
			p, err := in.call(ctx, "malloc", size)
			if err != nil {
				return err
			}
			if uint32(p) >= e.stackTop {
				if err := in.free(ctx, uint32(p)); err != nil {
					return err
				}
				break
			}
		}
	}
	return in.writeCanary(e.stackLow)
}

func (in *instance) writeCanary(stackLow uint32) error {
	b, ok := in.mem.Read(stackLow-canaryLen, canaryLen)
	if !ok {
		return errors.New("canary out of range")
	}
	for i := range b {
		b[i] = byte(0xA5 ^ i)
	}
	return nil
}

// overflowed reports whether the C stack ran past its region.
func (e *engine) overflowed(in *instance) bool {
	b, ok := in.mem.Read(e.stackLow-canaryLen, canaryLen)
	if !ok {
		return true
	}
	for i := range b {
		if b[i] != byte(0xA5^i) {
			return true
		}
	}
	return false
}

// memoryMin returns the initial page count of the module's memory.
func memoryMin(mod []byte) (uint32, error) {
	for i := 8; i < len(mod); {
		id := mod[i]
		size, n := uleb(mod[i+1:])
		if n == 0 {
			break
		}
		start := i + 1 + n
		if id == 5 && start+2 < len(mod) {
			min, m := uleb(mod[start+2:])
			if m == 0 {
				break
			}
			return uint32(min), nil
		}
		i = start + int(size)
	}
	return 0, errors.New("memory section not found")
}

// prepare creates the template instance (QuickJS runtime, host function,
// prelude), calibrates the runtime field offsets and takes the snapshot.
func (e *engine) prepare(ctx context.Context, prelude string, memLimit uint32, rand io.Reader) error {
	if err := e.calibrate(ctx, rand); err != nil {
		return err
	}
	in, err := e.newInstance(ctx, memLimit, 0, rand)
	if err != nil {
		return err
	}
	defer in.close(ctx)
	if !e.setHandler(in) {
		return errors.New("install interrupt handler")
	}
	if err := in.installHost(ctx, "__kairos_host", 1); err != nil {
		return fmt.Errorf("install host function: %w", err)
	}
	exc, err := in.eval(ctx, "<prelude>", prelude, evalGlobal)
	if err != nil {
		return fmt.Errorf("prelude: %w", err)
	}
	if exc != "" {
		return fmt.Errorf("prelude: %s", exc)
	}
	b, ok := in.mem.Read(0, in.mem.Size())
	if !ok {
		return errors.New("read snapshot")
	}
	e.snapshot = bytes.Clone(b)
	e.snapQJS, e.snapRT, e.snapCtx = in.qjs, in.rt, in.jctx
	return nil
}

// clone instantiates the module and copies the snapshot into it: the cost
// of a fresh, fully initialised cell is one instantiation and one copy.
func (e *engine) clone(ctx context.Context, rand io.Reader) (*instance, error) {
	io := &instanceIO{}
	mod, err := e.rt.InstantiateModule(ctx, e.compiled, e.moduleConfig(io, rand))
	if err != nil {
		return nil, fmt.Errorf("instantiate quickjs: %w", err)
	}
	mem := mod.Memory()
	if need := uint32(len(e.snapshot)); mem.Size() < need {
		if _, ok := mem.Grow((need - mem.Size()) / wasmPage); !ok {
			_ = mod.Close(ctx)
			return nil, errors.New("grow memory for snapshot")
		}
	}
	if !mem.Write(0, e.snapshot) {
		_ = mod.Close(ctx)
		return nil, errors.New("write snapshot")
	}
	return &instance{mod: mod, mem: mem, io: io, qjs: e.snapQJS, rt: e.snapRT, jctx: e.snapCtx,
		fns: make(map[string]api.Function, 24)}, nil
}

func (in *instance) close(ctx context.Context) {
	if in.mod != nil {
		_ = in.mod.Close(ctx)
	}
}

func (in *instance) fn(name string) api.Function {
	f, ok := in.fns[name]
	if !ok {
		f = in.mod.ExportedFunction(name)
		in.fns[name] = f
	}
	return f
}

// call calls an exported function and returns its first result.
func (in *instance) call(ctx context.Context, name string, args ...uint64) (uint64, error) {
	f := in.fn(name)
	if f == nil {
		return 0, fmt.Errorf("quickjs export %s missing", name)
	}
	res, err := f.Call(ctx, args...)
	if err != nil {
		return 0, err
	}
	if len(res) == 0 {
		return 0, nil
	}
	return res[0], nil
}

// cstring copies s into WASM memory, NUL terminated; free it with free.
func (in *instance) cstring(ctx context.Context, s string) (uint32, error) {
	p, err := in.call(ctx, "malloc", uint64(len(s)+1))
	if err != nil {
		return 0, err
	}
	if p == 0 {
		return 0, errOOM
	}
	buf, ok := in.mem.Read(uint32(p), uint32(len(s)+1))
	if !ok {
		return 0, errOOM
	}
	copy(buf, s)
	buf[len(s)] = 0
	return uint32(p), nil
}

func (in *instance) free(ctx context.Context, p uint32) error {
	if p == 0 {
		return nil
	}
	_, err := in.call(ctx, "free", uint64(p))
	return err
}

var errOOM = errors.New("out of memory")

// newString creates a JS string value.
func (in *instance) newString(ctx context.Context, s string) (uint64, error) {
	p, err := in.cstring(ctx, s)
	if err != nil {
		return 0, err
	}
	v, err := in.call(ctx, "QJS_NewString", uint64(in.jctx), uint64(p))
	if ferr := in.free(ctx, p); err == nil {
		err = ferr
	}
	return v, err
}

// toString converts a JS value to a Go string (as String(v) would). ok is
// false when the conversion threw.
func (in *instance) toString(ctx context.Context, v uint64) (string, bool, error) {
	pp, err := in.call(ctx, "QJS_ToCString", uint64(in.jctx), v)
	if err != nil {
		return "", false, err
	}
	if pp == 0 {
		return "", false, nil
	}
	packed, ok := in.mem.ReadUint64Le(uint32(pp))
	if !ok {
		return "", false, errors.New("bad string pointer")
	}
	sp, n := uint32(packed>>32), uint32(packed)
	b, ok := in.mem.Read(sp, n)
	if !ok {
		return "", false, errors.New("bad string pointer")
	}
	s := string(b)
	if _, err := in.call(ctx, "JS_FreeCString", uint64(in.jctx), uint64(sp)); err != nil {
		return "", false, err
	}
	return s, true, in.free(ctx, uint32(pp))
}

func (in *instance) freeValue(ctx context.Context, v uint64) error {
	_, err := in.call(ctx, "QJS_FreeValue", uint64(in.jctx), v)
	return err
}

// JS eval flags (quickjs.h).
const (
	evalGlobal = 0
	evalStrict = 1 << 3
	evalAsync  = 1 << 7
)

// eval evaluates code as a global script (top-level await allowed when
// flags has evalAsync) and runs the job loop. It returns the exception text
// ("" if none). After an error the instance must be discarded, so nothing
// is freed then.
func (in *instance) eval(ctx context.Context, file, code string, flags uint64) (string, error) {
	cp, err := in.cstring(ctx, code)
	if err != nil {
		return "", err
	}
	fp, err := in.cstring(ctx, file)
	if err != nil {
		return "", err
	}
	op, err := in.call(ctx, "QJS_CreateEvalOption", uint64(cp), 0, 0, uint64(fp), flags)
	if err != nil {
		return "", err
	}
	if op == 0 {
		return "", errOOM
	}
	v, err := in.call(ctx, "QJS_Eval", uint64(in.jctx), op)
	if err != nil {
		return "", err
	}
	for _, p := range []uint32{uint32(op), fp, cp} {
		if err := in.free(ctx, p); err != nil {
			return "", err
		}
	}
	isExc, err := in.call(ctx, "QJS_IsException", v)
	if err != nil {
		return "", err
	}
	if isExc&0xff == 0 {
		return "", in.freeValue(ctx, v)
	}
	return in.exception(ctx)
}

// exception takes the pending exception and formats it with its stack.
func (in *instance) exception(ctx context.Context) (string, error) {
	exc, err := in.call(ctx, "JS_GetException", uint64(in.jctx))
	if err != nil {
		return "", err
	}
	defer in.freeValue(ctx, exc)
	msg, ok, err := in.toString(ctx, exc)
	if err != nil {
		return "", err
	}
	if !ok {
		msg = "uncaught exception"
	}
	sp, err := in.cstring(ctx, "stack")
	if err != nil {
		return msg, err
	}
	defer in.free(ctx, sp)
	st, err := in.call(ctx, "JS_GetPropertyStr", uint64(in.jctx), exc, uint64(sp))
	if err != nil {
		return msg, err
	}
	defer in.freeValue(ctx, st)
	if isStr, _ := in.call(ctx, "QJS_IsString", st); isStr&0xff != 0 {
		if s, ok, err := in.toString(ctx, st); err == nil && ok && s != "" {
			msg += "\n" + s
		}
	}
	return msg, nil
}

// installHost defines a global function name that calls the host with
// handler id.
func (in *instance) installHost(ctx context.Context, name string, id uint64) error {
	f, err := in.call(ctx, "QJS_CreateFunctionProxy", uint64(in.jctx), id, 0, 0)
	if err != nil {
		return err
	}
	g, err := in.call(ctx, "JS_GetGlobalObject", uint64(in.jctx))
	if err != nil {
		return err
	}
	defer in.freeValue(ctx, g)
	np, err := in.cstring(ctx, name)
	if err != nil {
		return err
	}
	defer in.free(ctx, np)
	r, err := in.call(ctx, "JS_SetPropertyStr", uint64(in.jctx), g, uint64(np), f)
	if err != nil {
		return err
	}
	if int32(r) < 0 {
		return fmt.Errorf("define %s", name)
	}
	return nil
}

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

// wasmModule is the little of a module's structure the engine needs.
type wasmModule struct {
	nimp   uint32   // imported functions (they come first in the index space)
	sig    []bool   // per defined function: is it (i32) -> i32
	sig2   []bool   // per defined function: is it (i32, i32) -> i32
	bodies [][]byte // per defined function
	table  [][2]uint32
}

func parseModule(mod []byte) (*wasmModule, error) {
	bad := errors.New("unexpected wasm module structure")
	if len(mod) < 8 {
		return nil, bad
	}
	secs := map[byte][]byte{}
	for i := 8; i < len(mod); {
		id := mod[i]
		size, n := uleb(mod[i+1:])
		if n == 0 {
			return nil, bad
		}
		start := i + 1 + n
		end := start + int(size)
		if end > len(mod) || end < start {
			return nil, bad
		}
		if _, ok := secs[id]; !ok {
			secs[id] = mod[start:end]
		}
		i = end
	}
	r := &reader{}
	m := &wasmModule{}
	// Types.
	r.b = secs[1]
	var one, two []bool
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		if r.byte() != 0x60 {
			return nil, bad
		}
		ps := r.bytes(int(r.u()))
		rs := r.bytes(int(r.u()))
		one = append(one, string(ps) == "\x7f" && string(rs) == "\x7f")
		two = append(two, string(ps) == "\x7f\x7f" && string(rs) == "\x7f")
	}
	// Imports: functions only.
	r.b = secs[2]
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		r.bytes(int(r.u()))
		r.bytes(int(r.u()))
		if r.byte() != 0 {
			return nil, bad
		}
		r.u()
		m.nimp++
	}
	// Functions.
	r.b = secs[3]
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		t := r.u()
		if t >= uint64(len(one)) {
			return nil, bad
		}
		m.sig = append(m.sig, one[t])
		m.sig2 = append(m.sig2, two[t])
	}
	// Code.
	r.b = secs[10]
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		m.bodies = append(m.bodies, r.bytes(int(r.u())))
	}
	// Elements: active segments of function indices at i32.const offsets.
	r.b = secs[9]
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		if r.u() != 0 || r.byte() != 0x41 {
			return nil, bad
		}
		off := r.s()
		if r.byte() != 0x0b {
			return nil, bad
		}
		for q, n := uint64(0), r.u(); q < n && r.ok(); q++ {
			m.table = append(m.table, [2]uint32{uint32(off) + uint32(q), uint32(r.u())})
		}
	}
	if r.err || len(m.bodies) != len(m.sig) {
		return nil, bad
	}
	return m, nil
}

// reader reads LEB128 numbers and bytes, remembering any overrun.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) ok() bool { return !r.err }

func (r *reader) u() uint64 {
	v, n := uleb(r.b)
	if n == 0 {
		r.err, r.b = true, nil
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) s() int64 {
	v, n := sleb(r.b)
	if n == 0 {
		r.err, r.b = true, nil
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.err = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.err, r.b = true, nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// findPollFunction finds __js_poll_interrupts in the module (which has no
// name section): the only function of type (i32) -> i32 whose short body
// resets the interrupt counter (i32.const 10000) and calls the interrupt
// handler through the table (call_indirect). calibrate checks the guess.
func findPollFunction(mod []byte) (uint32, error) {
	m, err := parseModule(mod)
	if err != nil {
		return 0, err
	}
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
func findHandler(mod []byte) (slot, index uint32, err error) {
	m, err := parseModule(mod)
	if err != nil {
		return 0, 0, err
	}
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
