package skill_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

// BUILD: the tests run in a real cell first; the create always asks, with
// the whole code, the tests and their results; after the call the skill
// is offered and runs as a cell.
func TestCreateThenRun(t *testing.T) {
	r := newRig(t, nil)
	act, out := r.do(t, inv(createArgs("double", doubleCode)))
	if act.Name != kairos.ActionSkillCreate || !act.AlwaysAsk || !act.Impactful {
		t.Fatalf("action %+v", act)
	}
	for _, want := range []string{doubleCode, "PASS two", "Risk: none", `"required":["n"]`} {
		if !strings.Contains(act.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, act.Detail)
		}
	}
	if out["success"] != true || !strings.Contains(mustJSON(out), `"version":1`) {
		t.Fatalf("create %v", out)
	}
	got, res := r.call(t, "double", `{"n":21}`)
	if got["success"] != true || mustJSON(got["result"]) != `{"doubled":42}` || res.Tainted {
		t.Fatalf("run %v tainted=%v", got, res.Tainted)
	}
	if !strings.Contains(r.runner.last().Code, doubleCode) || r.runner.last().Network.Enabled || r.runner.last().Secrets != nil {
		t.Fatalf("cell task %+v", r.runner.last())
	}
	// A wrong input is refused before anything runs.
	tool := r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner})[0]
	if _, err := tool.Action(context.Background(), &kairos.ToolInvocation{Arguments: []byte(`{"n":"x"}`), UserKey: owner}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("bad input: %v", err)
	}
	// Another user is not offered it.
	if n := len(r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: "telegram:9", All: true})); n != 0 {
		t.Fatalf("another user sees %d skills", n)
	}
}

func TestFailingTestBlocksCreate(t *testing.T) {
	r := newRig(t, nil)
	tests := []map[string]any{
		{"name": "two", "input": map[string]any{"n": 2}, "expect": map[string]any{"doubled": 4}},
		{"name": "positive", "input": map[string]any{"n": -3}, "expect": map[string]any{"$predicate": "result.doubled > 0"}},
		{"name": "throws", "input": map[string]any{"n": 0}, "expect": 1},
	}
	code := "function run(input) { if (input.n === 0) throw new Error('zero!'); return {doubled: input.n * 2}; }"
	act, out := r.do(t, inv(createArgs("double", code, tests...)))
	if act.Name != kairos.ActionSkillTest || act.Impactful || act.AlwaysAsk {
		t.Fatalf("a failing create asks: %+v", act)
	}
	s := mustJSON(out)
	if out["success"] != false || !strings.Contains(s, "2 of 3 tests failed") || !strings.Contains(s, `"got":{"doubled":-6}`) ||
		!strings.Contains(s, "zero!") || !strings.Contains(s, `"name":"two","passed":true`) {
		t.Fatalf("result %s", s)
	}
	if _, err := r.st.FindSkill(context.Background(), owner, "double"); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("a failing skill was stored: %v", err)
	}
	// A syntax error fails every test with the cell's error.
	_, out = r.do(t, inv(createArgs("double", "function run(input) { return {doubled: ; }")))
	if out["success"] != false || !strings.Contains(mustJSON(out), "syntax") {
		t.Fatalf("syntax error %s", mustJSON(out))
	}
}

func TestCapabilitiesWithinPolicy(t *testing.T) {
	r := newRig(t, nil)
	tool := r.s.Tool()
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"host outside the allow-list", withCaps(createArgs("w", doubleCode), []string{"evil.example.com"}, nil), kairos.EFORBIDDEN},
		{"undeclared network", createArgs("w", "async function run(i){ return await getJSON('https://api.example.org/x'); }"), kairos.EINVALID},
		{"secrets switched off", withCaps(createArgs("w", doubleCode), nil, []string{"WEATHER_KEY"}), kairos.EFORBIDDEN},
		{"no tests", func() map[string]any { a := createArgs("w", doubleCode); a["tests"] = []any{}; return a }(), kairos.EINVALID},
		{"two lines of description", func() map[string]any { a := createArgs("w", doubleCode); a["description"] = "a\nb"; return a }(), kairos.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tool.Action(context.Background(), inv(tc.args))
			if kairos.ErrorCode(err) != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
	// A wildcard host within the allow-list is fine; the tests run GET-only.
	act, err := tool.Action(context.Background(), inv(withCaps(createArgs("w", "async function run(i){ return typeof getJSON; }",
		map[string]any{"input": map[string]any{"n": 1}, "expect": "function"}), []string{"paris.weather.test"}, nil)))
	if err != nil || act.Name != kairos.ActionSkillCreate || !strings.Contains(act.Detail, "network_read") {
		t.Fatalf("action %+v %v", act, err)
	}
	if g := r.runner.last().Network; !g.Enabled || mustJSON(g.AllowHosts) != `["paris.weather.test"]` || mustJSON(g.Methods) != `["GET"]` {
		t.Fatalf("test grant %+v", g)
	}
}

func withCaps(a map[string]any, hosts, secrets []string) map[string]any {
	a["capabilities"] = map[string]any{"hosts": hosts, "secrets": secrets}
	return a
}

// Tainted: a skill made in a tainted turn stays marked and its results
// are untrusted.
func TestTaintedSkill(t *testing.T) {
	r := newRig(t, nil)
	in := inv(createArgs("double", doubleCode))
	in.Tainted, in.TaintSource = true, "search"
	act, out := r.do(t, in)
	if !act.AlwaysAsk || !strings.Contains(act.Detail, "untrusted content (search)") || out["success"] != true {
		t.Fatalf("action %+v out %v", act, out)
	}
	sk, err := r.st.FindSkill(context.Background(), owner, "double")
	if err != nil || !sk.Tainted || sk.TaintSource != "search" || !sk.Current.Tainted {
		t.Fatalf("stored %+v %v", sk, err)
	}
	if _, res := r.call(t, "double", `{"n":1}`); !res.Tainted {
		t.Fatal("a tainted skill's result is trusted")
	}
	spec := r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner})[0].Spec()
	if !strings.Contains(spec.Untrusted, "untrusted content (search)") || strings.Contains(spec.Description, "untrusted") {
		t.Fatalf("spec %q by %q: the description is to be fenced by the agent", spec.Description, spec.Untrusted)
	}
}

func TestSelfUpdateOffRemovesEverything(t *testing.T) {
	r := newRig(t, nil)
	r.do(t, inv(createArgs("double", doubleCode)))
	r.pol.Features.SelfUpdate = false
	if n := len(r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner, All: true})); n != 0 {
		t.Fatalf("%d skill tools with self_update off", n)
	}
	if _, err := r.s.Tool().Call(context.Background(), inv(map[string]any{"action": "list"})); kairos.ErrorCode(err) != kairos.EFORBIDDEN {
		t.Fatalf("skill list with self_update off: %v", err)
	}
}

// Scope: a skill is its owner's; once an operator shares it every user is
// offered it, but only its owner can change it.
func TestSharedSkill(t *testing.T) {
	r := newRig(t, nil)
	r.do(t, inv(createArgs("double", doubleCode)))
	other := kairos.ToolScope{UserKey: "telegram:3003", All: true}
	if n := len(r.s.ToolsFor(r.pol, other)); n != 0 {
		t.Fatalf("unshared skill offered to another user (%d)", n)
	}
	sk, _ := r.st.FindSkill(context.Background(), owner, "double")
	if err := r.st.SetSkillScope(context.Background(), sk.ID, kairos.SkillScopeShared); err != nil {
		t.Fatal(err)
	}
	r.s.Changed()
	if ts := r.s.ToolsFor(r.pol, other); len(ts) != 1 || ts[0].Spec().Name != "skill__double" || ts[0].Spec().Untrusted != "a skill shared by another user" {
		t.Fatalf("shared skill not offered, or its description not marked someone else's: %v", ts)
	}
	if ts := r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner}); ts[0].Spec().Untrusted != "" {
		t.Fatalf("the owner's own skill is marked %q", ts[0].Spec().Untrusted)
	}
	// Its words (list, show, its tests' outputs) are someone else's for
	// the other user: untrusted content.
	for _, a := range []map[string]any{{"action": "list"}, {"action": "show", "name": "double"}, {"action": "test", "name": "double"}} {
		in := inv(a)
		in.UserKey = "telegram:3003"
		if res, err := r.s.Tool().Call(context.Background(), in); err != nil || !res.Tainted {
			t.Errorf("%v by another user: tainted=%v err=%v", a, res != nil && res.Tainted, err)
		}
		if res, err := r.s.Tool().Call(context.Background(), inv(a)); err != nil || res.Tainted {
			t.Errorf("%v by its owner: tainted=%v err=%v", a, res != nil && res.Tainted, err)
		}
	}
	in := inv(map[string]any{"action": "update", "name": "double", "code": doubleCode + " // mine now"})
	in.UserKey = "telegram:3003"
	if _, err := r.s.Tool().Action(context.Background(), in); kairos.ErrorCode(err) != kairos.EFORBIDDEN {
		t.Fatalf("another user updated a shared skill: %v", err)
	}
}

// Test results come from the harness only: code that outputs a fake
// result itself (or replaces output) fails its test, and its runs.
func TestFakedTestResultsFail(t *testing.T) {
	r := newRig(t, nil)
	// Replacing output silences the harness: the fake has no nonce.
	code := "output({doubled: 4}); globalThis.output = () => {};\nfunction run(input) { return {doubled: 0}; }"
	act, out := r.do(t, inv(createArgs("double", code)))
	if act.Name != kairos.ActionSkillTest || out["success"] != false || !strings.Contains(mustJSON(out), "the skill's own output() call") {
		t.Fatalf("faked results: %+v %s", act, mustJSON(out))
	}
	// A run that never settles leaves the harness silent: the fake has no nonce.
	code = "function run(input) { output({doubled: 4}); return new Promise(() => {}); }"
	act, out = r.do(t, inv(createArgs("double", code)))
	if act.Name != kairos.ActionSkillTest || out["success"] != false || !strings.Contains(mustJSON(out), "the skill's own output() call") {
		t.Fatalf("faked results: %+v %s", act, mustJSON(out))
	}
}

// Secrets go to a cell only with a host to send them to: declaring one
// without a host is refused with the fix, not approved as "Risk: secrets"
// for a skill that can never read it.
func TestSecretsNeedAHost(t *testing.T) {
	r := newRig(t, func(p *kairos.Policy) { p.Features.CredentialsAccess = true })
	_, err := r.s.Tool().Action(context.Background(), inv(withCaps(createArgs("w", doubleCode), nil, []string{"WEATHER_KEY"})))
	if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(err.Error(), "add capabilities.hosts") {
		t.Fatalf("secrets without a host: %v", err)
	}
	v := &kairos.SkillVersion{Capabilities: kairos.SkillCapabilities{Secrets: []string{"WEATHER_KEY"}}}
	if got := r.s.Risks(r.pol, v); len(got) != 0 {
		t.Fatalf("a stored skill with secrets and no host is classified %v", got)
	}
}

// Risk: a skill that posts with a secret is classified so, its runs are
// impactful, and its cell gets POST and exactly the declared secret; its
// tests got neither.
func TestRiskWritesAndSecrets(t *testing.T) {
	r := newRig(t, func(p *kairos.Policy) {
		p.Network.Methods = []string{"GET", "POST"}
		p.Features.CredentialsAccess = true
	})
	code := "async function run(input) { if (input.dry) return {sent: false}; return await postJSON('https://api.example.org/x', input, 'WEATHER_KEY'); }"
	args := withCaps(createArgs("notify", code, map[string]any{"input": map[string]any{"dry": true}, "expect": map[string]any{"sent": false}}),
		[]string{"api.example.org"}, []string{"WEATHER_KEY"})
	act, out := r.do(t, inv(args))
	if !strings.Contains(act.Reason, "network_write") || !strings.Contains(act.Reason, "secrets") || out["success"] != true {
		t.Fatalf("action %+v out %v", act, out)
	}
	test := r.runner.last()
	if test.Secrets != nil || mustJSON(test.Network.Methods) != `["GET"]` {
		t.Fatalf("the tests got %v secrets and methods %v", test.Secrets, test.Network.Methods)
	}
	tool := r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner, All: true})[0]
	ra, err := tool.Action(context.Background(), &kairos.ToolInvocation{Arguments: []byte(`{"dry":true,"n":1}`), UserKey: owner})
	if err != nil || !ra.Impactful || ra.Name != kairos.ActionSkillRun || !strings.Contains(ra.Reason, "WEATHER_KEY") {
		t.Fatalf("run action %+v %v", ra, err)
	}
	r.call(t, "notify", `{"dry":true,"n":1}`)
	run := r.runner.last()
	if len(run.Secrets) != 1 || run.Secrets["WEATHER_KEY"] == "" || mustJSON(run.Network.Methods) != `["GET","POST"]` {
		t.Fatalf("run grant: secrets %d, methods %v", len(run.Secrets), run.Network.Methods)
	}
}

// The grant is the policy's at run time: a host taken off the allow-list
// after the approval is gone from the skill's cell.
func TestGrantFollowsThePolicyNow(t *testing.T) {
	r := newRig(t, nil)
	code := "async function run(input) { return typeof getJSON; }"
	args := withCaps(createArgs("probe", code, map[string]any{"input": map[string]any{"n": 1}, "expect": "function"}), []string{"api.example.org"}, nil)
	if _, out := r.do(t, inv(args)); out["success"] != true {
		t.Fatalf("create %v", out)
	}
	got, res := r.call(t, "probe", `{"n":1}`)
	if got["result"] != "function" || !res.Tainted || mustJSON(r.runner.last().Network.AllowHosts) != `["api.example.org"]` {
		t.Fatalf("run %v tainted=%v", got, res.Tainted)
	}
	r.pol.Network.AllowList = []string{"*.weather.test"}
	got, _ = r.call(t, "probe", `{"n":1}`)
	if got["result"] != "undefined" || r.runner.last().Network.Enabled {
		t.Fatalf("after the policy change %v, grant %+v", got, r.runner.last().Network)
	}
}
