package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/redact"
	"github.com/tetratelabs/wazero/api"
)

// cell is the host-side state of one running cell: its budgets, counters,
// captured output and the reason it was stopped.
type cell struct {
	task     *kairos.CellTask
	budget   kairos.Budget
	deadline time.Time
	start    time.Time
	halt     atomic.Bool     // set once stopCat is set
	ctx      context.Context // cancelled when the cell is stopped
	client   *http.Client
	in       *instance
	eng      *engine

	mu           sync.Mutex
	stdout       strings.Builder
	stderr       strings.Builder
	outBytes     int64
	truncated    bool
	output       json.RawMessage
	checkpoint   *kairos.Checkpoint
	toolCalls    int
	networkCalls int
	bytesRead    int64
	bytesWritten int64
	stopCat      string // category of the stop, "" while running
	stopMsg      string
	done         bool
	cancel       context.CancelFunc
	// ctxStop stops the cell for its context's end (cancellation or
	// deadline), with the reason Run gives; nil outside Run.
	ctxStop func()

	nonce    string            // of this cell's secret tokens (sealed.go)
	unsealer *strings.Replacer // token → value, used only where a request leaves
	red      *redact.Redactor  // scrubs secret values out of what comes back in
}

// errStopped unwinds the WASM stack from a host function once the cell has
// been stopped; wazero turns the panic into an error of the eval call.
var errStopped = errors.New("cell stopped")

// stop records why the cell must end (first reason wins); the engine
// unwinds at its next interrupt poll or host call, and blocking host calls
// wake up.
func (c *cell) stop(cat, msg string) {
	c.mu.Lock()
	if c.stopCat == "" && !c.done {
		c.stopCat, c.stopMsg = cat, msg
		c.halt.Store(true)
	}
	c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
}

// poll is called from QuickJS's interrupt poll and interrupt handler (see
// cellListener): it stops the cell at its deadline or when its linear
// memory outgrows Budget.MemoryLimit, and unwinds a stopped cell.
// (QuickJS's own malloc limit is useless in this build: without
// malloc_usable_size under WASI it counts 8 bytes per allocation.)
func (c *cell) poll(mod api.Module) {
	if !c.halt.Load() {
		if time.Now().After(c.deadline) {
			c.stop(kairos.CatTimeout, fmt.Sprintf("time budget of %s exhausted", c.deadline.Sub(c.start).Round(time.Millisecond)))
		} else if int64(mod.Memory().Size()) > c.budget.MemoryLimit {
			c.stop(kairos.CatMemory, fmt.Sprintf("memory limit of %d MiB reached", c.budget.MemoryLimit>>20))
		}
	}
	if c.halt.Load() {
		panic(errStopped)
	}
}

func (c *cell) stopped() bool { return c.halt.Load() }

// writeStd receives the module's WASI stdout and stderr (print and
// std.out.puts bypass console); both count against MaxOutputBytes.
func (c *cell) writeStd(p []byte) (int, error) {
	c.write(&c.stdout, string(p))
	return len(p), nil
}

// write appends to stdout or stderr within the output budget; reaching it
// stops the cell.
func (c *cell) write(b *strings.Builder, s string) {
	c.mu.Lock()
	room := c.budget.MaxOutputBytes - c.outBytes
	over := int64(len(s)) > room
	if over {
		if room > 0 {
			b.WriteString(s[:room])
		}
		c.outBytes = c.budget.MaxOutputBytes
		c.truncated = true
	} else {
		b.WriteString(s)
		c.outBytes += int64(len(s))
	}
	c.mu.Unlock()
	if over {
		c.stop(kairos.CatBudget, fmt.Sprintf("output budget of %d bytes reached", c.budget.MaxOutputBytes))
		panic(errStopped)
	}
}

// sleep waits d or until the cell is stopped; a sleep past the deadline
// sleeps until the deadline and stops the cell with a timeout.
func (c *cell) sleep(d time.Duration) {
	left := time.Until(c.deadline)
	past := d > left
	if past {
		d = left
	}
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			// Woken by the context: stop with its reason now (a
			// cancelled cell is "cancelled", not out of time), before
			// the context's own watcher gets to it.
			past = false
			if c.ctxStop != nil {
				c.ctxStop()
			}
		}
	}
	if past {
		c.stop(kairos.CatTimeout, "time budget exhausted while sleeping")
	}
	if c.stopped() {
		panic(errStopped)
	}
}

// hostError is an error thrown into the cell as a JavaScript error of the
// given name.
type hostError struct {
	name string
	msg  string
}

func (e *hostError) Error() string { return e.name + ": " + e.msg }

func jsErr(name, format string, args ...any) error {
	return &hostError{name: name, msg: fmt.Sprintf(format, args...)}
}

// hostProxy is the single imported host function. The prelude calls it as
// host(op, arg): op names the operation, arg is JSON (or raw text for
// out/err/output). It answers with {"v": value} or {"e": msg, "n": name}.
func hostProxy(ctx context.Context, mod api.Module, stack []uint64) {
	c, _ := ctx.Value(hostKey{}).(*cell)
	if c == nil {
		// Called outside a cell (prelude evaluation): nothing to do.
		stack[0] = jsUndefined
		return
	}
	if c.stopped() {
		panic(errStopped)
	}
	argc, argv := uint32(stack[2]), uint32(stack[3])
	if argc < 6 {
		stack[0] = jsUndefined
		return
	}
	mem := mod.Memory()
	opv, _ := mem.ReadUint64Le(argv + 4*8)
	argvv, _ := mem.ReadUint64Le(argv + 5*8)
	in := c.in
	op, ok, err := in.toString(ctx, opv)
	if err != nil || !ok {
		panic(fmt.Errorf("read host op: %v", err))
	}
	arg, ok, err := in.toString(ctx, argvv)
	if err != nil || !ok {
		panic(fmt.Errorf("read host argument: %v", err))
	}
	var reply string
	switch op {
	case "out":
		c.write(&c.stdout, arg)
		stack[0] = jsUndefined
		return
	case "err":
		c.write(&c.stderr, arg)
		stack[0] = jsUndefined
		return
	case "output":
		c.setOutput(arg)
		stack[0] = jsUndefined
		return
	default:
		v, err := c.dispatch(op, arg)
		if c.stopped() {
			panic(errStopped)
		}
		reply = encodeReply(v, err)
	}
	s, err := in.newString(ctx, reply)
	if err != nil {
		panic(err)
	}
	stack[0] = s
}

// jsUndefined is JS_UNDEFINED in QuickJS's NaN-boxed 32-bit representation
// (tag 3 in the high word).
const jsUndefined = uint64(3) << 32

func encodeReply(v any, err error) string {
	if err != nil {
		var he *hostError
		name, msg := "Error", err.Error()
		if errors.As(err, &he) {
			name, msg = he.name, he.msg
		}
		b, _ := json.Marshal(map[string]string{"e": msg, "n": name})
		return string(b)
	}
	b, merr := json.Marshal(map[string]any{"v": v})
	if merr != nil {
		b, _ = json.Marshal(map[string]string{"e": merr.Error(), "n": "TypeError"})
	}
	return string(b)
}

// toolCall counts one host tool call; over budget it stops the cell.
func (c *cell) toolCall() error {
	c.mu.Lock()
	c.toolCalls++
	over := c.toolCalls > c.budget.MaxToolCalls
	c.mu.Unlock()
	if over {
		c.stop(kairos.CatBudget, fmt.Sprintf("tool call budget of %d reached", c.budget.MaxToolCalls))
		return errStopped
	}
	return nil
}

func (c *cell) dispatch(op, arg string) (any, error) {
	switch op {
	case "secret", "secrets":
		if !c.task.Credentials {
			return nil, jsErr("ReferenceError", "secrets are not available in this cell")
		}
	}
	switch op {
	case "secret":
		if err := c.toolCall(); err != nil {
			return nil, err
		}
		var name string
		if err := json.Unmarshal([]byte(arg), &name); err != nil {
			return nil, jsErr("TypeError", "getSecret(name): name must be a string")
		}
		if _, ok := c.task.Secrets[name]; !ok {
			return nil, jsErr("ReferenceError", "secret %q not found; available: %s", kairos.Clip(name, 64), strings.Join(c.secretNames(), ", "))
		}
		return c.token(name), nil // sealed: the value never enters the cell
	case "secrets":
		if err := c.toolCall(); err != nil {
			return nil, err
		}
		return c.secretNames(), nil
	case "sleep":
		if err := c.toolCall(); err != nil {
			return nil, err
		}
		var ms float64
		if err := json.Unmarshal([]byte(arg), &ms); err != nil || ms != ms || ms < 0 {
			return nil, jsErr("RangeError", "sleep(ms): ms must be a non-negative number")
		}
		if ms > float64(24*time.Hour/time.Millisecond) {
			ms = float64(24 * time.Hour / time.Millisecond)
		}
		c.sleep(time.Duration(ms * float64(time.Millisecond)))
		return nil, nil
	case "files":
		if err := c.toolCall(); err != nil {
			return nil, err
		}
		return c.fileListing(), nil
	case "file":
		if err := c.toolCall(); err != nil {
			return nil, err
		}
		return c.readAttachment(arg)
	case "checkpoint":
		return c.setCheckpoint(arg)
	case "budget":
		return c.remaining(), nil
	case "fetch":
		if err := c.toolCall(); err != nil {
			return nil, err
		}
		var req fetchRequest
		if err := json.Unmarshal([]byte(arg), &req); err != nil {
			return nil, jsErr("TypeError", "fetch: bad request: %v", err)
		}
		v, err := c.fetch(&req)
		return v, c.sealErr(err)
	}
	return nil, jsErr("TypeError", "unknown host operation")
}

func (c *cell) secretNames() []string {
	names := make([]string, 0, len(c.task.Secrets))
	for k := range c.task.Secrets {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// maxStateBytes bounds a checkpoint's state.
const maxStateBytes = 256 << 10

func (c *cell) setOutput(js string) {
	c.mu.Lock()
	room := c.budget.MaxOutputBytes - c.outBytes
	if prev := int64(len(c.output)); prev > 0 {
		room += prev // output() replaces the previous value
	}
	over := int64(len(js)) > room
	if !over {
		c.outBytes += int64(len(js)) - int64(len(c.output))
		c.output = json.RawMessage(js)
	}
	c.mu.Unlock()
	if over {
		c.stop(kairos.CatBudget, fmt.Sprintf("output budget of %d bytes reached", c.budget.MaxOutputBytes))
		panic(errStopped)
	}
}

func (c *cell) setCheckpoint(arg string) (any, error) {
	var in struct {
		Cursor    string          `json:"cursor"`
		Stage     string          `json:"stage"`
		Completed []string        `json:"completed"`
		State     json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal([]byte(arg), &in); err != nil {
		return nil, jsErr("TypeError", "checkpoint: %v", err)
	}
	if len(in.State) > maxStateBytes {
		return nil, jsErr("RangeError", "checkpoint: state is larger than %d bytes", maxStateBytes)
	}
	cp := &kairos.Checkpoint{
		ContinuationID: c.task.ContinuationID,
		Cursor:         in.Cursor,
		Completed:      in.Completed,
		Stage:          in.Stage,
	}
	if cp.ContinuationID == "" {
		cp.ContinuationID = kairos.NewID()
	}
	if len(in.State) > 0 && string(in.State) != "null" {
		cp.State = in.State
		sum := sha256.Sum256(in.State)
		cp.StateBlobRef = "sha256:" + hex.EncodeToString(sum[:])
	}
	c.mu.Lock()
	c.checkpoint = cp
	c.mu.Unlock()
	return map[string]string{"continuation_id": cp.ContinuationID, "state_blob_ref": cp.StateBlobRef}, nil
}

func (c *cell) remaining() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return map[string]any{
		"ms":              time.Until(c.deadline).Milliseconds(),
		"tool_calls":      c.budget.MaxToolCalls - c.toolCalls,
		"network_calls":   c.budget.MaxNetworkCalls - c.networkCalls,
		"bytes_read":      c.budget.MaxBytesRead - c.bytesRead,
		"bytes_written":   c.budget.MaxBytesWritten - c.bytesWritten,
		"output_bytes":    c.budget.MaxOutputBytes - c.outBytes,
		"memory_bytes":    c.budget.MemoryLimit,
		"risk_tier":       c.budget.RiskTier,
		"network":         c.task.Network.Enabled,
		"continuation_id": c.task.ContinuationID,
	}
}
