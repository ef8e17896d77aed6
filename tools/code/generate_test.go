package code_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/tools/code"
)

// syntaxRunner fails code containing "oops" with a SyntaxError and runs
// anything else with output 3.
func syntaxRunner() *fakeRunner {
	return &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		if strings.Contains(task.Code, "oops") {
			return &kairos.CellResult{ErrorCategory: kairos.CatSyntax, Error: "SyntaxError: unexpected token 'oops'", ExitCode: 1}, nil
		}
		return &kairos.CellResult{Success: true, Output: json.RawMessage(`3`)}, nil
	}}
}

func TestGenerateFixesOnSecondAttempt(t *testing.T) {
	model := scriptedModel(
		"Here you go:\n```javascript\nconst x = 1 +;\noops\n```\nHope it helps.",
		"```js\noutput(1 + 2)\n```",
	)
	runner := syntaxRunner()
	tool, st := newTool(t, code.Config{Runner: runner, Model: model, CoderModel: func() string { return "coder-1" }})
	r, tr := call(t, tool, `{"action":"generate","task":"add one and two","context":"numbers are small"}`)
	if !r.Success || string(r.Result) != `3` || r.Attempts != 2 || r.Code != "output(1 + 2)" || !tr.Tainted {
		t.Fatalf("result = %s", tr.Content)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d, want 2", len(reqs))
	}
	first := reqs[0]
	if first.Model != "coder-1" || len(first.Tools) != 0 || first.MaxTokens == 0 {
		t.Fatalf("coding request = %+v; want model coder-1, no tools, a token limit", first)
	}
	if first.Messages[0].Role != kairos.RoleSystem || !strings.Contains(first.Messages[0].Content, "output(data)") {
		t.Fatalf("system prompt = %q", first.Messages[0].Content)
	}
	if u := first.Messages[1].Content; !strings.Contains(u, "add one and two") || !strings.Contains(u, "numbers are small") {
		t.Fatalf("user message = %q; want the task and context", u)
	}
	second := reqs[1].Messages
	fb := second[len(second)-1]
	if fb.Role != kairos.RoleUser || !strings.Contains(fb.Content, "SyntaxError: unexpected token 'oops'") || !strings.Contains(fb.Content, "syntax") {
		t.Fatalf("feedback = %+v; want the error fed back", fb)
	}
	if prev := second[len(second)-2]; prev.Role != kairos.RoleAssistant || !strings.Contains(prev.Content, "oops") {
		t.Fatalf("the failed answer is not in the retry's history: %+v", prev)
	}
	// Both runs are traced, with the attempt in the reasoning.
	tasks := runner.Tasks()
	if len(tasks) != 2 || tasks[0].Code != "const x = 1 +;\noops" {
		t.Fatalf("runs = %d, first code %q", len(tasks), tasks[0].Code)
	}
	fs, err := st.CodeFailures(context.Background(), 5)
	if err != nil || len(fs) != 1 || fs[0].ErrorCategory != kairos.CatSyntax || !strings.Contains(fs[0].LLMReasoning, "generate attempt 1/3") {
		t.Fatalf("traced failure = %+v, %v", fs, err)
	}
}

func TestGenerateGivesUpAfterThreeAttempts(t *testing.T) {
	model := scriptedModel("```\noops 1\n```", "```\noops 2\n```", "```\noops 3\n```", "```\noutput(1)\n```")
	runner := syntaxRunner()
	tool, _ := newTool(t, code.Config{Runner: runner, Model: model})
	r, tr := call(t, tool, `{"action":"generate","task":"something"}`)
	if r.Success || r.Attempts != 3 || r.Code != "oops 3" || r.ErrorCategory != kairos.CatSyntax {
		t.Fatalf("result = %s; want the third failure", tr.Content)
	}
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("model calls = %d, want 3", n)
	}
}

func TestGenerateNoCodeCountsAsAttempt(t *testing.T) {
	model := scriptedModel("   ", "```javascript\noutput(3)\n```")
	tool, _ := newTool(t, code.Config{Runner: syntaxRunner(), Model: model})
	r, tr := call(t, tool, `{"action":"generate","task":"three"}`)
	if !r.Success || r.Attempts != 2 {
		t.Fatalf("result = %s", tr.Content)
	}
	last := model.Requests()[1].Messages
	if !strings.Contains(last[len(last)-1].Content, "no usable code") {
		t.Fatalf("feedback = %q", last[len(last)-1].Content)
	}
}

func TestGenerateDoesNotRunImpactfulCode(t *testing.T) {
	writes := policyWith(func(p *kairos.Policy) {
		p.Features.Network = true
		p.Network.AllowList = []string{"api.example.com"}
		p.Network.Methods = []string{"GET", "POST"}
	})
	model := scriptedModel("```js\nawait postJSON('https://api.example.com/items', {name: 'x'})\noutput('ok')\n```")
	runner := syntaxRunner()
	tool, _ := newTool(t, code.Config{Runner: runner, Model: model, Policy: writes})
	r, tr := call(t, tool, `{"action":"generate","task":"create an item"}`)
	if r.Success || !strings.Contains(r.Code, "postJSON") || !strings.Contains(r.Error, "action execute") {
		t.Fatalf("result = %s; want the code returned for an approved execute", tr.Content)
	}
	if len(runner.Tasks()) != 0 {
		t.Fatal("impactful generated code was run")
	}
	sys := model.Requests()[0].Messages[0].Content
	if !strings.Contains(sys, "postJSON") || !strings.Contains(sys, "api.example.com") {
		t.Fatalf("system prompt lacks the network globals: %q", sys)
	}
}

func TestGenerateAsync(t *testing.T) {
	release := make(chan struct{})
	runner := &fakeRunner{RunFn: func(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
		<-release
		return &kairos.CellResult{Success: true, Output: json.RawMessage(`"late"`)}, nil
	}}
	model := scriptedModel("```js\nawait sleep(60000); output('late')\n```")
	tool, _ := newTool(t, code.Config{Runner: runner, Model: model, AsyncAfter: time.Millisecond})
	r, tr := call(t, tool, `{"action":"generate","task":"wait a minute"}`)
	if !r.Success || r.Status != code.StatusRunning || r.JobID == "" || r.Code == "" || r.Attempts != 1 {
		t.Fatalf("result = %s; want a running job with its code", tr.Content)
	}
	close(release)
	testkit.WaitFor(t, "the job to finish", func() bool {
		s, _ := call(t, tool, `{"action":"status","job_id":"`+r.JobID+`"}`)
		return s.Status == code.StatusDone && string(s.Result) == `"late"`
	})
}

func TestGenerateModelFailure(t *testing.T) {
	model := &mock.Model{ChatFn: func(ctx context.Context, req kairos.ChatRequest) (*kairos.ChatResponse, error) {
		return nil, &kairos.ProviderError{StatusCode: 503, Retryable: true, Message: "overloaded"}
	}}
	tool, _ := newTool(t, code.Config{Runner: syntaxRunner(), Model: model})
	_, err := tool.Call(context.Background(), inv(`{"action":"generate","task":"x"}`))
	if err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("Call = %v; want the provider failure", err)
	}
}

func TestCoderPrompt(t *testing.T) {
	offline := code.CoderPrompt(kairos.DefaultPolicy(), nil)
	for _, absent := range []string{"getJSON", "postJSON", "fetchWithAuth", "getSecret"} {
		if strings.Contains(offline, absent) {
			t.Errorf("offline prompt mentions %s: %s", absent, offline)
		}
	}
	if !strings.Contains(offline, "no network") || !strings.Contains(offline, "```javascript") {
		t.Errorf("offline prompt = %s", offline)
	}
	p := kairos.DefaultPolicy()
	p.Features.Network = true
	p.Network.AllowList = []string{"api.example.com"}
	online := code.CoderPrompt(p, []string{"TOKEN"})
	for _, present := range []string{"getJSON", "postJSON", "fetchWithAuth", "getSecret", "TOKEN", "api.example.com", "GET only"} {
		if !strings.Contains(online, present) {
			t.Errorf("online prompt lacks %s: %s", present, online)
		}
	}
	if n := len(online) / 4; n > 350 {
		t.Errorf("coder prompt is about %d tokens", n)
	}
}

func TestExtractCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"```javascript\noutput(1)\n```", "output(1)"},
		{"Sure!\n```js\nconst a = 1;\noutput(a)\n```\nDone.", "const a = 1;\noutput(a)"},
		{"```\nplain()\n```", "plain()"},
		{"```js title=x.js\nx()\n```", "x()"},
		{"```js\nunclosed()\n", "unclosed()"},
		{"output(2)", "output(2)"},
		{"```js\nfirst()\n```\n```js\nsecond()\n```", "first()"},
		{"```js\nconst s = `a ${b}`;\n```", "const s = `a ${b}`;"},
	}
	for _, tc := range tests {
		if got := code.ExtractCode(tc.in); got != tc.want {
			t.Errorf("ExtractCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
