package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/internal/fit"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/openai"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	"github.com/kairos-agent/kairos/tools"
)

// windowHarness is newHarness with a token counter of the test's choice.
func windowHarness(t *testing.T, count func(model, text string) int) *harness {
	t.Helper()
	db := storetest.MustOpenDB(t)
	h := &harness{db: db, llm: testkit.NewFakeOpenAI(t), sessions: store.NewSessionStore(db), clock: &mock.Clock{}, pol: kairos.DefaultPolicy()}
	h.agent = agent.New(agent.Config{
		Model:    openai.New(openai.Config{BaseURL: h.llm.URL()}),
		Sessions: h.sessions, Clock: h.clock, Tools: tools.NewRegistry(&echoTool{name: "echo"}),
		Policy: func() *kairos.Policy { return h.pol }, Models: []string{"small"}, CountTokens: count,
		Backoff: func(int, time.Duration) time.Duration { return time.Millisecond },
	})
	return h
}

func requestTokens(r testkit.ChatRequest) int {
	n := 0
	for _, m := range r.Messages {
		n += agent.EstimateTokens(m.Content) + 4
	}
	for _, t := range r.Tools {
		n += agent.EstimateTokens(t.Name+t.Description+string(t.Parameters)) + 4
	}
	return n
}

// fill runs n turns of about 60 tokens each.
func fill(t *testing.T, h *harness, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		h.llm.Enqueue(testkit.TextReply(fmt.Sprintf("answer %d ", i) + strings.Repeat("word ", 25)))
		if err := h.agent.HandleMessage(context.Background(), dm(fmt.Sprintf("question %d ", i)+strings.Repeat("text ", 25)), &mock.Replier{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPromptFitsContextWindow: with a small window the history is cut,
// newest first, so that the prompt leaves room for the answer
// (max_output_tokens), and the older turns go to the running summary.
func TestPromptFitsContextWindow(t *testing.T) {
	h := windowHarness(t, nil)
	h.pol.Agent.HistoryTokens = 100000 // the window, not this, is the limit
	h.pol.Models = map[string]kairos.ModelSpec{"small": {ContextWindow: 1000, MaxOutputTokens: 200}}
	fill(t, h, 12)
	h.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply { return testkit.TextReply("short summary") })
	h.llm.Enqueue(testkit.TextReply("fits"))
	if err := h.agent.HandleMessage(context.Background(), dm("the newest question"), &mock.Replier{}); err != nil {
		t.Fatal(err)
	}
	var turn testkit.ChatRequest
	for _, r := range h.llm.Requests() {
		if r.LastUserMessage() == "the newest question" {
			turn = r
		}
	}
	if turn.Model == "" {
		t.Fatal("the turn's request is missing")
	}
	if got := requestTokens(turn); got+200 > 1000 {
		t.Errorf("prompt of %d tokens leaves no room for a 200-token answer in 1000", got)
	}
	if turn.MaxTokens != 200 {
		t.Errorf("max_tokens = %d, want the model's 200", turn.MaxTokens)
	}
	var history []string
	for _, m := range turn.Messages[1 : len(turn.Messages)-1] {
		history = append(history, m.Content)
	}
	joined := strings.Join(history, "\n")
	if !strings.Contains(joined, "question 11 ") || strings.Contains(joined, "question 0 ") {
		t.Errorf("history is not the newest turns:\n%s", joined)
	}
	if len(history) < 4 {
		t.Errorf("only %d history messages kept; the window has room for more", len(history))
	}
	if !strings.Contains(turn.SystemPrompt(), "Earlier in this session: ") {
		t.Errorf("the summary of the dropped turns is not in the system prompt")
	}
}

// TestWindowCountsWithTheCounter: the counter given decides (a counter
// twice the estimate keeps about half the history).
func TestWindowCountsWithTheCounter(t *testing.T) {
	kept := map[string]int{}
	for name, count := range map[string]func(string, string) int{
		"estimate": nil,
		"double":   func(_, s string) int { return 2 * fit.Estimate(s) },
	} {
		h := windowHarness(t, count)
		h.pol.Agent.HistoryTokens = 100000
		h.pol.Models = map[string]kairos.ModelSpec{"small": {ContextWindow: 2000, MaxOutputTokens: 100}}
		fill(t, h, 12)
		kept[name] = len(h.llm.LastRequest().Messages)
	}
	if kept["double"] >= kept["estimate"] {
		t.Errorf("messages kept: %v; the counter was not used", kept)
	}
}

// TestSummaryCallFitsTheWindow: a long backlog folded for a small window
// does not make the summary request itself too long.
func TestSummaryCallFitsTheWindow(t *testing.T) {
	h := windowHarness(t, nil)
	h.pol.Agent.HistoryTokens = 100000
	fill(t, h, 30) // no window yet: everything stays in the history
	h.pol.Models = map[string]kairos.ModelSpec{"small": {ContextWindow: 1200, MaxOutputTokens: 200}}
	h.llm.SetQuirks("", testkit.Quirks{ContextWindow: 1200})
	n := len(h.llm.Requests())
	h.llm.Enqueue(testkit.TextReply("summary"), testkit.TextReply("answer"))
	out := &mock.Replier{}
	if err := h.agent.HandleMessage(context.Background(), dm("now"), out); err != nil {
		t.Fatal(err)
	}
	for _, r := range h.llm.Requests()[n:] {
		if r.Status != 200 {
			t.Errorf("a request was refused (%d tokens): status %d", testkit.PromptTokens(r), r.Status)
		}
	}
	if out.Text() != "answer" {
		t.Errorf("final %q", out.Text())
	}
}
