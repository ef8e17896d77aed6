package code_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/redact"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/tools/cell"
	"github.com/kairos-agent/kairos/tools/code"
)

func TestExecuteSuccess(t *testing.T) {
	runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		return &kairos.CellResult{ID: "r1", Success: true, Output: json.RawMessage(`{"n":42}`),
			Stdout: "computing\n", Duration: 12 * time.Millisecond}, nil
	}}
	tool, st := newTool(t, code.Config{Runner: runner})
	r, tr := call(t, tool, `{"action":"execute","code":"console.log('computing'); output({n: 6*7})"}`)

	if !r.Success || string(r.Result) != `{"n":42}` || r.Stdout != "computing" || r.JobID == "" || r.DurationMS == nil || *r.DurationMS != 12 {
		t.Fatalf("result = %s", tr.Content)
	}
	if !tr.Tainted {
		t.Fatal("code output must be marked tainted")
	}
	task := runner.Last(t)
	if task.Verb != kairos.VerbBuild || task.Network.Enabled || task.Secrets != nil || !task.Now.Equal(t0) {
		t.Fatalf("task = %+v; want BUILD, no network, no secrets, Now = t0", task)
	}
	want := kairos.Budget{TimeBudget: 30 * time.Second, MaxToolCalls: 64, MaxBytesRead: 4 << 20, MaxBytesWritten: 1 << 20,
		MaxNetworkCalls: 16, MemoryLimit: 64 << 20, MaxOutputBytes: 64 << 10, RiskTier: "low"}
	if d := cmp.Diff(want, task.Budget); d != "" {
		t.Fatalf("budget (-want +got):\n%s", d)
	}
	e, err := st.FindExecution(context.Background(), r.JobID)
	if err != nil {
		t.Fatal(err)
	}
	wantTrace := &kairos.CodeExecution{
		ID: r.JobID, Code: "console.log('computing'); output({n: 6*7})", Stdout: "computing\n",
		DurationMS: 12, Success: true, SessionID: "s1", UserKey: "telegram:1", TriggerMessage: "please compute",
		LLMReasoning: "I will run code", Verb: kairos.VerbBuild, RiskTier: "low", Result: `{"n":42}`, CreatedAt: t0,
	}
	if d := cmp.Diff(wantTrace, e); d != "" {
		t.Fatalf("trace (-want +got):\n%s", d)
	}
}

func TestExecuteStdoutOnly(t *testing.T) {
	runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		return &kairos.CellResult{Success: true, Stdout: "line 1\nline 2\n"}, nil
	}}
	tool, _ := newTool(t, code.Config{Runner: runner})
	r, tr := call(t, tool, `{"action":"execute","code":"console.log(1)"}`)
	if !r.Success || string(r.Result) != `"line 1\nline 2"` || r.Stdout != "" {
		t.Fatalf("result = %s; want stdout as the result", tr.Content)
	}
}

func TestExecuteFailures(t *testing.T) {
	tests := []struct {
		name    string
		res     *kairos.CellResult
		err     error
		wantCat string
		wantErr string
	}{
		{name: "syntax", res: &kairos.CellResult{ErrorCategory: kairos.CatSyntax, Error: "SyntaxError: unexpected token", Stderr: "SyntaxError: unexpected token", ExitCode: 1},
			wantCat: kairos.CatSyntax, wantErr: "SyntaxError: unexpected token"},
		{name: "timeout", res: &kairos.CellResult{ErrorCategory: kairos.CatTimeout, Error: "time budget of 30s exhausted", ExitCode: 1},
			wantCat: kairos.CatTimeout, wantErr: "time budget of 30s exhausted"},
		{name: "budget", res: &kairos.CellResult{ErrorCategory: kairos.CatBudget, Error: "network call budget of 16 reached", ExitCode: 1},
			wantCat: kairos.CatBudget, wantErr: "network call budget"},
		{name: "memory", res: &kairos.CellResult{ErrorCategory: kairos.CatMemory, Error: "out of memory", ExitCode: 1},
			wantCat: kairos.CatMemory, wantErr: "out of memory"},
		{name: "rejected by the leak scan", res: &kairos.CellResult{ErrorCategory: kairos.CatRejected, Error: "code rejected: __SECRETS__", ExitCode: -1},
			wantCat: kairos.CatRejected, wantErr: "code rejected"},
		{name: "failure without a category", res: &kairos.CellResult{Error: "it broke", ExitCode: 1},
			wantCat: kairos.CatRuntime, wantErr: "it broke"},
		{name: "runner fault", err: errors.New("wazero: instantiate: boom"),
			wantCat: kairos.CatRuntime, wantErr: "the sandbox failed: wazero: instantiate: boom"},
		{name: "runner unavailable", err: kairos.Errorf(kairos.EUNAVAILABLE, "sandbox is closed"),
			wantCat: kairos.CatRuntime, wantErr: "sandbox is closed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
				return tc.res, tc.err
			}}
			tool, st := newTool(t, code.Config{Runner: runner})
			r, tr := call(t, tool, `{"action":"execute","code":"boom()"}`)
			if r.Success || r.ErrorCategory != tc.wantCat || !strings.Contains(r.Error, tc.wantErr) {
				t.Fatalf("result = %s; want category %s and error containing %q", tr.Content, tc.wantCat, tc.wantErr)
			}
			e, err := st.FindExecution(context.Background(), r.JobID)
			if err != nil {
				t.Fatal(err)
			}
			if e.Success || e.ErrorCategory != tc.wantCat || !strings.Contains(e.Stderr, tc.wantErr) {
				t.Fatalf("trace = %+v; want a %s failure with the error in stderr", e, tc.wantCat)
			}
			fs, err := st.CodeFailures(context.Background(), 5)
			if err != nil || len(fs) != 1 {
				t.Fatalf("CodeFailures = %d, %v; want the failure listed", len(fs), err)
			}
		})
	}
}

func TestTimeoutCapping(t *testing.T) {
	perVerb := policyWith(func(p *kairos.Policy) {
		p.Budgets.PerVerb = map[string]kairos.CellBudget{kairos.VerbBuild: {TimeBudgetMS: 20000, RiskTier: "medium"}}
		p.Budgets.PerRiskTier = map[string]kairos.CellBudget{"medium": {TimeBudgetMS: 10000}}
	})
	tests := []struct {
		name     string
		policy   func() *kairos.Policy
		timeout  string
		want     time.Duration
		wantNote bool
	}{
		{name: "no timeout: the policy's", want: 30 * time.Second},
		{name: "shorter timeout honoured", timeout: `,"timeout_ms":5000`, want: 5 * time.Second},
		{name: "equal timeout", timeout: `,"timeout_ms":30000`, want: 30 * time.Second},
		{name: "longer timeout capped", timeout: `,"timeout_ms":600000`, want: 30 * time.Second, wantNote: true},
		{name: "per-tier budget caps", policy: perVerb, timeout: `,"timeout_ms":15000`, want: 10 * time.Second, wantNote: true},
		{name: "per-tier budget, shorter timeout", policy: perVerb, timeout: `,"timeout_ms":2500`, want: 2500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runner := okRunner(`1`)
			tool, _ := newTool(t, code.Config{Runner: runner, Policy: tc.policy})
			r, tr := call(t, tool, `{"action":"execute","code":"output(1)"`+tc.timeout+`}`)
			if !r.Success {
				t.Fatalf("result = %s", tr.Content)
			}
			if got := runner.Last(t).Budget.TimeBudget; got != tc.want {
				t.Fatalf("time budget = %s, want %s", got, tc.want)
			}
			if (r.Note != "") != tc.wantNote {
				t.Fatalf("note = %q, want a note: %t", r.Note, tc.wantNote)
			}
		})
	}
}

func TestBudgetFor(t *testing.T) {
	p := kairos.DefaultPolicy()
	p.Budgets.PerVerb = map[string]kairos.CellBudget{
		kairos.VerbResearch: {MaxNetworkCalls: 50, RiskTier: "high"},
		kairos.VerbMonitor:  {TimeBudgetMS: 5000},
	}
	p.Budgets.PerRiskTier = map[string]kairos.CellBudget{
		"high": {TimeBudgetMS: 10000, MaxNetworkCalls: 8, MemoryLimitMB: 32},
		"low":  {MaxToolCalls: 10},
	}
	base := cell.BudgetFor(kairos.DefaultPolicy(), kairos.VerbBuild)
	tests := []struct {
		verb string
		want func(b kairos.Budget) kairos.Budget
	}{
		{verb: kairos.VerbBuild, want: func(b kairos.Budget) kairos.Budget { b.MaxToolCalls = 10; return b }},
		{verb: kairos.VerbMonitor, want: func(b kairos.Budget) kairos.Budget {
			b.TimeBudget, b.MaxToolCalls = 5*time.Second, 10
			return b
		}},
		{verb: kairos.VerbResearch, want: func(b kairos.Budget) kairos.Budget {
			b.TimeBudget, b.MaxNetworkCalls, b.MemoryLimit, b.RiskTier = 10*time.Second, 8, 32<<20, "high"
			return b
		}},
	}
	for _, tc := range tests {
		t.Run(tc.verb, func(t *testing.T) {
			if d := cmp.Diff(tc.want(base), cell.BudgetFor(p, tc.verb)); d != "" {
				t.Fatalf("BudgetFor(%s) (-want +got):\n%s", tc.verb, d)
			}
		})
	}
	empty := &kairos.Policy{}
	if b, want := cell.BudgetFor(empty, kairos.VerbBuild), kairos.DefaultBudget().TimeBudget; b.TimeBudget != want {
		t.Fatalf("empty policy time budget = %s, want %s", b.TimeBudget, want)
	}
}

func TestGrantFor(t *testing.T) {
	if g := cell.GrantFor(kairos.DefaultPolicy()); g.Enabled || len(g.Methods) != 0 {
		t.Fatalf("default grant = %+v, want nothing", g)
	}
	p := kairos.DefaultPolicy()
	p.Features.Network = true
	p.Network = kairos.NetworkPolicy{AllowList: []string{"api.example.com", "*.github.com"}, Methods: []string{"get", " post ", "GET"}, BlockedCategories: []string{"gambling", "banking"}}
	want := kairos.NetworkGrant{
		Enabled: true, AllowHosts: []string{"api.example.com", "*.github.com"}, Methods: []string{"GET", "POST"},
		BlockedCategories: []string{"banking", "payments", "crypto_exchanges", "login_flows", "gambling"},
	}
	if d := cmp.Diff(want, cell.GrantFor(p)); d != "" {
		t.Fatalf("GrantFor (-want +got):\n%s", d)
	}
	p.Network.Methods = nil
	if g := cell.GrantFor(p); len(g.Methods) != 1 || g.Methods[0] != "GET" {
		t.Fatalf("methods without a policy list = %v, want [GET]", g.Methods)
	}
}

// TestActionClassification checks the impact of execute calls and that
// the cell gets exactly the capabilities the classification covered.
func TestActionClassification(t *testing.T) {
	for _, tc := range actionCases() {
		t.Run(tc.name, func(t *testing.T) { checkAction(t, tc) })
	}
}

// actionCase is a code call, the policy and secrets it runs under, and
// the approval action, verb, methods and secrets it must come out with.
type actionCase struct {
	name        string
	policy      func() *kairos.Policy
	secrets     map[string]string
	code        string
	wantName    string
	wantCap     string
	wantReason  string
	wantVerb    string
	wantMethods []string
	wantSecrets bool
}

func actionCases() []actionCase {
	offline := policyWith(func(p *kairos.Policy) {})
	getOnly := policyWith(func(p *kairos.Policy) {
		p.Features.Network = true
		p.Network.AllowList = []string{"api.example.com"}
	})
	writes := policyWith(func(p *kairos.Policy) {
		p.Features.Network = true
		p.Network.AllowList = []string{"api.example.com"}
		p.Network.Methods = []string{"GET", "POST"}
	})
	secrets := map[string]string{"GITHUB_TOKEN": "ghp_supersecretvalue123"}
	return []actionCase{
		{name: "pure computation", policy: offline, code: "output(1+1)",
			wantName: code.NameExecute, wantCap: code.CapCode, wantVerb: kairos.VerbBuild},
		{name: "network call while network is off", policy: offline, code: "output(await getJSON('https://api.example.com'))",
			wantName: code.NameExecute, wantCap: code.CapCode, wantVerb: kairos.VerbBuild},
		{name: "GET under a GET-only policy", policy: getOnly, code: "output(await getJSON('https://api.example.com/x'))",
			wantName: code.NameExecute, wantCap: code.CapNetwork, wantVerb: kairos.VerbResearch, wantMethods: []string{"GET"}},
		{name: "postJSON under a GET-only policy", policy: getOnly, code: "await postJSON('https://api.example.com/x', {a: 1})",
			wantName: code.NameExecute, wantCap: code.CapNetwork, wantVerb: kairos.VerbResearch, wantMethods: []string{"GET"}},
		{name: "GET when POST is allowed", policy: writes, code: "output(await getJSON('https://api.example.com/x'))",
			wantName: code.NameExecute, wantCap: code.CapNetwork, wantVerb: kairos.VerbResearch, wantMethods: []string{"GET"}},
		{name: "postJSON when POST is allowed", policy: writes, code: "await postJSON('https://api.example.com/x', {a: 1})",
			wantName: code.NameNetworkWrite, wantCap: code.CapNetwork, wantReason: "POST", wantVerb: kairos.VerbResearch, wantMethods: []string{"GET", "POST"}},
		{name: "fetchWithAuth with method POST", policy: writes, code: "await fetchWithAuth('https://api.example.com', {method: 'POST', body: '{}'})",
			wantName: code.NameNetworkWrite, wantCap: code.CapNetwork, wantReason: "network", wantVerb: kairos.VerbResearch, wantMethods: []string{"GET", "POST"}},
		{name: "fetchWithAuth with method GET", policy: writes, code: "await fetchWithAuth('https://api.example.com', {method: \"get\"})",
			wantName: code.NameExecute, wantCap: code.CapNetwork, wantVerb: kairos.VerbResearch, wantMethods: []string{"GET"}},
		{name: "fetch with a computed method", policy: writes, code: "const m = pick(); await fetch('https://api.example.com', {method: m})",
			wantName: code.NameNetworkWrite, wantCap: code.CapNetwork, wantVerb: kairos.VerbResearch, wantMethods: []string{"GET", "POST"}},
		{name: "postJSON only in a comment", policy: writes, code: "// postJSON would be wrong here\noutput(await getJSON('https://api.example.com'))",
			wantName: code.NameExecute, wantCap: code.CapNetwork, wantVerb: kairos.VerbResearch, wantMethods: []string{"GET"}},
		{name: "getSecret with secrets", policy: offline, secrets: secrets, code: "const k = getSecret('GITHUB_TOKEN'); output(k.length)",
			wantName: code.NameSecrets, wantCap: code.CapCode, wantReason: "GITHUB_TOKEN", wantVerb: kairos.VerbBuild, wantSecrets: true},
		{name: "getSecret without secrets", policy: offline, code: "output(getSecret('GITHUB_TOKEN'))",
			wantName: code.NameExecute, wantCap: code.CapCode, wantVerb: kairos.VerbBuild},
		{name: "getJSON with an auth secret", policy: getOnly, secrets: secrets, code: "output(await getJSON('https://api.example.com', 'GITHUB_TOKEN'))",
			wantName: code.NameSecrets, wantCap: code.CapNetwork, wantReason: "GITHUB_TOKEN", wantVerb: kairos.VerbResearch, wantMethods: []string{"GET"}, wantSecrets: true},
		{name: "getJSON with a variable secret name", policy: getOnly, secrets: secrets, code: "const n = 'GITHUB_TOKEN'; output(await getJSON(url(), n))",
			wantName: code.NameSecrets, wantCap: code.CapNetwork, wantReason: "a secret", wantVerb: kairos.VerbResearch, wantMethods: []string{"GET"}, wantSecrets: true},
		{name: "getJSON with one argument", policy: getOnly, secrets: secrets, code: "output(await getJSON(base + '/x?a=' + encodeURIComponent(q, 1)))",
			wantName: code.NameExecute, wantCap: code.CapNetwork, wantVerb: kairos.VerbResearch, wantMethods: []string{"GET"}},
		{name: "listSecrets only", policy: offline, secrets: secrets, code: "output(listSecrets())",
			wantName: code.NameExecute, wantCap: code.CapCode, wantVerb: kairos.VerbBuild},
		{name: "authenticated POST", policy: writes, secrets: secrets, code: "await postJSON('https://api.example.com', {}, 'GITHUB_TOKEN')",
			wantName: code.NameNetworkWrite, wantCap: code.CapNetwork, wantReason: "and uses the secret(s) GITHUB_TOKEN", wantVerb: kairos.VerbResearch, wantMethods: []string{"GET", "POST"}, wantSecrets: true},
		{name: "authSecret as a quoted key", policy: getOnly, secrets: secrets, code: "await fetchWithAuth('https://api.example.com', {\"authSecret\": \"GITHUB_TOKEN\"})",
			wantName: code.NameSecrets, wantCap: code.CapNetwork, wantReason: "GITHUB_TOKEN", wantVerb: kairos.VerbResearch, wantMethods: []string{"GET"}, wantSecrets: true},
	}
}

// checkAction classifies tc's code, then runs it and checks what the
// cell was handed.
func checkAction(t *testing.T, tc actionCase) {
	t.Helper()
	runner := okRunner(`null`)
	pol := tc.policy
	if pol == nil {
		pol = kairos.DefaultPolicy
	}
	withCreds := func() *kairos.Policy { // secrets exist only with credentials_access
		p := *pol()
		p.Features.CredentialsAccess = true
		return &p
	}
	tool, _ := newTool(t, code.Config{Runner: runner, Policy: withCreds, Secrets: tc.secrets})
	args := `{"action":"execute","code":` + mustJSON(tc.code) + `}`
	act, err := tool.Action(context.Background(), inv(args))
	if err != nil {
		t.Fatal(err)
	}
	impactful := tc.wantName == code.NameNetworkWrite || tc.wantName == code.NameSecrets
	if act.Name != tc.wantName || act.Capability != tc.wantCap || act.Impactful != impactful || !strings.Contains(act.Reason, tc.wantReason) {
		t.Fatalf("Action = %+v; want %s, capability %s, impactful %t, reason containing %q", act, tc.wantName, tc.wantCap, impactful, tc.wantReason)
	}
	if impactful == (act.Reason == "") {
		t.Fatalf("reason %q for impactful %t", act.Reason, impactful)
	}
	call(t, tool, args)
	task := runner.Last(t)
	if task.Verb != tc.wantVerb {
		t.Fatalf("verb = %s, want %s", task.Verb, tc.wantVerb)
	}
	if d := cmp.Diff(tc.wantMethods, task.Network.Methods); d != "" {
		t.Fatalf("granted methods (-want +got):\n%s", d)
	}
	if (task.Secrets != nil) != tc.wantSecrets {
		t.Fatalf("secrets handed to the cell: %t, want %t", task.Secrets != nil, tc.wantSecrets)
	}
}

func TestActionOtherActions(t *testing.T) {
	tool, _ := newTool(t, code.Config{Runner: okRunner(`1`), Model: scriptedModel()})
	for _, tc := range []struct{ args, name string }{
		{`{"action":"generate","task":"add numbers"}`, code.NameGenerate},
		{`{"action":"status","job_id":"abc"}`, code.NameStatus},
	} {
		act, err := tool.Action(context.Background(), inv(tc.args))
		if err != nil || act.Name != tc.name || act.Impactful || act.Capability != code.CapCode {
			t.Fatalf("Action(%s) = %+v, %v", tc.args, act, err)
		}
	}
}

func TestArgumentErrors(t *testing.T) {
	tool, _ := newTool(t, code.Config{Runner: okRunner(`1`)}) // no model: no generate
	tests := []struct{ args, want string }{
		{`{}`, `"action" is required`},
		{`{"action":"run"}`, `not one of execute, status`},
		{`{"action":"generate","task":"x"}`, `not one of execute, status`},
		{`{"action":"execute"}`, `"code" is required`},
		{`{"action":"execute","code":"   "}`, `"code" is required`},
		{`{"action":"execute","code":"1","timeout_ms":0}`, `"timeout_ms" must be between`},
		{`{"action":"execute","code":"1","timeout_ms":"5s"}`, `"timeout_ms"`},
		{`{"action":"execute","code":"1","verb":"BUILD"}`, `unknown argument "verb"`},
		{`{"action":"status"}`, `"job_id" is required`},
		{`{"action":"execute","code":` + mustJSON(strings.Repeat("x", code.MaxCodeBytes+1)) + `}`, `longer than`},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			_, err := tool.Call(context.Background(), inv(tc.args))
			if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.want) {
				t.Fatalf("Call(%.80s) = %v; want EINVALID containing %q", tc.args, err, tc.want)
			}
			if _, err := tool.Action(context.Background(), inv(tc.args)); kairos.ErrorCode(err) != kairos.EINVALID {
				t.Fatalf("Action(%.80s) = %v; want EINVALID", tc.args, err)
			}
		})
	}
}

func TestAsyncJobAndStatus(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return &kairos.CellResult{ErrorCategory: kairos.CatTimeout, Error: "cancelled"}, nil
		}
		return &kairos.CellResult{Success: true, Output: json.RawMessage(`"slow result"`), Duration: 45 * time.Second}, nil
	}}
	tool, st := newTool(t, code.Config{Runner: runner, AsyncAfter: time.Millisecond})
	ctx := context.Background()

	r, tr := call(t, tool, `{"action":"execute","code":"await sleep(45000); output('slow result')"}`)
	<-started
	if !r.Success || r.Status != code.StatusRunning || r.JobID == "" {
		t.Fatalf("result = %s; want a running job", tr.Content)
	}
	e, err := st.FindExecution(ctx, r.JobID)
	if err != nil || e.Success || e.ErrorCategory != "" {
		t.Fatalf("trace while running = %+v, %v; want a running record", e, err)
	}

	s, tr := call(t, tool, `{"action":"status","job_id":"`+r.JobID+`"}`)
	if s.Status != code.StatusRunning || !s.Success || tr.Tainted {
		t.Fatalf("status while running = %s (tainted %t)", tr.Content, tr.Tainted)
	}
	other := inv(`{"action":"status","job_id":"` + r.JobID + `"}`)
	other.UserKey = "telegram:2"
	if _, err := tool.Call(ctx, other); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("another user's status = %v; want ENOTFOUND", err)
	}

	close(release)
	testkit.WaitFor(t, "the job to finish", func() bool {
		s, _ := call(t, tool, `{"action":"status","job_id":"`+r.JobID+`"}`)
		return s.Status == code.StatusDone
	})
	s, tr = call(t, tool, `{"action":"status","job_id":"`+r.JobID+`"}`)
	if !s.Success || string(s.Result) != `"slow result"` || !tr.Tainted || s.DurationMS == nil || *s.DurationMS != 45000 {
		t.Fatalf("status when done = %s", tr.Content)
	}
	e, err = st.FindExecution(ctx, r.JobID)
	if err != nil || !e.Success || e.Result != `"slow result"` || e.DurationMS != 45000 {
		t.Fatalf("trace when done = %+v, %v", e, err)
	}

	// After a restart the job is found in the store.
	fresh, _ := newTool(t, code.Config{Runner: runner, Store: st})
	s, tr = call(t, fresh, `{"action":"status","job_id":"`+r.JobID+`"}`)
	if s.Status != code.StatusDone || !s.Success || string(s.Result) != `"slow result"` {
		t.Fatalf("status after restart = %s", tr.Content)
	}
	if _, err := fresh.Call(ctx, inv(`{"action":"status","job_id":"nope"}`)); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("status of an unknown job = %v; want ENOTFOUND", err)
	}
}

func TestStatusOfInterruptedJob(t *testing.T) {
	tool, st := newTool(t, code.Config{Runner: okRunner(`1`)})
	// A running record left by a process that stopped.
	if err := st.RecordExecution(context.Background(), &kairos.CodeExecution{ID: "lost", UserKey: "telegram:1", Code: "x", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	s, tr := call(t, tool, `{"action":"status","job_id":"lost"}`)
	if s.Success || s.Status != code.StatusDone || !strings.Contains(s.Error, "interrupted") {
		t.Fatalf("status = %s; want an interrupted job", tr.Content)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	cancelled := make(chan struct{})
	runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		<-ctx.Done()
		close(cancelled)
		return &kairos.CellResult{ErrorCategory: kairos.CatTimeout, Error: "cell cancelled"}, nil
	}}
	tool, _ := newTool(t, code.Config{Runner: runner})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := tool.Call(ctx, inv(`{"action":"execute","code":"while(true){}"}`))
		errc <- err
	}()
	testkit.WaitFor(t, "the run to start", func() bool { return len(runner.Tasks()) == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v; want context.Canceled", err)
	}
	<-cancelled
}

func TestCloseStopsBackgroundRuns(t *testing.T) {
	runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		<-ctx.Done()
		return &kairos.CellResult{ErrorCategory: kairos.CatTimeout, Error: "cell cancelled"}, nil
	}}
	tool, st := newTool(t, code.Config{Runner: runner, AsyncAfter: time.Millisecond})
	r, _ := call(t, tool, `{"action":"execute","code":"while(true){}"}`)
	if r.Status != code.StatusRunning {
		t.Fatalf("status = %q, want running", r.Status)
	}
	tool.Close()
	e, err := st.FindExecution(context.Background(), r.JobID)
	if err != nil || e.ErrorCategory != kairos.CatTimeout {
		t.Fatalf("trace after Close = %+v, %v; want a recorded timeout", e, err)
	}
	if _, err := tool.Call(context.Background(), inv(`{"action":"execute","code":"1"}`)); kairos.ErrorCode(err) != kairos.EUNAVAILABLE {
		t.Fatalf("Call after Close = %v; want EUNAVAILABLE", err)
	}
}

func TestCheckpointAndResume(t *testing.T) {
	cp := &kairos.Checkpoint{ContinuationID: "cont-1", Cursor: "page=3", StateBlobRef: "sha256:ab", Stage: "fetching",
		Completed: []string{"page 1", "page 2"}, State: json.RawMessage(`{"seen":2}`)}
	runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		if task.Resume != nil {
			return &kairos.CellResult{Success: true, Output: json.RawMessage(`"finished"`)}, nil
		}
		return &kairos.CellResult{Success: false, ErrorCategory: kairos.CatTimeout, Error: "time budget exhausted",
			Output: json.RawMessage(`{"partial":true}`), Checkpoint: cp}, nil
	}}
	tool, st := newTool(t, code.Config{Runner: runner})
	r, tr := call(t, tool, `{"action":"execute","code":"checkpoint({cursor:'page=3'})"}`)
	if r.Success || r.Checkpoint == nil || r.Checkpoint.ContinuationID != "cont-1" || r.Checkpoint.Cursor != "page=3" ||
		r.Checkpoint.StateBlobRef != "sha256:ab" || r.JobID == "" || string(r.Result) != `{"partial":true}` {
		t.Fatalf("result = %s; want the checkpoint", tr.Content)
	}
	if strings.Contains(string(tr.Content), "seen") {
		t.Fatalf("the checkpoint's state reached the model: %s", tr.Content)
	}

	// status reports the checkpoint, also from the store after a restart.
	fresh, _ := newTool(t, code.Config{Runner: runner, Store: st})
	for name, tl := range map[string]*code.Tool{"memory": tool, "store": fresh} {
		s, tr := call(t, tl, `{"action":"status","job_id":"`+r.JobID+`"}`)
		if s.Success || s.Status != code.StatusDone || s.Checkpoint == nil || s.Checkpoint.ContinuationID != "cont-1" ||
			s.Checkpoint.Stage != "fetching" || len(s.Checkpoint.Completed) != 2 || s.ErrorCategory != kairos.CatTimeout {
			t.Fatalf("status from %s = %s", name, tr.Content)
		}
	}

	// execute with the job_id resumes it, from the store too.
	var finished string
	for name, tl := range map[string]*code.Tool{"memory": tool, "store": fresh} {
		s, tr := call(t, tl, `{"action":"execute","code":"output('finished')","job_id":"`+r.JobID+`"}`)
		if !s.Success || string(s.Result) != `"finished"` {
			t.Fatalf("resume from %s = %s", name, tr.Content)
		}
		task := runner.Last(t)
		if task.ContinuationID != "cont-1" || task.Resume == nil || string(task.Resume.State) != `{"seen":2}` || task.Resume.Cursor != "page=3" {
			t.Fatalf("resumed task from %s = %+v", name, task)
		}
		finished = s.JobID
	}

	// A job without a checkpoint cannot be resumed; another user's job is
	// not found.
	if _, err := fresh.Call(context.Background(), inv(`{"action":"execute","code":"1","job_id":"`+finished+`"}`)); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("resuming a finished job = %v; want EINVALID", err)
	}
	other := inv(`{"action":"execute","code":"1","job_id":"` + r.JobID + `"}`)
	other.UserKey = "telegram:2"
	if _, err := fresh.Call(context.Background(), other); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("resuming another user's job = %v; want ENOTFOUND", err)
	}
}

func TestSecretsNeverLeave(t *testing.T) {
	const secret = "sk-live-9f8e7d6c5b4a3210"
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		v := task.Secrets["API_KEY"] // a runner that forgot to scrub
		return &kairos.CellResult{
			Success: false, ErrorCategory: kairos.CatRuntime,
			Stdout: "key=" + v + "\n", Stderr: "Error: bad key " + v + " / " + b64,
			Error:  "Error: bad key " + v,
			Output: json.RawMessage(`{"k":"` + v + `","parts":["` + v[:10] + `","` + v[10:] + `"]}`),
			Checkpoint: &kairos.Checkpoint{ContinuationID: "c", Cursor: v,
				State: json.RawMessage(`"` + v + `"`)},
		}, nil
	}}
	tool, st := newTool(t, code.Config{Runner: runner, Secrets: map[string]string{"API_KEY": secret},
		Policy: policyWith(func(p *kairos.Policy) { p.Features.CredentialsAccess = true })})
	r, tr := call(t, tool, `{"action":"execute","code":"console.log('key=' + getSecret('API_KEY'))"}`)
	if task := runner.Last(t); task.Secrets["API_KEY"] != secret {
		t.Fatal("the cell did not get the secret it was classified to use")
	}
	s, str := call(t, tool, `{"action":"status","job_id":"`+r.JobID+`"}`)
	e, err := st.FindExecution(context.Background(), r.JobID)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{
		"result": string(tr.Content), "status": string(str.Content),
		"trace": fmt.Sprintf("%+v", *e), "spec": mustJSON(tool.Spec()),
		"coder prompt": code.CoderPrompt(kairos.DefaultPolicy(), []string{"API_KEY"}),
	}
	for where, text := range texts {
		for _, form := range []string{secret, b64, secret[:12], secret[12:]} {
			if strings.Contains(text, form) {
				t.Errorf("%s holds the secret (form %q): %s", where, form, text)
			}
		}
	}
	if !strings.Contains(string(tr.Content), redact.Redacted) || !strings.Contains(e.Stdout, redact.Redacted) {
		t.Fatalf("no redaction marker: result %s, stdout %q", tr.Content, e.Stdout)
	}
	if !strings.Contains(mustJSON(tool.Spec()), "API_KEY") {
		t.Fatal("the spec does not name the secret")
	}
	if s.Status != code.StatusDone || s.Checkpoint == nil {
		t.Fatalf("status = %s", str.Content)
	}
}

func TestSpec(t *testing.T) {
	rich := policyWith(func(p *kairos.Policy) {
		p.Features.Network = true
		p.Network.AllowList = []string{"api.github.com", "*.example.com", "news.ycombinator.com", "hn.algolia.com",
			"api.weather.gov", "wttr.in", "api.open-meteo.com", "pypi.org", "registry.npmjs.org", "crates.io"}
		p.Network.Methods = []string{"GET", "POST"}
		p.Features.CredentialsAccess = true
	})
	noCreds := policyWith(func(p *kairos.Policy) { p.Features.Network = true })
	secrets := map[string]string{"GITHUB_TOKEN": "ghp_aaaaaaaaaaaa", "WEATHER_KEY": "wk_bbbbbbbbbbbb", "NOTION_KEY": "nk_cccccccccccc"}
	tests := []struct {
		name        string
		cfg         code.Config
		wantActions []string
		want, not   []string
	}{
		{name: "offline, no model", cfg: code.Config{},
			wantActions: []string{"execute", "status"}, want: []string{"No network", "output(data)"},
			not: []string{"getJSON", "getSecret", "generate:"}},
		{name: "everything", cfg: code.Config{Policy: rich, Secrets: secrets, Model: scriptedModel()},
			wantActions: []string{"generate", "execute", "status"},
			want:        []string{"getJSON", "postJSON", "GET/POST", "api.github.com", "(+4 more)", "GITHUB_TOKEN", "getSecret", "authSecret", "generate:"}},
		{name: "credentials_access off", cfg: code.Config{Policy: noCreds, Secrets: secrets},
			wantActions: []string{"execute", "status"}, want: []string{"getJSON", "output(data)"},
			not: []string{"getSecret", "listSecrets", "GITHUB_TOKEN", "authSecret"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Runner = okRunner(`1`)
			tool, _ := newTool(t, tc.cfg)
			spec := tool.Spec()
			if spec.Name != "code" {
				t.Fatalf("name = %q", spec.Name)
			}
			var schema struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
				Required []string `json:"required"`
			}
			if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantActions, schema.Properties["action"].Enum); d != "" {
				t.Fatalf("actions (-want +got):\n%s", d)
			}
			for _, p := range []string{"action", "task", "context", "code", "timeout_ms", "job_id"} {
				if _, ok := schema.Properties[p]; !ok {
					t.Fatalf("parameter %s missing", p)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(spec.Description, w) {
					t.Errorf("description lacks %q: %s", w, spec.Description)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(spec.Description, w) {
					t.Errorf("description has %q: %s", w, spec.Description)
				}
			}
			// About 4 characters per token: the whole spec stays within
			// the ~250-token share of the fixed prompt overhead.
			size := len(spec.Description) + len(spec.Parameters)
			t.Logf("spec: %d chars ≈ %d tokens", size, size/4)
			if size/4 > 300 {
				t.Fatalf("spec is about %d tokens, want at most 300: %s %s", size/4, spec.Description, spec.Parameters)
			}
		})
	}
}
