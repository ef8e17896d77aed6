package code

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/redact"
	"github.com/kairos-agent/kairos/tools"
	"github.com/kairos-agent/kairos/tools/cell"
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
	DefaultCloseWait  = 10 * time.Second
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
	// CountTokens counts a text's tokens for a model, to fit generate's
	// calls into the model's window; nil estimates (fit.Estimate).
	CountTokens func(model, text string) int
	// Secrets are the cells' secrets, name → value (KAIROS_SECRET_<NAME>).
	// Values never enter results, traces or prompts; names may.
	Secrets map[string]string
	// Now is the host clock (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
	// AsyncAfter is how long execute waits before answering with a
	// job_id (DefaultAsyncAfter when 0).
	AsyncAfter time.Duration
	// CloseWait bounds how long Close waits for the background runs it
	// has cancelled (DefaultCloseWait when 0): a run still going then is
	// recorded as stopped and left behind.
	CloseWait time.Duration
}

// Tool is the `code` tool. It is safe for concurrent use. Close it to
// stop the runs still going in the background.
type Tool struct {
	runner     kairos.CodeRunner
	store      kairos.CodeExecutionStore
	model      kairos.Model
	coder      func() string
	policy     func() *kairos.Policy
	count      func(model, text string) int
	secrets    map[string]string
	names      []string // secret names, sorted
	red        *redact.Redactor
	now        func() time.Time
	log        *slog.Logger
	asyncAfter time.Duration
	closeWait  time.Duration

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
		runner: cfg.Runner, store: cfg.Store, model: cfg.Model, coder: cfg.CoderModel, count: cfg.CountTokens,
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
	if t.closeWait = cfg.CloseWait; t.closeWait <= 0 {
		t.closeWait = DefaultCloseWait
	}
	t.names = redact.SecretNames(cfg.Secrets)
	for _, k := range t.names {
		t.secrets[k] = cfg.Secrets[k]
	}
	t.red = redact.ForSecrets(cfg.Secrets)
	t.bg, t.bgCancel = context.WithCancel(context.Background())
	return t
}

// Close cancels the runs still going in the background and waits for
// them to be recorded, at most CloseWait: a run that has not ended by then
// (its runner failed to stop it) is recorded as a timeout and left behind,
// and Close says so. Calls after Close fail with EUNAVAILABLE.
func (t *Tool) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.bgCancel()
	ended := make(chan struct{})
	go func() {
		t.wg.Wait()
		close(ended)
	}()
	timer := time.NewTimer(t.closeWait)
	defer timer.Stop()
	select {
	case <-ended:
		return nil
	case <-timer.C:
	}
	n := t.abandonRunning()
	if n == 0 { // they ended meanwhile
		return nil
	}
	return fmt.Errorf("code: %d background run(s) did not stop within %s of Close; recorded as stopped", n, t.closeWait)
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

// secretNames are the secrets cells may use under pol: none when
// features.credentials_access is off (getSecret does not exist then).
func (t *Tool) secretNames(pol *kairos.Policy) []string {
	if !pol.Features.CredentialsAccess {
		return nil
	}
	return t.names
}

// Spec implements kairos.Tool. It follows the current policy: the network
// globals, allowed hosts and methods appear only when features.network is
// on; secret names only when there are secrets and
// features.credentials_access is on; generate only with a Model.
func (t *Tool) Spec() kairos.ToolSpec {
	pol := t.pol()
	g := cell.GrantFor(pol)
	names := t.secretNames(pol)
	acts := t.actions()
	enum, _ := json.Marshal(acts)
	var d strings.Builder
	d.WriteString("Run JavaScript (top-level await) in a sandboxed cell. execute: run `code`. ")
	if t.model != nil {
		d.WriteString("generate: a coding model writes, runs and fixes code for `task` (+`context`), 3 tries. ")
	}
	fmt.Fprintf(&d, "status: a long run's result by `job_id` (runs over %s return one; execute with a checkpointed run's job_id resumes it as `resume`). ", t.asyncAfter.Round(time.Second))
	d.WriteString("Globals: output(data) returns the result (not console.log), sleep(ms), checkpoint({cursor,state})")
	if len(names) > 0 {
		d.WriteString(", listSecrets(), getSecret(name)")
	}
	switch {
	case g.Enabled && len(names) > 0:
		d.WriteString(", getJSON(url,authSecret?), postJSON(url,body,authSecret?), fetchWithAuth(url,{method,headers,body,authSecret})")
	case g.Enabled:
		d.WriteString(", getJSON(url), postJSON(url,body), fetch(url,{method,headers,body})")
	}
	d.WriteString(". ")
	if g.Enabled {
		fmt.Fprintf(&d, "Network: %s; hosts: %s. ", strings.Join(g.Methods, "/"), listOrNone(g.AllowHosts, 6))
	} else {
		d.WriteString("No network. ")
	}
	if len(names) > 0 {
		fmt.Fprintf(&d, "Secrets (by name; redacted in any output, never print them): %s. ", listOrNone(names, 8))
	}
	d.WriteString("No files, process or imports.")
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

// cues are the words that offer code to a turn (tools.Offered): code,
// calculation, data; without them it is reachable with more_tools.
var cues = []string{"code", "coding", "javascript", "js", "script", "calculat", "comput", "math", "cell", "convert", "pars",
	"csv", "program", "sandbox", "run", "execut", "job", "checkpoint", "generat", "function", "algorithm", "regex",
	"average", "percent", "sum", "sort", "count", "formula", "attach", "file", "pdf", "document"}

// CuedBy implements tools.Offered's on-demand offer: its cue words, or
// a calculation written out ("17*23", "15% of 240", "9 divided by 4").
func (t *Tool) CuedBy(m tools.Message) bool {
	return tools.HasCue(m.Words, cues) || tools.MentionsArithmetic(m)
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
		return describeRun(t.classify(t.pol(), a.Code).action, a.Code), nil
	case ActionGenerate:
		cap := CapCode
		if cell.GrantFor(t.pol()).Enabled {
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
	u := cell.Scan(code)
	g := cell.GrantFor(pol)
	network := g.Enabled && u.Network
	write := cell.WritesAllowed(g) && u.NetworkWrite
	secrets := pol.Features.CredentialsAccess && len(t.secrets) > 0 && u.Secrets
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
		why = append(why, writeReason(g))
	} else {
		c.grant = cell.ReadOnly(g)
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
	if write && !secrets {
		grantTarget(&c.action, g, code)
	}
	return c
}

// grantTarget names the target of a network write for a standing grant:
// the hosts and methods its calls name (NetworkTargets). A write whose
// hosts cannot all be named, or that reaches a host outside the allow
// list, is an unlisted-host write (kairos.NeverGrantUnlistedHost). Code
// that also uses secrets gets no target: it is approved once each time.
func grantTarget(act *kairos.ToolAction, g kairos.NetworkGrant, code string) {
	tg, ok := cell.NetworkTargets(code)
	if !ok {
		act.UnlistedHost = true
		return
	}
	for _, h := range tg.Hosts {
		if !cell.AllowedHost(h, g.AllowHosts) {
			act.UnlistedHost = true
		}
	}
	act.Target = "network " + tg.String()
	act.TargetLabel = "code that sends " + strings.Join(tg.Methods, "/") + " requests to " + strings.Join(tg.Hosts, ", ") + " and nowhere else"
}

// describeRun adds what an approval shows of a run: one sentence and the
// whole code.
func describeRun(act kairos.ToolAction, code string) kairos.ToolAction {
	switch act.Name {
	case NameNetworkWrite:
		if tg, ok := cell.NetworkTargets(code); ok {
			act.Summary = "Run code that sends " + strings.Join(tg.Methods, "/") + " requests to " + strings.Join(tg.Hosts, ", ") + "?"
		} else {
			act.Summary = "Run code that may send data to hosts it works out as it runs?"
		}
	case NameSecrets:
		act.Summary = "Run code that uses your secrets?"
	default:
		act.Summary = "Run this code in the sandbox?"
	}
	act.Detail = "Code:\n" + code
	return act
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
