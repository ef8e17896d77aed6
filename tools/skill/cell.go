package skill

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
	codetool "github.com/kairos-agent/kairos/tools/code"
)

// predicateKey marks an expect that is a JavaScript predicate over
// `result` instead of a value.
const predicateKey = "$predicate"

// hostAllowed reports whether host (a name or a *.suffix pattern) lies
// within one of the patterns.
func hostAllowed(host string, patterns []string) bool {
	host = strings.ToLower(strings.TrimSpace(host))
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == host {
			return true
		}
		if suf, ok := strings.CutPrefix(p, "*"); ok && strings.HasPrefix(suf, ".") && strings.HasSuffix(host, suf) {
			return true
		}
	}
	return false
}

// grant is what a cell of the skill may use under the policy now: the
// declared hosts still allowed, GET/HEAD unless the code writes and the
// policy lets it (write false for tests), and the declared secrets still
// configured (never for tests).
func (s *Skills) grant(p *kairos.Policy, v *kairos.SkillVersion, forTest bool) (kairos.NetworkGrant, map[string]string) {
	g := codetool.GrantFor(p)
	var hosts []string
	for _, h := range v.Capabilities.Hosts {
		if g.Enabled && hostAllowed(h, g.AllowHosts) {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		return kairos.NetworkGrant{}, nil
	}
	g.AllowHosts = hosts
	if forTest || !codetool.Scan(v.Code).NetworkWrite {
		var ms []string
		for _, m := range g.Methods {
			if m == "GET" || m == "HEAD" {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			ms = []string{"GET"}
		}
		g.Methods = ms
	}
	if forTest || !p.Features.CredentialsAccess {
		return g, nil
	}
	var secrets map[string]string
	for _, name := range v.Capabilities.Secrets {
		if val, ok := s.cfg.Secrets[name]; ok && val != "" {
			if secrets == nil {
				secrets = map[string]string{}
			}
			secrets[name] = val
		}
	}
	return g, secrets
}

// verb is the cell verb of a skill's runs: RESEARCH when it reads the
// network, else BUILD (as the code tool classifies code).
func verb(v *kairos.SkillVersion) string {
	if len(v.Capabilities.Hosts) > 0 {
		return kairos.VerbResearch
	}
	return kairos.VerbBuild
}

// runCode is a skill's code followed by one call of run(input), chained
// rather than awaited: a run whose promise never settles leaves no output
// and the cell ends as soon as nothing is left to do, so the host says
// "never returned" at once instead of a timeout at the budget. A thrown
// error is output as {errorKey: message} and turned back into a failure on
// the host.
func runCode(code string, input json.RawMessage) string {
	return code + "\n;Promise.resolve().then(() => run(" + string(input) + ")).then(\n" +
		"  (r) => output(r === undefined ? null : r),\n" +
		"  (e) => output({" + errorKey + ": String(e && e.message !== undefined ? e.message : e)}));\n"
}

// errorKey marks a run's thrown error in its output.
const errorKey = "__kairos_skill_error"

// testCode is a skill's code followed by a harness that runs every test
// and outputs {nonce, results: [{got} | {got, pass} | {error}]} in order,
// through the output function captured before the skill's code runs. The
// nonce tells the harness's output from one the skill's code made itself.
func testCode(code, nonce string, tests []kairos.SkillTest) string {
	var b strings.Builder
	b.WriteString("const __kairos_output = output;\n")
	b.WriteString(code)
	b.WriteString("\n;{ const __kairos_tests = [\n")
	for _, t := range tests {
		pred := "null"
		if p, ok := predicate(t.Expect); ok {
			pred = "(result) => (" + p + "\n)"
		}
		fmt.Fprintf(&b, "  {input: %s, pred: %s},\n", t.Input, pred)
	}
	b.WriteString(`];
  (async () => {
  const __kairos_out = [];
  for (const t of __kairos_tests) {
    try {
      let r = await run(t.input);
      if (r === undefined) r = null;
      const e = {got: r};
      if (t.pred) e.pass = !!(await t.pred(r));
      __kairos_out.push(e);
    } catch (err) {
      __kairos_out.push({error: String(err && err.message !== undefined ? err.message : err)});
    }
  }
  __kairos_output({nonce: "` + nonce + `", results: __kairos_out});
  })();
}
`)
	return b.String()
}

// predicate returns the JavaScript of an expect written as
// {"$predicate": "…"}.
func predicate(expect json.RawMessage) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(expect, &m) != nil || len(m) != 1 {
		return "", false
	}
	raw, ok := m[predicateKey]
	if !ok {
		return "", false
	}
	var p string
	if json.Unmarshal(raw, &p) != nil || strings.TrimSpace(p) == "" {
		return "", false
	}
	return p, true
}

// testRun is the outcome of running a version's tests.
type testRun struct {
	results []kairos.SkillTestResult
	passed  bool
	cell    *kairos.CellResult
	budget  kairos.Budget
}

// runTests runs the tests of v in one cell: network read-only on the
// declared hosts, no secrets, the BUILD budget.
func (s *Skills) runTests(ctx context.Context, v *kairos.SkillVersion) (*testRun, error) {
	p := s.pol()
	g, _ := s.grant(p, v, true)
	b := codetool.BudgetFor(p, kairos.VerbBuild)
	tok := make([]byte, 12)
	rand.Read(tok)
	nonce := hex.EncodeToString(tok)
	task := &kairos.CellTask{Code: testCode(v.Code, nonce, v.Tests), Verb: kairos.VerbBuild, Budget: b, Network: g, Now: s.cfg.Now()}
	res, err := s.cfg.Runner.Run(ctx, task)
	if err != nil {
		return nil, fmt.Errorf("run the skill's tests: %w", err)
	}
	tr := &testRun{cell: s.scrub(res), budget: b, passed: true}
	var out struct {
		Nonce   string `json:"nonce"`
		Results []struct {
			Got   json.RawMessage `json:"got"`
			Pass  *bool           `json:"pass"`
			Error string          `json:"error"`
		} `json:"results"`
	}
	if res.Success {
		_ = json.Unmarshal(res.Output, &out)
		if len(res.Output) == 0 {
			tr.cell.Success, tr.cell.ErrorCategory = false, kairos.CatRuntime
			tr.cell.Error = "the tests did not finish: a promise never settled (run must return or resolve)"
		} else if out.Nonce != nonce {
			tr.cell.Success, tr.cell.ErrorCategory = false, kairos.CatRuntime
			tr.cell.Error = "the test results did not come from the test harness (return the result from run; do not call output)"
		}
	}
	outs := out.Results
	for i, t := range v.Tests {
		r := kairos.SkillTestResult{Name: t.Name}
		switch {
		case !tr.cell.Success:
			r.Error = cellError(tr.cell)
		case i >= len(outs):
			r.Error = "the test produced no result"
		case outs[i].Error != "":
			r.Error = s.red.Scrub(kairos.Clip(outs[i].Error, 500))
		default:
			r.Got = clipJSON(outs[i].Got, 2000)
			if outs[i].Pass != nil {
				r.Passed = *outs[i].Pass
			} else {
				r.Passed = jsonEqual(outs[i].Got, t.Expect)
			}
		}
		tr.passed = tr.passed && r.Passed
		tr.results = append(tr.results, r)
	}
	return tr, nil
}

func cellError(res *kairos.CellResult) string {
	msg := res.Error
	if msg == "" {
		msg = res.Stderr
	}
	if res.ErrorCategory != "" {
		msg = res.ErrorCategory + ": " + msg
	}
	return kairos.Clip(strings.TrimSpace(msg), 500)
}

// scrub removes secret values from a cell's texts.
func (s *Skills) scrub(res *kairos.CellResult) *kairos.CellResult {
	r := *res
	r.Stdout, r.Stderr, r.Error = s.red.Scrub(r.Stdout), s.red.Scrub(r.Stderr), s.red.Scrub(r.Error)
	r.Output = json.RawMessage(s.red.Scrub(string(r.Output)))
	return &r
}

// jsonEqual compares two JSON values (numbers as float64, key order free).
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return reflect.DeepEqual(x, y)
}

func clipJSON(raw json.RawMessage, n int) json.RawMessage {
	if len(raw) <= n {
		return raw
	}
	b, _ := json.Marshal(kairos.Clip(string(raw), n))
	return b
}

// risks classifies a version (seed 004's risk classification): network
// reads and writes, secrets, and a long run (its tests took over half of
// the time budget).
func (s *Skills) risks(p *kairos.Policy, v *kairos.SkillVersion, tr *testRun) []string {
	var out []string
	if len(v.Capabilities.Hosts) > 0 {
		out = append(out, kairos.RiskNetworkRead)
		u := codetool.Scan(v.Code)
		g := codetool.GrantFor(p)
		if u.NetworkWrite && slices.ContainsFunc(g.Methods, func(m string) bool { return m != "GET" && m != "HEAD" }) {
			out = append(out, kairos.RiskNetworkWrite)
		}
	}
	if len(v.Capabilities.Secrets) > 0 {
		out = append(out, kairos.RiskSecrets)
	}
	if tr != nil && tr.cell != nil && tr.budget.TimeBudget > 0 && tr.cell.Duration*2 > tr.budget.TimeBudget {
		out = append(out, kairos.RiskLongRun)
	}
	return out
}
