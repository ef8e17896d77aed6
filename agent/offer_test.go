package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/tools"
)

// cuedTool is an echo tool offered on demand (tools.Offered): when the
// message holds one of its cues, or the turn asks for it.
type cuedTool struct {
	*echoTool
	cues []string
}

func (c cuedTool) CuedBy(m tools.Message) bool { return tools.HasCue(m.Words, c.cues) }

// TestMoreToolsReachesWhatIsNotOffered: a tool on demand is left out of a
// plain message's offer, named in the prompt, and offered from the step
// after the model asks for it with more_tools; a message that cues it is
// offered it at once, and then nothing is left out (no more_tools).
func TestMoreToolsReachesWhatIsNotOffered(t *testing.T) {
	search := &echoTool{name: "search"}
	sched := &echoTool{name: "schedule"}
	h2 := newHarnessOf(t, []string{"m1"}, false, nil, search, cuedTool{sched, []string{"remind"}})
	h2.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		switch len(r.ToolResults()) {
		case 0:
			return testkit.ToolReply(testkit.ToolCall{Name: "more_tools", Arguments: `{"names":["schedule"]}`})
		case 1:
			return testkit.ToolReply(testkit.ToolCall{Name: "schedule", Arguments: `{"text":"x"}`})
		}
		return testkit.TextReply("done")
	})
	if err := h2.agent.HandleMessage(context.Background(), dm("hello there"), &mock.Replier{}); err != nil {
		t.Fatal(err)
	}
	reqs := h2.llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if reqs[0].HasTool("schedule") || !reqs[0].HasTool("more_tools") || !reqs[0].HasTool("search") {
		t.Errorf("plain message offered %v: want search and more_tools, not schedule", reqs[0].ToolNames())
	}
	if !strings.Contains(reqs[0].SystemPrompt(), "More tools (more_tools offers them): schedule") {
		t.Errorf("the prompt does not name the tool left out:\n%s", reqs[0].SystemPrompt())
	}
	if !reqs[1].HasTool("schedule") || reqs[1].HasTool("more_tools") {
		t.Errorf("after more_tools the step offered %v", reqs[1].ToolNames())
	}
	if sched.calls.Load() != 1 {
		t.Errorf("schedule ran %d times, want 1", sched.calls.Load())
	}

	h2.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply { return testkit.TextReply("ok") })
	if err := h2.agent.HandleMessage(context.Background(), dm("remind me at noon"), &mock.Replier{}); err != nil {
		t.Fatal(err)
	}
	last := h2.llm.LastRequest()
	if !last.HasTool("schedule") || last.HasTool("more_tools") || strings.Contains(last.SystemPrompt(), "More tools") {
		t.Errorf("a cued message offered %v with prompt:\n%s", last.ToolNames(), last.SystemPrompt())
	}
}
