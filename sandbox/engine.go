package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"sync"
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
	// jobFunc is the function index of JS_ExecutePendingJob (cellListener).
	jobFunc uint32
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
	// The module is patched and read once, before any runtime exists.
	wasm, err := patchLayout(qjsWasm, stackPages)
	if err != nil {
		return nil, fmt.Errorf("patch quickjs module: %w", err)
	}
	mod, err := parseModule(wasm)
	if err != nil {
		return nil, fmt.Errorf("read quickjs module: %w", err)
	}
	e := &engine{limitOffset: -1, irqOffset: -1}
	if e.pollFunc, err = findPollFunction(mod); err != nil {
		return nil, err
	}
	if e.handlerSlot, e.handlerFunc, err = findHandler(mod); err != nil {
		return nil, err
	}
	if e.jobFunc, err = findJobFunction(mod); err != nil {
		return nil, err
	}
	oldMin := mod.memMin - stackPages
	e.stackLow = oldMin * wasmPage
	e.stackTop = (oldMin + stackPages) * wasmPage

	wazeroVersion()
	if cacheDir != "" {
		e.cache, err = wazero.NewCompilationCacheWithDir(cacheDir)
		if err != nil {
			return nil, fmt.Errorf("open compilation cache: %w", err)
		}
	} else {
		e.cache = wazero.NewCompilationCache()
	}
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(e.cache).
		WithCloseOnContextDone(mode == modeCloseOnDone). // interruption: see cellListener
		WithMemoryLimitPages(maxPages).
		WithDebugInfoEnabled(false)
	e.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
	if err := e.instantiate(ctx, wasm, mode); err != nil {
		// Every error past this point closes the runtime and the cache.
		return nil, errors.Join(err, e.close(ctx))
	}
	return e, nil
}

// wazeroVersion has wazero look up its own version once, before any
// engine is made: wazero keeps it in a package variable it writes without
// a lock at first use (the compilation cache's directory and the engine
// both ask), so two engines made at once raced on it (the race detector
// caught two tests' engines; in one process the bot's cells and a
// `kairos cell run` or skill test can start together too).
var wazeroVersion = sync.OnceFunc(func() {
	ctx := context.Background()
	_ = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig()).Close(ctx)
})

// afterRuntime, when set (tests only), runs once the runtime exists; an
// error it returns fails the engine's construction there.
var afterRuntime func(wazero.Runtime) error

// instantiate sets up the runtime's host modules (WASI, the host-call
// proxy) and compiles the patched module, with the interrupt listener in
// modeListener.
func (e *engine) instantiate(ctx context.Context, wasm []byte, mode engineMode) error {
	if afterRuntime != nil {
		if err := afterRuntime(e.rt); err != nil {
			return err
		}
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, e.rt); err != nil {
		return fmt.Errorf("instantiate wasi: %w", err)
	}
	_, err := e.rt.NewHostModuleBuilder("env").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostProxy),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32, api.ValueTypeI32},
			[]api.ValueType{api.ValueTypeI64}).
		Export("jsFunctionProxy").
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("instantiate host module: %w", err)
	}
	cctx := ctx
	if mode == modeListener {
		cctx = experimental.WithFunctionListenerFactory(ctx, pollFactory{poll: e.pollFunc, handler: e.handlerFunc, jobs: e.jobFunc})
	}
	if e.compiled, err = e.rt.CompileModule(cctx, wasm); err != nil {
		return fmt.Errorf("compile quickjs: %w", err)
	}
	return nil
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
	mod, err := e.rt.InstantiateModule(withCappedMemory(ctx, io), e.compiled, e.moduleConfig(io, rand))
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
	mod, err := e.rt.InstantiateModule(withCappedMemory(ctx, io), e.compiled, e.moduleConfig(io, rand))
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
