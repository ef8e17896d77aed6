package skill_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kairos-agent/kairos"
)

// methodServer is a real HTTP server that counts the requests it gets by
// method.
type methodServer struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string]int
}

func newMethodServer(t *testing.T) *methodServer {
	s := &methodServer{got: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got[r.Method]++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *methodServer) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[method]
}

// posterCode posts to url unless input.dry: a skill its tests cannot
// post from (they run read-only), approved while the policy allowed GET
// only.
func posterCode(url string) string {
	return `async function run(input) {
  if (input.dry) return {sent: false};
  try { await postJSON("` + url + `/post", {n: 1}); return {sent: true}; }
  catch (e) { return {sent: false, error: String(e && e.message || e)}; }
}`
}

func posterArgs(name, url string) map[string]any {
	a := withCaps(createArgs(name, posterCode(url), map[string]any{"name": "dry", "input": map[string]any{"dry": true},
		"expect": map[string]any{"sent": false}}), []string{"127.0.0.1"}, nil)
	a["description"], a["input_schema"] = "Posts a note", map[string]any{"type": "object"}
	return a
}

func localPolicy(p *kairos.Policy) {
	p.Network.AllowList = []string{"127.0.0.1"}
	p.Network.Methods = []string{"GET"}
}

// A skill runs with what its approval showed (issue 31, item 5): a
// skill approved while the policy allowed GET only does not POST once
// the operator allows POST, and its run is not impactful either; a new
// approval (an update, even one changing nothing) is what widens it.
// Budgets likewise: a budget raised later is not the skill's.
func TestApprovedGrantIsTheCeiling(t *testing.T) {
	srv := newMethodServer(t)
	r := newRig(t, localPolicy)
	act, out := r.do(t, inv(posterArgs("poster", srv.URL)))
	if out["success"] != true || strings.Contains(act.Reason, "network_write") || !strings.Contains(act.Detail, "Network: GET to 127.0.0.1") {
		t.Fatalf("approval %+v out %v", act, out)
	}
	approvedCalls := r.runner.last().Budget.MaxNetworkCalls

	// The operator allows POST and raises the network calls per cell.
	r.pol.Network.Methods = []string{"GET", "POST"}
	r.pol.Budgets.Defaults.MaxNetworkCalls = approvedCalls * 4
	r.pol.Budgets.PerVerb = nil
	tool := r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner, All: true})[0]
	ra, err := tool.Action(context.Background(), &kairos.ToolInvocation{Arguments: []byte(`{}`), UserKey: owner})
	if err != nil || ra.Impactful {
		t.Fatalf("run action %+v %v: a run of a GET-only approval asks nobody and so may not write", ra, err)
	}
	got, _ := r.call(t, "poster", `{}`)
	task := r.runner.last()
	if n := srv.count("POST"); n != 0 || got["result"].(map[string]any)["sent"] != false {
		t.Fatalf("the GET-only skill posted %d times after the policy widened: %v (methods %v)", n, got, task.Network.Methods)
	}
	if mustJSON(task.Network.Methods) != `["GET"]` {
		t.Errorf("run methods %v", task.Network.Methods)
	}
	if task.Budget.MaxNetworkCalls != approvedCalls {
		t.Errorf("run budget: %d network calls, approved %d", task.Budget.MaxNetworkCalls, approvedCalls)
	}

	// A new approval of the same version under the wider policy.
	act, out = r.do(t, inv(map[string]any{"action": "update", "name": "poster"}))
	if act.Name != kairos.ActionSkillUpdate || !strings.Contains(act.Reason, "network_write") || !strings.Contains(act.Detail, "Network: GET, POST to 127.0.0.1") ||
		out["success"] != true {
		t.Fatalf("re-approval %+v out %v", act, out)
	}
	if got, _ := r.call(t, "poster", `{}`); srv.count("POST") != 1 || got["result"].(map[string]any)["sent"] != true {
		t.Fatalf("after the new approval: %v, %d POSTs", got, srv.count("POST"))
	}
	// Nothing to approve again: the error says why.
	if _, err := r.s.Tool().Action(context.Background(), inv(map[string]any{"action": "update", "name": "poster"})); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("an empty update under the same policy: %v", err)
	}

	// Narrowing still applies at once: POST off again, no POST.
	r.pol.Network.Methods = []string{"GET"}
	r.call(t, "poster", `{}`)
	if n := srv.count("POST"); n != 1 {
		t.Fatalf("%d POSTs after the policy narrowed", n)
	}
}

// A version approved before grants were kept (no grant stored) gets what
// its approval showed: its hosts, GET/HEAD unless it was marked
// network_write, its secrets only if marked for them.
func TestVersionWithoutStoredGrant(t *testing.T) {
	srv := newMethodServer(t)
	r := newRig(t, func(p *kairos.Policy) {
		localPolicy(p)
		p.Network.Methods = []string{"GET", "POST"}
		p.Features.CredentialsAccess = true
	})
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		risk   []string
		posted int
	}{
		{"old_reader", []string{kairos.RiskNetworkRead}, 0},
		{"old_writer", []string{kairos.RiskNetworkRead, kairos.RiskNetworkWrite}, 1},
	} {
		v := &kairos.SkillVersion{Description: "an old skill", InputSchema: []byte(`{"type":"object"}`), Code: posterCode(srv.URL),
			Tests: []kairos.SkillTest{{Input: []byte(`{"dry":true}`), Expect: []byte(`{"sent":false}`)}}, Risk: c.risk,
			Capabilities: kairos.SkillCapabilities{Hosts: []string{"127.0.0.1"}, Secrets: []string{"WEATHER_KEY"}}}
		if err := r.st.CreateSkill(ctx, &kairos.Skill{Name: c.name, Owner: owner}, v); err != nil {
			t.Fatal(err)
		}
		r.s.Changed()
		before := srv.count("POST")
		r.call(t, c.name, `{}`)
		if n := srv.count("POST") - before; n != c.posted {
			t.Errorf("%s (risk %v) posted %d times, want %d", c.name, c.risk, n, c.posted)
		}
		if s := r.runner.last().Secrets; len(s) != 0 {
			t.Errorf("%s got secrets %v it was never approved for", c.name, s)
		}
	}
}

// Test results are content (issue 31, item 6): the outputs of tests that
// could read the network come back untrusted, from `skill test` and from
// a create (passing, or failing and asking nobody); tests that compute
// only come back clean.
func TestTestOutputsThatReadTheNetworkAreUntrusted(t *testing.T) {
	srv := newMethodServer(t)
	r := newRig(t, localPolicy)
	reader := func(name, expect string) map[string]any {
		a := withCaps(createArgs(name, `async function run(input) { return await getJSON("`+srv.URL+`/page"); }`,
			map[string]any{"input": map[string]any{}, "expect": map[string]any{"$predicate": expect}}), []string{"127.0.0.1"}, nil)
		a["input_schema"] = map[string]any{"type": "object"}
		return a
	}
	for _, c := range []struct {
		name    string
		args    map[string]any
		tainted bool
	}{
		{"test of a reader", func() map[string]any { a := reader("", "true"); a["action"] = "test"; delete(a, "name"); return a }(), true},
		{"create of a reader", reader("reader", "result.ok === true"), true},
		{"failing create of a reader", reader("failing", "false"), true},
		{"test that computes", map[string]any{"action": "test", "code": doubleCode,
			"tests": []map[string]any{{"input": map[string]any{"n": 1}, "expect": map[string]any{"doubled": 2}}}}, false},
		{"create of a reader whose tests read nothing", func() map[string]any {
			a := reader("quiet", "true")
			a["tests"] = []map[string]any{{"input": map[string]any{"dry": true}, "expect": map[string]any{"$predicate": "true"}}}
			a["code"] = `async function run(input) { if (input.dry) return {}; return await getJSON("` + srv.URL + `/page"); }`
			return a
		}(), false},
	} {
		in := inv(c.args)
		tool := r.s.Tool()
		if _, err := tool.Action(context.Background(), in); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		res, err := tool.Call(context.Background(), in)
		if err != nil || res.Tainted != c.tainted || !strings.Contains(string(res.Content), "test_results") {
			t.Errorf("%s: tainted=%v, want %v (%v) %s", c.name, res != nil && res.Tainted, c.tainted, err, res.Content)
		}
	}
}
