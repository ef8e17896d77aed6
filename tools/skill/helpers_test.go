package skill_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/sandbox"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	"github.com/kairos-agent/kairos/tools/skill"
)

// cells is one warm sandbox for the package (the engine takes about a
// second to compile).
var cells *sandbox.Runner

func TestMain(m *testing.M) {
	ctx := context.Background()
	var err error
	if cells, err = sandbox.New(ctx, sandbox.Config{PoolSize: 2}); err == nil {
		err = cells.Warm(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = cells.Close(ctx)
	os.Exit(code)
}

// gatedRunner runs cells on the shared sandbox; while a gate is set, a
// run first announces itself on started and waits for the gate.
type gatedRunner struct {
	mu      sync.Mutex
	gate    chan struct{}
	started chan *kairos.CellTask
	tasks   []*kairos.CellTask
}

func (r *gatedRunner) Run(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
	r.mu.Lock()
	r.tasks = append(r.tasks, task)
	gate, started := r.gate, r.started
	r.mu.Unlock()
	if gate != nil {
		started <- task
		<-gate
	}
	return cells.Run(ctx, task)
}

func (r *gatedRunner) last() *kairos.CellTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tasks[len(r.tasks)-1]
}

type rig struct {
	t      *testing.T
	s      *skill.Skills
	st     *store.SkillStore
	runner *gatedRunner
	pol    *kairos.Policy
	mu     sync.Mutex
	told   []string
}

func newRig(t testing.TB, edit func(p *kairos.Policy)) *rig {
	db := storetest.MustOpenDB(t)
	p := kairos.DefaultPolicy()
	p.Features.Network = true
	p.Network.AllowList = []string{"api.example.org", "*.weather.test"}
	if edit != nil {
		edit(p)
	}
	r := &rig{st: store.NewSkillStore(db), runner: &gatedRunner{}, pol: p}
	if tt, ok := t.(*testing.T); ok {
		r.t = tt
	}
	r.s = skill.New(skill.Config{Store: r.st, Runner: r.runner, Policy: func() *kairos.Policy { return r.pol },
		Executions: store.NewCodeStore(db), Secrets: map[string]string{"WEATHER_KEY": "wk-secret-value-123"},
		Notify: func(_ context.Context, owner, text string) {
			r.mu.Lock()
			r.told = append(r.told, owner+": "+text)
			r.mu.Unlock()
		}})
	return r
}

const owner = "telegram:2002"

func inv(args any) *kairos.ToolInvocation {
	b, _ := json.Marshal(args)
	return &kairos.ToolInvocation{CallID: fmt.Sprint(time.Now().UnixNano()), Arguments: b, UserKey: owner, Now: time.Now()}
}

const doubleCode = "function run(input) { return {doubled: input.n * 2}; }"

func createArgs(name, code string, tests ...map[string]any) map[string]any {
	if tests == nil {
		tests = []map[string]any{{"name": "two", "input": map[string]any{"n": 2}, "expect": map[string]any{"doubled": 4}}}
	}
	return map[string]any{"action": "create", "name": name, "description": "Doubles a number n",
		"code": code, "input_schema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number"}},
			"required": []string{"n"}}, "tests": tests}
}

// do runs a call as the agent does: Action, then (approved) Call.
func (r *rig) do(t *testing.T, in *kairos.ToolInvocation) (kairos.ToolAction, map[string]any) {
	t.Helper()
	tool := r.s.Tool()
	act, err := tool.Action(context.Background(), in)
	if err != nil {
		t.Fatalf("action: %v", err)
	}
	res, err := tool.Call(context.Background(), in)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(res.Content, &out); err != nil {
		t.Fatal(err)
	}
	return act, out
}

// call runs skill__<name> for the owner.
func (r *rig) call(t *testing.T, name, input string) (map[string]any, *kairos.ToolResult) {
	t.Helper()
	var tool kairos.Tool
	for _, tl := range r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner, All: true}) {
		if tl.Spec().Name == "skill__"+name {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatalf("skill__%s is not offered", name)
	}
	in := &kairos.ToolInvocation{CallID: "c", Name: "skill__" + name, Arguments: json.RawMessage(input), UserKey: owner}
	if _, err := tool.Action(context.Background(), in); err != nil {
		t.Fatalf("action: %v", err)
	}
	res, err := tool.Call(context.Background(), in)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	var out map[string]any
	json.Unmarshal(res.Content, &out)
	return out, res
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
