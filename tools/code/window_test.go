package code_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/fit"
	"github.com/kairos-agent/kairos/tools/code"
)

// generate's calls fit the coding model's context window (the policy's):
// earlier attempts go, the task stays, a long context is cut at its end,
// and system prompt, messages and the answer's room stay within it.
func TestGenerateFitsTheContextWindow(t *testing.T) {
	pol := kairos.DefaultPolicy()
	sys := fit.Estimate(code.CoderPrompt(pol, nil))
	window := (2048 + sys + 500) * 20 / 19
	pol.Models = map[string]kairos.ModelSpec{"coder-1": {ContextWindow: window}}
	bad := func(i int) string {
		return fmt.Sprintf("```js\n// attempt %d\n%s\noops\n```", i, strings.Repeat("const a = 1; ", 100))
	}
	model := scriptedModel(bad(1), bad(2), bad(3))
	tool, _ := newTool(t, code.Config{Runner: syntaxRunner(), Model: model, CoderModel: func() string { return "coder-1" },
		Policy: func() *kairos.Policy { return pol }})
	ctxText := "CTX-START " + strings.Repeat("background detail. ", 400) + " CTX-END"
	call(t, tool, fmt.Sprintf(`{"action":"generate","task":"add one and two","context":%q}`, ctxText))
	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model calls = %d, want 3", len(reqs))
	}
	for i, r := range reqs {
		sent := r.MaxTokens
		for _, m := range r.Messages {
			sent += fit.Estimate(m.Content) + 4
		}
		all := fmt.Sprint(r.Messages)
		if sent > window || !strings.Contains(r.Messages[1].Content, "add one and two") || strings.Contains(all, "CTX-END") {
			t.Fatalf("call %d: %d tokens for a window of %d; task kept %v", i+1, sent, window, strings.Contains(all, "add one and two"))
		}
	}
	last := fmt.Sprint(reqs[2].Messages)
	if strings.Contains(last, "attempt 1") || !strings.Contains(last, "SyntaxError") {
		t.Fatalf("third call keeps attempt 1 or loses the latest feedback: %s", last)
	}
}
