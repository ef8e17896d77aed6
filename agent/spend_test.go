package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// A user at a cap gets the cap's sentence as the turn's answer, and the
// model is not asked; the turn is stored like any other.
func TestSpendCapAnswersWithoutModelCall(t *testing.T) {
	h := newHarness(t, []string{"m1"}, false)
	h.llm.Enqueue(testkit.TextReply("one two three four five six"))
	daily := int64(10)
	h.pol.Budgets.Spend.DailyTokens = &daily
	ctx := context.Background()
	if err := h.agent.HandleMessage(ctx, dm("first question with several words in it"), &mock.Replier{}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.llm.Requests()); n != 1 {
		t.Fatalf("model calls after the first turn = %d, want 1", n)
	}
	out := &mock.Replier{}
	if err := h.agent.HandleMessage(ctx, dm("second question"), out); err != nil {
		t.Fatal(err)
	}
	if n := len(h.llm.Requests()); n != 1 {
		t.Fatalf("model calls = %d after a capped turn, want still 1", n)
	}
	if got := out.Text(); !strings.Contains(got, "daily token limit of 10 tokens") || !strings.Contains(got, "resets at midnight") {
		t.Fatalf("capped answer = %q", got)
	}
	zero := int64(0)
	h.pol.Budgets.Spend.DailyTokens = &zero
	out = &mock.Replier{}
	if err := h.agent.HandleMessage(ctx, dm("third"), out); err != nil {
		t.Fatal(err)
	}
	if got := out.Text(); !strings.Contains(got, "You cannot use the model: your daily token limit is 0") {
		t.Fatalf("cap 0 answer = %q", got)
	}
}

// A tool that calls the model itself (code generate, research) does so
// for the turn's user: its calls count against that user's caps.
func TestToolCallsSpendForTheTurnsUser(t *testing.T) {
	tool := &echoTool{name: "echo"}
	h := newHarness(t, []string{"m1"}, false, tool)
	h.llm.Enqueue(testkit.ToolReply(testkit.ToolCall{Name: "echo", Arguments: `{"text":"x"}`}), testkit.TextReply("done"))
	if err := h.agent.HandleMessage(context.Background(), dm("echo x"), &mock.Replier{}); err != nil {
		t.Fatal(err)
	}
	sc := tool.spend.Load()
	if sc == nil || sc.UserKey != "telegram:7" || sc.Kind != kairos.SpendChat || sc.SessionID == "" || sc.ThreadKey == "" {
		t.Fatalf("the tool's spend context = %+v", sc)
	}
}
