package code_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	"github.com/kairos-agent/kairos/tools/code"
)

// fakeRunner is a fn-field kairos.CodeRunner that remembers its tasks.
type fakeRunner struct {
	RunFn func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error)

	mu    sync.Mutex
	tasks []*kairos.CellTask
}

func (r *fakeRunner) Run(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
	r.mu.Lock()
	r.tasks = append(r.tasks, task)
	r.mu.Unlock()
	return r.RunFn(ctx, task)
}

func (r *fakeRunner) Tasks() []*kairos.CellTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*kairos.CellTask(nil), r.tasks...)
}

func (r *fakeRunner) Last(t *testing.T) *kairos.CellTask {
	t.Helper()
	ts := r.Tasks()
	if len(ts) == 0 {
		t.Fatal("the runner ran nothing")
	}
	return ts[len(ts)-1]
}

// okRunner answers every task with output(value).
func okRunner(value string) *fakeRunner {
	return &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		return &kairos.CellResult{ID: "r", Success: true, Output: json.RawMessage(value), Duration: 7 * time.Millisecond}, nil
	}}
}

// scriptedModel answers with the given texts in order.
func scriptedModel(answers ...string) *mock.Model {
	var mu sync.Mutex
	i := 0
	return &mock.Model{ChatFn: func(ctx context.Context, req kairos.ChatRequest) (*kairos.ChatResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		if i >= len(answers) {
			return nil, &kairos.ProviderError{Message: "script exhausted"}
		}
		a := answers[i]
		i++
		return &kairos.ChatResponse{Message: kairos.ChatMessage{Role: kairos.RoleAssistant, Content: a}}, nil
	}}
}

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// newTool builds a tool over a real SQLite trace store; cfg's zero fields
// get test defaults. The tool is closed when the test ends.
func newTool(t *testing.T, cfg code.Config) (*code.Tool, *store.CodeStore) {
	t.Helper()
	st := store.NewCodeStore(storetest.MustOpenDB(t))
	if cfg.Store == nil {
		cfg.Store = st
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return t0 }
	}
	tool := code.New(cfg)
	t.Cleanup(func() { tool.Close() })
	return tool, st
}

func inv(argsJSON string) *kairos.ToolInvocation {
	return &kairos.ToolInvocation{
		CallID: "c1", Name: "code", Arguments: json.RawMessage(argsJSON),
		UserKey: "telegram:1", ThreadKey: "thread", SessionID: "s1", ChatKind: "dm",
		TriggerMessage: "please compute", Reasoning: "I will run code", Now: t0,
	}
}

// result is the decoded tool result.
type result struct {
	Success       bool            `json:"success"`
	Status        string          `json:"status"`
	JobID         string          `json:"job_id"`
	Result        json.RawMessage `json:"result"`
	Stdout        string          `json:"stdout"`
	Error         string          `json:"error"`
	ErrorCategory string          `json:"error_category"`
	Checkpoint    *struct {
		ContinuationID string   `json:"continuation_id"`
		Cursor         string   `json:"cursor"`
		StateBlobRef   string   `json:"state_blob_ref"`
		Stage          string   `json:"current_stage"`
		Completed      []string `json:"completed_steps"`
	} `json:"checkpoint"`
	DurationMS *int64 `json:"duration_ms"`
	Code       string `json:"code"`
	Attempts   int    `json:"attempts"`
	Note       string `json:"note"`
}

func call(t *testing.T, tool *code.Tool, argsJSON string) (result, *kairos.ToolResult) {
	t.Helper()
	return callInv(t, tool, inv(argsJSON))
}

func callInv(t *testing.T, tool *code.Tool, in *kairos.ToolInvocation) (result, *kairos.ToolResult) {
	t.Helper()
	tr, err := tool.Call(context.Background(), in)
	if err != nil {
		t.Fatalf("Call(%s): %v", in.Arguments, err)
	}
	var r result
	if err := json.Unmarshal(tr.Content, &r); err != nil {
		t.Fatalf("result is not JSON: %v: %s", err, tr.Content)
	}
	return r, tr
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func policyWith(f func(p *kairos.Policy)) func() *kairos.Policy {
	return func() *kairos.Policy {
		p := kairos.DefaultPolicy()
		f(p)
		return p
	}
}
