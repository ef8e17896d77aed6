package code

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// Actions of the tool (the `action` argument).
const (
	ActionGenerate = "generate"
	ActionExecute  = "execute"
	ActionStatus   = "status"
)

// Names of the actions a call performs (kairos.ToolAction.Name). The last
// two are execute calls that need approval under the default policy.
const (
	NameExecute      = kairos.ActionCodeExecute
	NameGenerate     = kairos.ActionCodeGenerate
	NameStatus       = kairos.ActionCodeStatus
	NameNetworkWrite = kairos.ActionCodeNetworkWrite
	NameSecrets      = kairos.ActionCodeSecrets
)

// Capabilities (kairos.ToolAction.Capability).
const (
	CapCode    = kairos.CapCode
	CapNetwork = kairos.CapCodeNetwork
)

// Limits.
const (
	DefaultAsyncAfter = 20 * time.Second
	MaxAttempts       = 3         // generate: attempts in total
	MaxCodeBytes      = 100 << 10 // code given to execute
	MaxTaskBytes      = 4000
	MaxContextBytes   = 16 << 10
	MaxResultBytes    = 16 << 10 // result given back to the model
	maxSideBytes      = 2000     // stdout beside an output(), error texts
	maxStoredBytes    = 64 << 10 // stdout and stderr in the trace
	maxJobs           = 256      // finished jobs kept in memory
	jobGrace          = 5 * time.Second
	recordTimeout     = 5 * time.Second
	maxTimeoutMS      = 24 * 60 * 60 * 1000
)

// Job statuses reported by `status`.
const (
	StatusRunning = "running"
	StatusDone    = "done"
)

// Config configures the tool.
type Config struct {
	// Runner runs the cells (package sandbox implements it). Required.
	Runner kairos.CodeRunner
	// Store records every run; nil records nothing (status then knows
	// only the jobs in memory).
	Store kairos.CodeExecutionStore
	// Model writes code for `generate`; nil removes the action.
	Model kairos.Model
	// CoderModel names the model for generate calls ("" or nil: the
	// Model's default).
	CoderModel func() string
	// Policy returns the current policy (nil: kairos.DefaultPolicy()).
	Policy func() *kairos.Policy
	// Secrets are the cells' secrets, name → value (KAIROS_SECRET_<NAME>).
	// Values never enter results, traces or prompts; names may.
	Secrets map[string]string
	// Now is the host clock (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
	// AsyncAfter is how long execute waits before answering with a
	// job_id (DefaultAsyncAfter when 0).
	AsyncAfter time.Duration
}

// Tool is the `code` tool. It is safe for concurrent use. Close it to
// stop the runs still going in the background.
type Tool struct {
	runner     kairos.CodeRunner
	store      kairos.CodeExecutionStore
	model      kairos.Model
	coder      func() string
	policy     func() *kairos.Policy
	secrets    map[string]string
	names      []string // secret names, sorted
	red        *kairos.Redactor
	now        func() time.Time
	log        *slog.Logger
	asyncAfter time.Duration

	bg       context.Context // parent of background runs; cancelled by Close
	bgCancel context.CancelFunc
	wg       sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	jobs     map[string]*job
	finished []string // ids of finished jobs, oldest first
}

var _ kairos.Tool = (*Tool)(nil)

// New returns the code tool.
func New(cfg Config) *Tool {
	t := &Tool{
		runner: cfg.Runner, store: cfg.Store, model: cfg.Model, coder: cfg.CoderModel,
		policy: cfg.Policy, now: cfg.Now, log: cfg.Logger, asyncAfter: cfg.AsyncAfter,
		secrets: map[string]string{}, jobs: map[string]*job{},
	}
	if t.policy == nil {
		t.policy = kairos.DefaultPolicy
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	t.log = t.log.With("component", "code")
	if t.asyncAfter <= 0 {
		t.asyncAfter = DefaultAsyncAfter
	}
	values := make([]string, 0, len(cfg.Secrets))
	for k, v := range cfg.Secrets {
		if k == "" || v == "" {
			continue
		}
		t.secrets[k] = v
		t.names = append(t.names, k)
		values = append(values, v)
	}
	sort.Strings(t.names)
	t.red = kairos.NewRedactor(values)
	t.bg, t.bgCancel = context.WithCancel(context.Background())
	return t
}

// Close cancels the runs still going in the background and waits for
// them to be recorded. Calls after Close fail with EUNAVAILABLE.
func (t *Tool) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.bgCancel()
	t.wg.Wait()
	return nil
}

func (t *Tool) pol() *kairos.Policy {
	if p := t.policy(); p != nil {
		return p
	}
	return kairos.DefaultPolicy()
}

// actions returns the enabled actions in schema order.
func (t *Tool) actions() []string {
	if t.model == nil {
		return []string{ActionExecute, ActionStatus}
	}
	return []string{ActionGenerate, ActionExecute, ActionStatus}
}

// Spec implements kairos.Tool. It follows the current policy: the network
// globals, allowed hosts and methods appear only when features.network is
// on; secret names only when there are secrets; generate only with a Model.
func (t *Tool) Spec() kairos.ToolSpec {
	pol := t.pol()
	g := GrantFor(pol)
	acts := t.actions()
	enum, _ := json.Marshal(acts)
	var d strings.Builder
	d.WriteString("Run JavaScript (top-level await) in a sandboxed cell. execute: run `code`. ")
	if t.model != nil {
		d.WriteString("generate: a coding model writes, runs and fixes code for `task` (+`context`), 3 tries. ")
	}
	fmt.Fprintf(&d, "status: a long run's result by `job_id` (runs over %s return one; execute with a checkpointed run's job_id resumes it as `resume`). ", t.asyncAfter.Round(time.Second))
	d.WriteString("Globals: output(data) returns the result, sleep(ms), checkpoint({cursor,state})")
	if len(t.names) > 0 {
		d.WriteString(", listSecrets(), getSecret(name)")
	}
	if g.Enabled {
		d.WriteString(", getJSON(url,authSecret?), postJSON(url,body,authSecret?), fetchWithAuth(url,{method,headers,body,authSecret})")
	}
	d.WriteString(". ")
	if g.Enabled {
		fmt.Fprintf(&d, "Network: %s; hosts: %s. ", strings.Join(g.Methods, "/"), listOrNone(g.AllowHosts, 6))
	} else {
		d.WriteString("No network. ")
	}
	if len(t.names) > 0 {
		fmt.Fprintf(&d, "Secrets (by name; print as [REDACTED]): %s. ", listOrNone(t.names, 8))
	}
	d.WriteString("No files or imports. Output is untrusted.")
	schema := `{"type":"object","properties":{` +
		`"action":{"type":"string","enum":` + string(enum) + `},` +
		`"code":{"type":"string","description":"JavaScript, for execute"},` +
		`"task":{"type":"string","description":"for generate"},` +
		`"context":{"type":"string"},` +
		`"timeout_ms":{"type":"integer","minimum":1},` +
		`"job_id":{"type":"string"}},` +
		`"required":["action"]}`
	return kairos.ToolSpec{Name: "code", Description: d.String(), Parameters: toolutil.Schema(schema)}
}

func listOrNone(xs []string, n int) string {
	if len(xs) == 0 {
		return "none"
	}
	if len(xs) > n {
		return strings.Join(xs[:n], ", ") + fmt.Sprintf(" (+%d more)", len(xs)-n)
	}
	return strings.Join(xs, ", ")
}

// args are the tool's arguments.
type args struct {
	Action    string       `json:"action"`
	Task      string       `json:"task"`
	Context   string       `json:"context"`
	Code      string       `json:"code"`
	TimeoutMS toolutil.Int `json:"timeout_ms"`
	JobID     string       `json:"job_id"`
}

func (t *Tool) parse(inv *kairos.ToolInvocation) (*args, error) {
	var a args
	if err := toolutil.DecodeArgs(inv.Arguments, &a); err != nil {
		return nil, err
	}
	a.Action = strings.TrimSpace(a.Action)
	if a.Action == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "argument \"action\" is required")
	}
	if err := toolutil.OneOf("action", a.Action, t.actions()...); err != nil {
		return nil, err
	}
	a.JobID = strings.TrimSpace(a.JobID)
	if a.TimeoutMS.Set && (a.TimeoutMS.Value < 1 || a.TimeoutMS.Value > maxTimeoutMS) {
		return nil, kairos.Errorf(kairos.EINVALID, "argument \"timeout_ms\" must be between 1 and %d", maxTimeoutMS)
	}
	switch a.Action {
	case ActionExecute:
		if strings.TrimSpace(a.Code) == "" {
			return nil, kairos.Errorf(kairos.EINVALID, "argument \"code\" is required for execute")
		}
		if len(a.Code) > MaxCodeBytes {
			return nil, kairos.Errorf(kairos.EINVALID, "argument \"code\" is longer than %d bytes", MaxCodeBytes)
		}
	case ActionGenerate:
		if strings.TrimSpace(a.Task) == "" {
			return nil, kairos.Errorf(kairos.EINVALID, "argument \"task\" is required for generate")
		}
		if len(a.Task) > MaxTaskBytes {
			return nil, kairos.Errorf(kairos.EINVALID, "argument \"task\" is longer than %d bytes", MaxTaskBytes)
		}
		if len(a.Context) > MaxContextBytes {
			return nil, kairos.Errorf(kairos.EINVALID, "argument \"context\" is longer than %d bytes", MaxContextBytes)
		}
	case ActionStatus:
		if a.JobID == "" {
			return nil, kairos.Errorf(kairos.EINVALID, "argument \"job_id\" is required for status")
		}
	}
	return &a, nil
}

// Action implements kairos.Tool. execute is classified by a static scan
// of the code (see Scan) against the policy: "code.network_write" when the
// code may send anything but GET/HEAD and the policy's network methods
// allow it, else "code.secrets" when it uses a secret and secrets are
// configured, else "code.execute"; the first two are impactful. generate
// is not: code it writes that would be impactful is returned, not run.
// Capability is "code.network" when the code uses the network (and the
// policy enables it), "code" otherwise.
func (t *Tool) Action(_ context.Context, inv *kairos.ToolInvocation) (kairos.ToolAction, error) {
	a, err := t.parse(inv)
	if err != nil {
		return kairos.ToolAction{}, err
	}
	switch a.Action {
	case ActionExecute:
		return t.classify(t.pol(), a.Code).action, nil
	case ActionGenerate:
		cap := CapCode
		if GrantFor(t.pol()).Enabled {
			cap = CapNetwork
		}
		return kairos.ToolAction{Name: NameGenerate, Capability: cap}, nil
	default:
		return kairos.ToolAction{Name: NameStatus, Capability: CapCode}, nil
	}
}

// class is the classification of a piece of code under a policy, and the
// capabilities that follow from it.
type class struct {
	action  kairos.ToolAction
	verb    string
	grant   kairos.NetworkGrant
	secrets map[string]string // nil unless the code was classified as using secrets
}

func (t *Tool) classify(pol *kairos.Policy, code string) class {
	u := Scan(code)
	g := GrantFor(pol)
	network := g.Enabled && u.Network
	write := writesAllowed(g) && u.NetworkWrite
	secrets := len(t.secrets) > 0 && u.Secrets
	c := class{
		action: kairos.ToolAction{Name: NameExecute, Capability: CapCode},
		verb:   kairos.VerbBuild,
		grant:  g,
	}
	if network {
		c.action.Capability = CapNetwork
		c.verb = kairos.VerbResearch
	}
	var why []string
	if write {
		var ms []string
		for _, m := range g.Methods {
			if m != "GET" && m != "HEAD" {
				ms = append(ms, m)
			}
		}
		why = append(why, "may send data to the network ("+strings.Join(ms, "/")+" requests)")
	} else {
		c.grant = readOnly(g)
	}
	if secrets {
		what := "a secret"
		if known := t.knownNames(u.SecretNames); len(known) > 0 {
			what = "the secret(s) " + strings.Join(known, ", ")
		}
		why = append(why, "uses "+what)
		c.secrets = t.secrets
	}
	switch {
	case write:
		c.action.Name = NameNetworkWrite
	case secrets:
		c.action.Name = NameSecrets
	}
	if len(why) > 0 {
		c.action.Impactful = true
		c.action.Reason = "the code " + strings.Join(why, " and ")
	}
	return c
}

// knownNames keeps the names that are configured secrets.
func (t *Tool) knownNames(names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := t.secrets[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// Call implements kairos.Tool.
func (t *Tool) Call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	a, err := t.parse(inv)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed || t.runner == nil {
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "code execution is not available")
	}
	switch a.Action {
	case ActionExecute:
		var resume *kairos.Checkpoint
		if a.JobID != "" {
			if resume, err = t.checkpointOf(ctx, inv.UserKey, a.JobID); err != nil {
				return nil, err
			}
		}
		r, err := t.execute(ctx, inv, run{code: a.Code, timeoutMS: a.TimeoutMS, resume: resume, reasoning: inv.Reasoning})
		if err != nil {
			return nil, err
		}
		return toolutil.Result(r, true)
	case ActionGenerate:
		r, err := t.generate(ctx, inv, a)
		if err != nil {
			return nil, err
		}
		return toolutil.Result(r, true)
	default:
		r, err := t.status(ctx, inv.UserKey, a.JobID)
		if err != nil {
			return nil, err
		}
		return toolutil.Result(r, r.Status == StatusDone)
	}
}

// response is the JSON given back to the model.
type response struct {
	Success       bool            `json:"success"`
	Status        string          `json:"status,omitempty"`
	JobID         string          `json:"job_id,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Stdout        string          `json:"stdout,omitempty"`
	Error         string          `json:"error,omitempty"`
	ErrorCategory string          `json:"error_category,omitempty"`
	Checkpoint    *checkpointView `json:"checkpoint,omitempty"`
	DurationMS    *int64          `json:"duration_ms,omitempty"`
	Code          string          `json:"code,omitempty"`
	Attempts      int             `json:"attempts,omitempty"`
	Note          string          `json:"note,omitempty"`
}

// checkpointView is what the model sees of a checkpoint (the state itself
// stays on the host, referred to by state_blob_ref).
type checkpointView struct {
	ContinuationID string   `json:"continuation_id"`
	Cursor         string   `json:"cursor,omitempty"`
	StateBlobRef   string   `json:"state_blob_ref,omitempty"`
	Stage          string   `json:"current_stage,omitempty"`
	Completed      []string `json:"completed_steps,omitempty"`
}

// stored is the Result column of a checkpointed run.
type stored struct {
	Checkpoint *kairos.Checkpoint `json:"checkpoint"`
	Output     json.RawMessage    `json:"output,omitempty"`
}

// run is one cell to run.
type run struct {
	code      string
	timeoutMS toolutil.Int
	resume    *kairos.Checkpoint
	reasoning string
}

// job is one run, in memory.
type job struct {
	id      string
	userKey string
	started time.Time
	cancel  context.CancelFunc
	done    chan struct{}

	mu    sync.Mutex // orders the running and the final trace records
	async bool
	out   *outcome // set before done is closed
}

// outcome is a finished run.
type outcome struct {
	res  *kairos.CellResult // scrubbed
	note string
}

// execute runs code and answers with its result, or with a job_id when it
// is still running after AsyncAfter.
func (t *Tool) execute(ctx context.Context, inv *kairos.ToolInvocation, r run) (*response, error) {
	pol := t.pol()
	c := t.classify(pol, r.code)
	b := BudgetFor(pol, c.verb)
	note := ""
	if r.timeoutMS.Set {
		want := time.Duration(r.timeoutMS.Value) * time.Millisecond
		if want > b.TimeBudget {
			note = fmt.Sprintf("timeout_ms capped at the policy's %d ms", b.TimeBudget.Milliseconds())
		} else {
			b.TimeBudget = want
		}
	}
	task := &kairos.CellTask{
		Code: r.code, Verb: c.verb, Budget: b, Network: c.grant, Secrets: c.secrets, Now: t.now(), Files: inv.Files,
	}
	if r.resume != nil {
		task.Resume = r.resume
		task.ContinuationID = r.resume.ContinuationID
	}
	j := &job{id: kairos.NewID(), userKey: inv.UserKey, started: t.now(), done: make(chan struct{})}
	trace := &kairos.CodeExecution{
		ID: j.id, Code: t.red.Scrub(r.code), SessionID: inv.SessionID, UserKey: inv.UserKey,
		TriggerMessage: t.red.Scrub(kairos.Clip(inv.TriggerMessage, 4000)), LLMReasoning: t.red.Scrub(kairos.Clip(r.reasoning, 8000)),
		Verb: c.verb, RiskTier: b.RiskTier, CreatedAt: j.started,
	}

	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "code execution is not available")
	}
	var jctx context.Context
	jctx, j.cancel = context.WithTimeout(t.bg, b.TimeBudget+jobGrace)
	t.jobs[j.id] = j
	t.wg.Add(1)
	t.mu.Unlock()

	go func() {
		defer t.wg.Done()
		defer j.cancel()
		res, err := t.runner.Run(jctx, task)
		t.finish(j, trace, res, err, note)
	}()

	timer := time.NewTimer(t.asyncAfter)
	defer timer.Stop()
	select {
	case <-j.done:
		return t.respond(j.id, j.out), nil
	case <-ctx.Done():
		j.cancel()
		return nil, ctx.Err()
	case <-timer.C:
	}
	j.mu.Lock()
	if j.out != nil {
		j.mu.Unlock()
		return t.respond(j.id, j.out), nil
	}
	j.async = true
	// The running row is written under j.mu, so the final row (also
	// written under j.mu) always comes after it.
	t.record(trace)
	j.mu.Unlock()
	t.log.Info("code run continues in the background", "job_id", j.id, "verb", c.verb)
	return &response{Success: true, Status: StatusRunning, JobID: j.id, Note: note}, nil
}

// finish scrubs and records a finished run and wakes its waiters.
func (t *Tool) finish(j *job, started *kairos.CodeExecution, res *kairos.CellResult, err error, note string) {
	tr := *started // the running record may be reading started
	trace := &tr
	if err == nil && res == nil {
		err = fmt.Errorf("the runner returned no result")
	}
	if err != nil {
		msg := kairos.ErrorMessage(err)
		if kairos.ErrorCode(err) == kairos.EINTERNAL {
			msg = "the sandbox failed: " + t.red.Scrub(err.Error())
		}
		res = &kairos.CellResult{ErrorCategory: kairos.CatRuntime, Error: msg, Stderr: msg, ExitCode: -1}
		t.log.Error("code runner failed", "job_id", j.id, "err", t.red.Scrub(err.Error()))
	}
	res = t.scrub(res)
	if !res.Success && res.ErrorCategory == "" {
		res.ErrorCategory = kairos.CatRuntime
	}
	if res.Duration <= 0 {
		res.Duration = t.now().Sub(j.started)
	}
	trace.Stdout = kairos.Clip(res.Stdout, maxStoredBytes)
	trace.Stderr = clipTail(res.Stderr, maxStoredBytes)
	trace.ExitCode = res.ExitCode
	trace.DurationMS = res.Duration.Milliseconds()
	trace.Success = res.Success
	trace.ErrorCategory = res.ErrorCategory
	if !res.Success && trace.Stderr == "" {
		trace.Stderr = res.Error
	}
	switch {
	case res.Checkpoint != nil:
		b, _ := json.Marshal(stored{Checkpoint: res.Checkpoint, Output: res.Output})
		trace.Result = string(b)
	case len(res.Output) > 0:
		trace.Result = string(res.Output)
	}

	j.mu.Lock()
	t.record(trace)
	j.out = &outcome{res: res, note: note}
	close(j.done)
	j.mu.Unlock()

	t.mu.Lock()
	t.finished = append(t.finished, j.id)
	for len(t.finished) > maxJobs {
		delete(t.jobs, t.finished[0])
		t.finished = t.finished[1:]
	}
	t.mu.Unlock()
	t.log.Info("code run finished", "job_id", j.id, "verb", trace.Verb, "success", res.Success,
		"category", res.ErrorCategory, "duration_ms", trace.DurationMS, "checkpoint", res.Checkpoint != nil)
}

func (t *Tool) record(e *kairos.CodeExecution) {
	if t.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	cp := *e
	if err := t.store.RecordExecution(ctx, &cp); err != nil {
		t.log.Warn("recording a code execution failed", "job_id", e.ID, "err", err.Error())
	}
}

// scrub returns a copy of res with every secret form removed from its
// texts, output and checkpoint (the runner scrubs too; this is the second
// line).
func (t *Tool) scrub(res *kairos.CellResult) *kairos.CellResult {
	r := *res
	r.Stdout, r.Stderr, r.Error = t.red.Scrub(r.Stdout), t.red.Scrub(r.Stderr), t.red.Scrub(r.Error)
	r.Output = t.red.ScrubJSON(r.Output)
	if r.Checkpoint != nil {
		cp := *r.Checkpoint
		cp.Cursor, cp.Stage, cp.StateBlobRef = t.red.Scrub(cp.Cursor), t.red.Scrub(cp.Stage), t.red.Scrub(cp.StateBlobRef)
		cp.ContinuationID = t.red.Scrub(cp.ContinuationID)
		cp.Completed = append([]string(nil), cp.Completed...)
		for i := range cp.Completed {
			cp.Completed[i] = t.red.Scrub(cp.Completed[i])
		}
		cp.State = t.red.ScrubJSON(cp.State)
		r.Checkpoint = &cp
	}
	return &r
}

// respond turns a finished run into the model's result.
func (t *Tool) respond(id string, o *outcome) *response {
	res := o.res
	d := res.Duration.Milliseconds()
	r := &response{
		Success:    res.Success && res.Checkpoint == nil,
		JobID:      id,
		DurationMS: &d,
		Note:       o.note,
	}
	stdout := strings.TrimRight(res.Stdout, "\n")
	switch {
	case len(res.Output) > 0:
		r.Result = capJSON(res.Output)
		r.Stdout = clipTail(stdout, maxSideBytes)
	case stdout != "":
		r.Result, _ = json.Marshal(clipTail(stdout, MaxResultBytes))
	}
	if !res.Success {
		r.ErrorCategory = res.ErrorCategory
		r.Error = clipTail(strings.TrimSpace(firstNonEmpty(res.Error, res.Stderr, "the cell failed")), maxSideBytes)
	}
	if cp := res.Checkpoint; cp != nil {
		r.Checkpoint = &checkpointView{
			ContinuationID: cp.ContinuationID, Cursor: kairos.Clip(cp.Cursor, 500), StateBlobRef: cp.StateBlobRef,
			Stage: kairos.Clip(cp.Stage, 200), Completed: cp.Completed,
		}
		if r.Error == "" {
			r.Error = "the cell checkpointed before finishing; resume it with execute, this job_id and code that reads `resume`"
		}
	}
	return r
}

// capJSON keeps JSON under MaxResultBytes; a longer value becomes its
// clipped text as a JSON string.
func capJSON(js json.RawMessage) json.RawMessage {
	if len(js) <= MaxResultBytes {
		return js
	}
	b, _ := json.Marshal(kairos.Clip(string(js), MaxResultBytes) + fmt.Sprintf(" [truncated: %d bytes in all]", len(js)))
	return b
}

// status reports a job from memory, or from the trace store.
func (t *Tool) status(ctx context.Context, userKey, id string) (*response, error) {
	t.mu.Lock()
	j := t.jobs[id]
	t.mu.Unlock()
	if j != nil && j.userKey == userKey {
		select {
		case <-j.done:
			r := t.respond(j.id, j.out)
			r.Status = StatusDone
			return r, nil
		default:
			el := t.now().Sub(j.started).Milliseconds()
			return &response{Success: true, Status: StatusRunning, JobID: id, DurationMS: &el}, nil
		}
	}
	e, err := t.find(ctx, userKey, id)
	if err != nil {
		return nil, err
	}
	if !e.Success && e.ErrorCategory == "" {
		// Recorded as running, but not running here: the process that
		// ran it stopped before it finished.
		return &response{Success: false, Status: StatusDone, JobID: id, ErrorCategory: kairos.CatRuntime,
			Error: "the run was interrupted (the service restarted) and has no result; run it again"}, nil
	}
	r := t.respond(id, &outcome{res: fromTrace(e)})
	r.Status = StatusDone
	return r, nil
}

// find returns the trace of one of the user's runs.
func (t *Tool) find(ctx context.Context, userKey, id string) (*kairos.CodeExecution, error) {
	if t.store == nil {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no job %s", kairos.Clip(id, 64))
	}
	e, err := t.store.FindExecution(ctx, id)
	if kairos.ErrorCode(err) == kairos.ENOTFOUND || (err == nil && e.UserKey != userKey) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no job %s", kairos.Clip(id, 64))
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// fromTrace rebuilds a result from its trace.
func fromTrace(e *kairos.CodeExecution) *kairos.CellResult {
	res := &kairos.CellResult{
		ID: e.ID, Success: e.Success, Stdout: e.Stdout, Stderr: e.Stderr, ExitCode: e.ExitCode,
		Duration: time.Duration(e.DurationMS) * time.Millisecond, ErrorCategory: e.ErrorCategory,
	}
	if !e.Success {
		res.Error = clipTail(strings.TrimRight(e.Stderr, "\n"), maxSideBytes)
	}
	if e.Result != "" {
		if cp, out, ok := parseStored(e.Result); ok {
			res.Checkpoint, res.Output = cp, out
		} else if json.Valid([]byte(e.Result)) {
			res.Output = json.RawMessage(e.Result)
		}
	}
	return res
}

// parseStored reads a checkpointed run's Result column.
func parseStored(s string) (*kairos.Checkpoint, json.RawMessage, bool) {
	var raw map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &raw) != nil || raw["checkpoint"] == nil {
		return nil, nil, false
	}
	for k := range raw {
		if k != "checkpoint" && k != "output" {
			return nil, nil, false
		}
	}
	var st stored
	if json.Unmarshal([]byte(s), &st) != nil || st.Checkpoint == nil || st.Checkpoint.ContinuationID == "" {
		return nil, nil, false
	}
	return st.Checkpoint, st.Output, true
}

// checkpointOf returns the checkpoint of one of the user's runs, for a
// resume.
func (t *Tool) checkpointOf(ctx context.Context, userKey, id string) (*kairos.Checkpoint, error) {
	t.mu.Lock()
	j := t.jobs[id]
	t.mu.Unlock()
	if j != nil && j.userKey == userKey {
		select {
		case <-j.done:
			if cp := j.out.res.Checkpoint; cp != nil {
				return cp, nil
			}
			return nil, kairos.Errorf(kairos.EINVALID, "job %s has no checkpoint to resume", id)
		default:
			return nil, kairos.Errorf(kairos.ECONFLICT, "job %s is still running", id)
		}
	}
	e, err := t.find(ctx, userKey, id)
	if err != nil {
		return nil, err
	}
	if cp, _, ok := parseStored(e.Result); ok {
		return cp, nil
	}
	return nil, kairos.Errorf(kairos.EINVALID, "job %s has no checkpoint to resume", kairos.Clip(id, 64))
}

// clipTail keeps the last n bytes of s, on a rune boundary, marking a cut.
func clipTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}
