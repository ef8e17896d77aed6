package skill

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/cell"
)

// predicateKey marks an expect that is a JavaScript predicate over
// `result` instead of a value.
const predicateKey = "$predicate"

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
	longest time.Duration // the slowest test's run
	budget  kairos.Budget // a run's budget
	start   time.Time     // when the first test began
	// readNet: a test's cell called the network (the sandbox counts only
	// the calls it let through), so the results (outputs, errors) may hold
	// what the network said: untrusted content.
	readNet bool
}

// spent reports whether the tests have used up their one time budget.
func (tr *testRun) spent() bool {
	return tr.budget.TimeBudget > 0 && time.Since(tr.start) >= tr.budget.TimeBudget
}

// runTests runs the tests of v, each as one run of the skill in a cell of
// its own (cellTask: a run's cell, read-only, no secrets); the host
// decides every verdict. A value is compared on the host (jsonEqual); a
// predicate gets the run's output as JSON data in a cell that holds none
// of the skill's code. So nothing the skill's code does in its runtime
// (redefining globals, faking output, keeping state between tests,
// noticing a harness) reaches a verdict except through what its run
// returns, which is what a real run would return.
//
// The tests run in turn and share one time budget of a run: a cell (a
// run or a predicate) starts only while they have spent less than it, so
// they take under two budgets in all (one when every cell keeps to half
// of its own). The budget is not handed to the cells as a deadline: it
// would show in budget() and tell a test from a run.
func (s *Skills) runTests(ctx context.Context, v *kairos.SkillVersion) (*testRun, error) {
	p := s.pol()
	tr := &testRun{budget: cell.BudgetFor(p, verb(v)), passed: true, start: time.Now()}
	for _, t := range v.Tests {
		r, err := s.runTest(ctx, p, v, t, tr)
		if err != nil {
			return nil, err
		}
		tr.passed = tr.passed && r.Passed
		tr.results = append(tr.results, r)
	}
	return tr, nil
}

// runTest runs one test: the skill's run, then the comparison or the
// predicate's cell, each unless the tests' time is spent.
func (s *Skills) runTest(ctx context.Context, p *kairos.Policy, v *kairos.SkillVersion, t kairos.SkillTest, tr *testRun) (kairos.SkillTestResult, error) {
	r := kairos.SkillTestResult{Name: t.Name}
	if tr.spent() {
		r.Error = fmt.Sprintf("not run: the tests spent their time budget (%s in all)", tr.budget.TimeBudget)
		return r, nil
	}
	task, nonce := s.cellTask(p, v, t.Input, true)
	res, err := s.cfg.Runner.Run(ctx, task)
	if err != nil {
		return r, fmt.Errorf("run the skill's tests: %w", err)
	}
	tr.readNet = tr.readNet || res.NetworkCalls > 0
	tr.longest = max(tr.longest, res.Duration)
	res = s.scrub(res)
	settle(res, nonce)
	if !res.Success {
		r.Error = cellError(res)
		return r, nil
	}
	r.Got = clipJSON(res.Output, 2000)
	pred, ok := predicate(t.Expect)
	switch {
	case !ok:
		r.Passed = jsonEqual(res.Output, t.Expect)
	case tr.spent():
		r.Error = fmt.Sprintf("predicate not run: the tests spent their time budget (%s in all)", tr.budget.TimeBudget)
	default:
		r.Passed, r.Error, err = s.checkPredicate(ctx, p, pred, res.Output)
	}
	return r, err
}

// checkPredicate runs a test's predicate over a run's output in a cell of
// its own: no skill code, no network, no secrets; `result` is the output
// parsed from a JSON string by the cell's own JSON.parse. It returns the
// verdict, or why there is none.
func (s *Skills) checkPredicate(ctx context.Context, p *kairos.Policy, pred string, output json.RawMessage) (bool, string, error) {
	nonce := newNonce()
	lit, _ := json.Marshal(string(output)) // escapes U+2028/U+2029: a valid JavaScript string
	code := "const result = JSON.parse(" + string(lit) + ");\n" +
		"Promise.resolve().then(() => (" + pred + "\n)).then((v) => !!v).then(\n" + settleJS(nonce)
	task := &kairos.CellTask{Code: code, Verb: kairos.VerbBuild, Budget: cell.BudgetFor(p, kairos.VerbBuild), Now: s.cfg.Now()}
	res, err := s.cfg.Runner.Run(ctx, task)
	if err != nil {
		return false, "", fmt.Errorf("run a test's predicate: %w", err)
	}
	res = s.scrub(res)
	settle(res, nonce)
	if !res.Success {
		return false, "the predicate failed: " + cellError(res), nil
	}
	var verdict bool
	return json.Unmarshal(res.Output, &verdict) == nil && verdict, "", nil
}

// jsonEqual is the comparison of a run's output with a test's expect:
// deep equality of the two JSON values. Objects are equal when they have
// the same keys (order free) with equal values, arrays when their items
// are equal in order. Numbers are equal when they are the same float64,
// the number JavaScript holds: 4, 4.0 and 4e0 are equal, 0.30000000000000004
// (0.1+0.2) is not 0.3, integers beyond 2^53 compare as their nearest
// float64, and -0 equals 0. (NaN and Infinity leave a cell as null.)
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
