package sandbox

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/redact"
	"github.com/tetratelabs/wazero/sys"
)

//go:embed prelude.js
var prelude string

// Config configures a Runner. Every field is optional.
type Config struct {
	// CacheDir holds wazero's compilation cache (cmd sets it to
	// KAIROS_DATA_DIR/wazero-cache); empty means an in-memory cache, so the
	// module is compiled again in every process.
	CacheDir string
	// HTTPClient makes the cells' network calls; http.DefaultClient's
	// transport when nil. Redirects are re-checked against the policy.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Now is the clock used when a task has no Now of its own.
	Now func() time.Time
	// PoolSize is how many initialised instances are kept ready (default 2;
	// negative disables the pool).
	PoolSize int
	// CloseWait bounds how long Close lets running cells finish by
	// themselves (default DefaultCloseWait; Close's context may end it
	// sooner); then they are stopped as at the end of their time budget.
	CloseWait time.Duration
}

// DefaultCloseWait is Config.CloseWait's default. stopWait bounds the
// wait, once they are told to stop, for cells to unwind (at their next
// interrupt poll, or as soon as a host call sees its context end).
const (
	DefaultCloseWait = 5 * time.Second
	stopWait         = 5 * time.Second
)

const (
	// Budget.MemoryLimit bounds the cell's whole linear memory (the engine
	// itself and its 1 MiB stack take about 1.4 MiB). MaxMemoryLimit caps
	// it; MinMemoryLimit floors it.
	MaxMemoryLimit = 512 << 20
	MinMemoryLimit = 4 << 20
)

const (
	stackPages = 16                                // 1 MiB C stack, about 5000 JavaScript frames
	maxPages   = (MaxMemoryLimit + 64<<20) / 65536 // the wazero backstop per instance
)

// Runner runs JavaScript cells. It implements kairos.CodeRunner and is
// safe for concurrent use.
type Runner struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client

	mu     sync.Mutex
	eng    *engine
	closed bool
	pool   chan *instance
	quit   chan struct{}
	filler sync.WaitGroup
	active sync.WaitGroup
	// closing ends when Close stops the cells still running.
	closing  context.Context
	stopRuns context.CancelFunc
}

var _ kairos.CodeRunner = (*Runner)(nil)

// New returns a Runner. It compiles nothing yet: the engine is compiled on
// the first Run or Warm, so an idle process stays small.
func New(ctx context.Context, cfg Config) (*Runner, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PoolSize == 0 {
		cfg.PoolSize = 2
	}
	if cfg.CloseWait <= 0 {
		cfg.CloseWait = DefaultCloseWait
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Transport: http.DefaultTransport, Timeout: time.Minute}
	}
	closing, stopRuns := context.WithCancel(context.Background())
	return &Runner{cfg: cfg, log: cfg.Logger.With("component", "sandbox"), client: client, closing: closing, stopRuns: stopRuns}, nil
}

// Warm compiles the engine, prepares the snapshot and fills the pool.
func (r *Runner) Warm(ctx context.Context) error {
	_, err := r.engine(ctx)
	return err
}

func (r *Runner) engine(ctx context.Context) (*engine, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "sandbox is closed")
	}
	if r.eng != nil {
		return r.eng, nil
	}
	t0 := time.Now()
	eng, err := newEngine(ctx, r.cfg.CacheDir, maxPages, stackPages)
	if err != nil {
		return nil, fmt.Errorf("start engine: %w", err)
	}
	if err := eng.prepare(ctx, prelude, uint32(kairos.DefaultBudget().MemoryLimit), rand.Reader); err != nil {
		_ = eng.close(ctx)
		return nil, fmt.Errorf("prepare engine: %w", err)
	}
	r.eng = eng
	r.log.Debug("engine ready", "took", time.Since(t0), "snapshot_bytes", len(eng.snapshot))
	if r.cfg.PoolSize > 0 {
		r.pool = make(chan *instance, r.cfg.PoolSize)
		r.quit = make(chan struct{})
		r.filler.Add(1)
		go r.fill(eng, r.pool, r.quit)
	}
	return eng, nil
}

// fill keeps the pool of ready instances full until quit closes.
func (r *Runner) fill(eng *engine, pool chan *instance, quit chan struct{}) {
	defer r.filler.Done()
	ctx := context.Background()
	for {
		in, err := eng.clone(ctx, rand.Reader)
		if err != nil {
			r.log.Error("prepare cell instance", "err", err)
			select {
			case <-quit:
				return
			case <-time.After(time.Second):
				continue
			}
		}
		select {
		case pool <- in:
		case <-quit:
			in.close(ctx)
			return
		}
	}
}

func (r *Runner) instance(ctx context.Context, eng *engine) (*instance, error) {
	if r.pool != nil {
		select {
		case in := <-r.pool:
			return in, nil
		default:
		}
	}
	return eng.clone(ctx, rand.Reader)
}

// Close refuses new cells, lets running ones finish for up to
// Config.CloseWait or until ctx ends, then stops those left ("cell
// cancelled", as a cancelled context does) and releases the pool and the
// engine. If stopped cells have not unwound within a few seconds more it
// returns an error and leaves the engine to the process's exit rather
// than close it under them.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	eng, quit, pool := r.eng, r.quit, r.pool
	r.mu.Unlock()
	if err := r.drain(ctx); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx) // releasing must not be cut short
	if quit != nil {
		close(quit)
		r.filler.Wait()
		for {
			select {
			case in := <-pool:
				in.close(ctx)
				continue
			default:
			}
			break
		}
	}
	if eng != nil {
		return eng.close(ctx)
	}
	return nil
}

// drain waits for the running cells: up to CloseWait or ctx's end, then
// stops them and waits up to stopWait for them to return.
func (r *Runner) drain(ctx context.Context) error {
	idle := make(chan struct{})
	go func() {
		r.active.Wait()
		close(idle)
	}()
	wait, cancel := context.WithTimeout(ctx, r.cfg.CloseWait)
	defer cancel()
	select {
	case <-idle:
		return nil
	case <-wait.Done():
	}
	r.log.Warn("stopping running cells to close the sandbox")
	r.stopRuns()
	select {
	case <-idle:
		return nil
	case <-time.After(stopWait):
		return kairos.Errorf(kairos.EINTERNAL, "sandbox: running cells did not stop within %s of being told to; engine left open", stopWait)
	}
}

// withDefaults fills zero budget fields from kairos.DefaultBudget and
// clamps the memory limit.
func withDefaults(b kairos.Budget) kairos.Budget {
	def := kairos.DefaultBudget()
	if b.TimeBudget <= 0 && b.DeadlineAt.IsZero() {
		b.TimeBudget = def.TimeBudget
	}
	fill := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	if b.MaxToolCalls <= 0 {
		b.MaxToolCalls = def.MaxToolCalls
	}
	if b.MaxNetworkCalls <= 0 {
		b.MaxNetworkCalls = def.MaxNetworkCalls
	}
	fill(&b.MaxBytesRead, def.MaxBytesRead)
	fill(&b.MaxBytesWritten, def.MaxBytesWritten)
	fill(&b.MemoryLimit, def.MemoryLimit)
	fill(&b.MaxOutputBytes, def.MaxOutputBytes)
	b.MemoryLimit = min(max(b.MemoryLimit, MinMemoryLimit), MaxMemoryLimit)
	return b
}

// Run runs one cell. Every failure of the cell (syntax, exceptions,
// budgets, policy refusals, a leak-scan rejection) is a result with
// Success false; an error means the task was invalid (EINVALID) or the
// runner itself failed.
func (r *Runner) Run(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
	if err := checkTask(task); err != nil {
		return nil, err
	}
	start := time.Now()
	res := &kairos.CellResult{ID: kairos.NewID()}
	red := redact.ForSecrets(task.Secrets)
	if !task.Credentials && task.Secrets != nil {
		t := *task // features.credentials_access off: no secrets at all
		t.Secrets = nil
		task = &t
	}
	if reason := ScanForLeaks(task.Code, task.Secrets); reason != "" {
		return r.rejected(res, task, red.Scrub("code rejected: "+reason), start), nil
	}

	if err := r.enter(); err != nil {
		return nil, err
	}
	defer r.active.Done()

	eng, err := r.engine(ctx)
	if err != nil {
		return nil, err
	}
	in, err := r.instance(ctx, eng)
	if err != nil {
		return nil, fmt.Errorf("cell instance: %w", err)
	}
	defer in.close(context.Background())

	// The budget starts now: compiling the engine or waiting for an
	// instance is not the cell's time.
	start = time.Now()
	b := withDefaults(task.Budget)
	deadline := cellDeadline(ctx, b, start)

	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	c := &cell{
		task:     task,
		budget:   b,
		deadline: deadline,
		start:    start,
		ctx:      cctx,
		cancel:   cancel,
		client:   cellClient(r.client, &task.Network),
		in:       in,
		eng:      eng,
		red:      red,
	}
	c.seal()
	c.ctxStop = func() { c.stopForContext(ctx) }
	stopWatch := context.AfterFunc(cctx, c.ctxStop)
	defer stopWatch()
	closeWatch := context.AfterFunc(r.closing, func() { c.stop(kairos.CatTimeout, "cell cancelled: the sandbox is closing") })
	defer closeWatch()

	now := task.Now
	if now.IsZero() {
		now = r.cfg.Now()
	}
	in.io.attach(c, start, now)
	exc, evalErr := c.evaluate()
	res.Duration = time.Since(start)
	r.finish(c, res, exc, evalErr, red)
	if res.ErrorCategory == kairos.CatSyntax && reStaticImport.MatchString(task.Code) {
		res.ErrorCategory = kairos.CatImport
	}
	r.log.Debug("cell finished", "id", res.ID, "verb", task.Verb, "risk_tier", b.RiskTier,
		"success", res.Success, "category", res.ErrorCategory, "duration", res.Duration)
	return res, nil
}

// enter counts a cell in, unless the runner is closed.
func (r *Runner) enter() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return kairos.Errorf(kairos.EUNAVAILABLE, "sandbox is closed")
	}
	r.active.Add(1)
	return nil
}

// evaluate runs the set-up call and then the cell's code, and marks the
// cell done (host calls after this are refused).
func (c *cell) evaluate() (exc string, err error) {
	callCtx := context.WithValue(context.Background(), hostKey{}, c)
	exc, err = c.in.eval(callCtx, "<setup>", setupCall(c.task), evalGlobal)
	if err == nil && exc == "" {
		exc, err = c.in.eval(callCtx, "<cell>", c.task.Code, evalGlobal|evalAsync)
	}
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
	return exc, err
}

// stopForContext stops the cell because its context (parent, or the
// deadline derived from it) ended: "cell cancelled" when parent was
// cancelled, a time budget otherwise.
func (c *cell) stopForContext(parent context.Context) {
	if parent.Err() != nil && !errors.Is(parent.Err(), context.DeadlineExceeded) {
		c.stop(kairos.CatTimeout, "cell cancelled")
		return
	}
	c.stop(kairos.CatTimeout, fmt.Sprintf("time budget of %s exhausted", c.deadline.Sub(c.start).Round(time.Millisecond)))
}

// rejected is the result of a cell refused before it ran.
func (r *Runner) rejected(res *kairos.CellResult, task *kairos.CellTask, why string, start time.Time) *kairos.CellResult {
	res.ExitCode = -1
	res.ErrorCategory = kairos.CatRejected
	res.Error, res.Stderr = why, why
	res.Duration = time.Since(start)
	r.log.Info("cell rejected", "id", res.ID, "verb", task.Verb, "reason", why)
	return res
}

// cellDeadline is when a cell started at start must end: its time
// budget, its own deadline or the context's, whichever comes first.
func cellDeadline(ctx context.Context, b kairos.Budget, start time.Time) time.Time {
	deadline := start.Add(b.TimeBudget)
	if b.TimeBudget <= 0 || (!b.DeadlineAt.IsZero() && b.DeadlineAt.Before(deadline)) {
		deadline = b.DeadlineAt
	}
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return deadline
}

// checkTask refuses a task that cannot run (EINVALID).
func checkTask(task *kairos.CellTask) error {
	if task == nil {
		return kairos.Errorf(kairos.EINVALID, "no cell task")
	}
	if !slices.Contains(kairos.Verbs, task.Verb) {
		return kairos.Errorf(kairos.EINVALID, "cell task verb %q is not one of %s", kairos.Clip(task.Verb, 32), strings.Join(kairos.Verbs, ", "))
	}
	if strings.TrimSpace(task.Code) == "" {
		return kairos.Errorf(kairos.EINVALID, "cell task has no code")
	}
	return nil
}

// setupCall is the prelude's set-up call for task: whether the network
// and secret globals exist, the Math.random seed, the checkpoint being
// resumed.
func setupCall(task *kairos.CellTask) string {
	var seed [4]byte
	_, _ = rand.Read(seed[:])
	resume := "null"
	if task.Resume != nil {
		rb, _ := json.Marshal(task.Resume)
		js, _ := json.Marshal(string(rb))
		resume = string(js)
	}
	return fmt.Sprintf("__kairos_setup(%t, %t, %d, %s)", task.Network.Enabled, task.Credentials, binary.LittleEndian.Uint32(seed[:]), resume)
}

// finish fills the result from the cell's state, categorised and scrubbed.
func (r *Runner) finish(c *cell, res *kairos.CellResult, exc string, evalErr error, red *redact.Redactor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stdout, stderr := c.stdout.String(), c.stderr.String()
	if c.truncated {
		stdout += "\n[output truncated]"
	}
	res.ToolCalls, res.NetworkCalls = c.toolCalls, c.networkCalls
	res.BytesRead, res.BytesWritten = c.bytesRead, c.bytesWritten
	var exitErr *sys.ExitError
	switch {
	case c.stopCat != "":
		res.ErrorCategory, res.Error = c.stopCat, c.stopMsg
	case evalErr != nil && errors.As(evalErr, &exitErr):
		res.ExitCode = int(exitErr.ExitCode())
		if res.ExitCode != 0 {
			res.ErrorCategory = kairos.CatRuntime
			res.Error = fmt.Sprintf("cell exited with status %d", res.ExitCode)
		}
	case evalErr != nil && c.eng.overflowed(c.in):
		res.ErrorCategory = kairos.CatMemory
		res.Error = "RangeError: stack overflow (call depth too deep for the cell's 1 MiB stack)"
	case evalErr != nil:
		res.ErrorCategory = kairos.CatRuntime
		msg, _, _ := strings.Cut(evalErr.Error(), "\n")
		if errors.Is(evalErr, errOOM) {
			res.ErrorCategory = kairos.CatMemory
		}
		res.Error = "engine fault: " + msg
	case exc != "":
		res.ErrorCategory, res.Error = Categorize(exc), exc
	}
	res.Success = res.ErrorCategory == ""
	if !res.Success && res.ExitCode == 0 {
		res.ExitCode = 1
	}
	if res.Error != "" {
		if stderr != "" && !strings.HasSuffix(stderr, "\n") {
			stderr += "\n"
		}
		stderr += res.Error
	}
	stdout, stderr, res.Error = redactTokens(stdout), redactTokens(stderr), redactTokens(res.Error)
	res.Stdout, res.Stderr, res.Error = red.Scrub(stdout), red.Scrub(stderr), red.Scrub(res.Error)
	if len(c.output) > 0 {
		res.Output = red.ScrubJSON(json.RawMessage(redactTokens(string(c.output))))
	}
	if c.checkpoint != nil {
		cp := *c.checkpoint
		cp.Cursor = red.Scrub(redactTokens(cp.Cursor))
		cp.Stage = red.Scrub(redactTokens(cp.Stage))
		cp.Completed = slices.Clone(cp.Completed)
		for i := range cp.Completed {
			cp.Completed[i] = red.Scrub(redactTokens(cp.Completed[i]))
		}
		if len(cp.State) > 0 {
			cp.State = red.ScrubJSON(json.RawMessage(redactTokens(string(cp.State))))
		}
		res.Checkpoint = &cp
	}
}

// attach hands the instance's WASI side to a cell.
func (o *instanceIO) attach(c *cell, start, epoch time.Time) {
	o.mu.Lock()
	o.cell, o.start, o.epoch = c, start, epoch
	o.mu.Unlock()
}
