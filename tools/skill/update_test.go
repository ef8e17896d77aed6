package skill_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

// UPDATE: a diff against the current version, the kept tests must pass,
// dropped tests are shown; the switch is atomic (a call in flight
// finishes on the version it read); rollback returns to a kept version.
func TestUpdateDiffSwitchRollback(t *testing.T) {
	r := newRig(t, func(p *kairos.Policy) { p.Skills.VersionsKept = 2 })
	tests := []map[string]any{
		{"name": "two", "input": map[string]any{"n": 2}, "expect": map[string]any{"doubled": 4}},
		{"name": "zero", "input": map[string]any{"n": 0}, "expect": map[string]any{"doubled": 0}},
	}
	r.do(t, inv(createArgs("double", doubleCode, tests...)))

	// A new version that breaks a kept test is refused with the results.
	act, out := r.do(t, inv(map[string]any{"action": "update", "name": "double", "code": "function run(input) { return {doubled: input.n * 2 + 1}; }"}))
	if act.Name != kairos.ActionSkillTest || out["success"] != false || !strings.Contains(mustJSON(out), "2 of 2 tests failed") {
		t.Fatalf("breaking update: %+v %v", act, out)
	}
	// A good one: the approval shows the diff and the dropped test.
	v2 := "function run(input) {\n  const n = Number(input.n);\n  return {doubled: n * 2, v: 2};\n}"
	act, out = r.do(t, inv(map[string]any{"action": "update", "name": "double", "code": v2, "tests": []map[string]any{
		{"name": "two", "input": map[string]any{"n": 2}, "expect": map[string]any{"$predicate": "result.doubled === 4 && result.v === 2"}}}}))
	for _, want := range []string{"--- a/v1", "+++ b/new", "-function run(input) { return {doubled: input.n * 2}; }",
		"+  const n = Number(input.n);", "Dropped tests (no longer checked): zero", "PASS two"} {
		if !strings.Contains(act.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, act.Detail)
		}
	}
	if act.Name != kairos.ActionSkillUpdate || !act.AlwaysAsk || out["success"] != true || !strings.Contains(mustJSON(out["diff"]), "@@") {
		t.Fatalf("update %+v %v", act, out)
	}
	if got, _ := r.call(t, "double", `{"n":5}`); mustJSON(got["result"]) != `{"doubled":10,"v":2}` || got["version"] != float64(2) {
		t.Fatalf("v2 run %v", got)
	}

	// In flight: a call that started on v2 finishes on v2 while v3 takes over.
	r.runner.mu.Lock()
	r.runner.gate, r.runner.started = make(chan struct{}), make(chan *kairos.CellTask, 1)
	r.runner.mu.Unlock()
	done := make(chan map[string]any, 1)
	go func() { got, _ := r.call(t, "double", `{"n":1}`); done <- got }()
	<-r.runner.started
	r.runner.mu.Lock()
	gate := r.runner.gate
	r.runner.gate = nil
	r.runner.mu.Unlock()
	_, out = r.do(t, inv(map[string]any{"action": "update", "name": "double", "code": strings.Replace(v2, "v: 2", "v: 3", 1),
		"tests": []map[string]any{{"name": "two", "input": map[string]any{"n": 2}, "expect": map[string]any{"doubled": 4, "v": 3}}}}))
	if out["success"] != true {
		t.Fatalf("v3 %v", out)
	}
	close(gate)
	if got := <-done; mustJSON(got["result"]) != `{"doubled":2,"v":2}` || got["version"] != float64(2) {
		t.Fatalf("the call in flight: %v", got)
	}
	if got, _ := r.call(t, "double", `{"n":1}`); got["version"] != float64(3) {
		t.Fatalf("after the switch: %v", got)
	}

	// Versions kept: 2 (v2, v3); v1 is gone. Rollback (no version: the previous one).
	if _, err := r.s.Tool().Action(context.Background(), inv(map[string]any{"action": "rollback", "name": "double", "version": 1})); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("rollback to a pruned version: %v", err)
	}
	act, out = r.do(t, inv(map[string]any{"action": "rollback", "name": "double"}))
	if act.Name != kairos.ActionSkillRollback || !act.AlwaysAsk || !strings.Contains(act.Detail, "version 3 → version 2") || out["success"] != true {
		t.Fatalf("rollback %+v %v", act, out)
	}
	if got, _ := r.call(t, "double", `{"n":1}`); got["version"] != float64(2) {
		t.Fatalf("after rollback: %v", got)
	}
	_, out = r.do(t, inv(map[string]any{"action": "show", "name": "double"}))
	if s := mustJSON(out); !strings.Contains(s, `"versions":[3,2]`) || !strings.Contains(s, `"version":2`) {
		t.Fatalf("show %s", s)
	}
}

// N runs failing in a row disable the skill and tell its owner, once.
func TestFailuresDisable(t *testing.T) {
	r := newRig(t, func(p *kairos.Policy) { p.Skills.MaxFailures = 2 })
	code := "function run(input) { if (input.n < 0) throw new Error('negative'); return {doubled: input.n * 2}; }"
	r.do(t, inv(createArgs("double", code)))
	r.call(t, "double", `{"n":-1}`)
	r.call(t, "double", `{"n":1}`) // a success resets the count
	got, _ := r.call(t, "double", `{"n":-1}`)
	if got["success"] != false || got["note"] != nil {
		t.Fatalf("first failure %v", got)
	}
	got, _ = r.call(t, "double", `{"n":-2}`)
	if !strings.Contains(fmt.Sprint(got["note"]), "now disabled") || !strings.Contains(fmt.Sprint(got["error"]), "negative") {
		t.Fatalf("second failure %v", got)
	}
	if len(r.told) != 1 || !strings.Contains(r.told[0], owner+": Your skill *double* failed 2 runs") {
		t.Fatalf("told %q", r.told)
	}
	if n := len(r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner, All: true})); n != 0 {
		t.Fatalf("a disabled skill is offered (%d)", n)
	}
}

// runOverBudget creates the skill double, whose run does stuck for an
// input over 100, then calls it with 1000 under a 300 ms budget. The
// create's own test runs under the default budget: under 300 ms, a loaded
// machine could time it out too, and there would be no skill to call.
func runOverBudget(t *testing.T, stuck string) (*rig, map[string]any) {
	t.Helper()
	r := newRig(t, nil)
	code := "function run(input) { if (input.n > 100) " + stuck + " return {doubled: input.n * 2}; }"
	if _, out := r.do(t, inv(createArgs("double", code))); out["success"] != true {
		t.Fatalf("create %s", mustJSON(out))
	}
	r.pol.Budgets.PerVerb = map[string]kairos.CellBudget{kairos.VerbBuild: {TimeBudgetMS: 300}}
	got, _ := r.call(t, "double", `{"n":1000}`)
	return r, got
}

// A skill over its budget fails with the budget's category and counts as
// a failure.
func TestSkillOverBudget(t *testing.T) {
	r, got := runOverBudget(t, "{ while (true) {} }")
	if got["success"] != false || got["error_category"] != kairos.CatTimeout {
		t.Fatalf("over budget %v", got)
	}
	if b := r.runner.last().Budget.TimeBudget.Milliseconds(); b != 300 {
		t.Fatalf("budget %d ms", b)
	}
	sk, _ := r.st.FindSkill(context.Background(), owner, "double")
	if sk.Failures != 1 || sk.RunFailures != 1 {
		t.Fatalf("failures %+v", sk)
	}
}

// A run that never settles is a failure, not a hang.
func TestRunThatNeverSettles(t *testing.T) {
	_, got := runOverBudget(t, "return new Promise(() => {});")
	if got["success"] != false || !strings.Contains(fmt.Sprint(got["error"]), "never returned") {
		t.Fatalf("never settles %v", got)
	}
}

// A skill's own top-level await on a promise that never settles is
// stopped by the sandbox at the cell's budget (no grace period on the
// skill's side): its tests fail with a timeout and the create returns.
func TestTopLevelAwaitNeverSettlingEndsAtBudget(t *testing.T) {
	r := newRig(t, func(p *kairos.Policy) {
		p.Budgets.PerVerb = map[string]kairos.CellBudget{kairos.VerbBuild: {TimeBudgetMS: 300}}
	})
	_, out := r.do(t, inv(createArgs("stuck", "await new Promise(() => {});\n"+doubleCode)))
	s := mustJSON(out)
	if strings.Contains(s, `"passed":true`) || !strings.Contains(s, "time budget of 300ms exhausted") {
		t.Fatalf("stuck create %s", s)
	}
	if c := r.runner.last(); c == nil || c.Budget.TimeBudget.Milliseconds() != 300 {
		t.Fatalf("cell %+v", c)
	}
}
