package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// growingSource is a tool source (as the skills are) that counts how
// often the turn asks it for tools. It offers its maker, and once the
// maker has run one more tool, like a skill created by a tool call.
type growingSource struct {
	mu    sync.Mutex
	asked int
	maker kairos.Tool
	grow  *echoTool
	grown bool
}

func (g *growingSource) Tools(p *kairos.Policy) []kairos.Tool {
	return g.ToolsFor(p, kairos.ToolScope{})
}

func (g *growingSource) ToolsFor(*kairos.Policy, kairos.ToolScope) []kairos.Tool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked++
	if g.grown {
		return []kairos.Tool{g.maker, g.grow}
	}
	return []kairos.Tool{g.maker}
}

func (g *growingSource) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.asked
}

// maker is a tool whose call makes the source offer its new tool.
type maker struct {
	echoTool
	src *growingSource
}

func (m *maker) Call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	m.src.mu.Lock()
	m.src.grown = true
	m.src.mu.Unlock()
	return m.echoTool.Call(ctx, inv)
}

func offered(req testkit.ChatRequest, name string) bool {
	for _, td := range req.Tools {
		if td.Name == name {
			return true
		}
	}
	return false
}

// TestToolsListedOncePerStep: a plain turn asks the tool sources twice,
// for the offer and for everything (what is left out); the prompt, its
// token budget and the model call share the answer (they asked seven
// times). A tool that adds a tool (a skill created in the turn) has it
// offered at the next step.
func TestToolsListedOncePerStep(t *testing.T) {
	src := &growingSource{grow: &echoTool{name: "fresh_skill"}}
	src.maker = &maker{echoTool: echoTool{name: "make_skill"}, src: src}
	h := newHarnessWith(t, []string{"m1"}, false, src)
	permissive(h)
	h.llm.Enqueue(testkit.TextReply("hello"))
	if err := h.agent.HandleMessage(context.Background(), dm("hi"), &mock.Replier{}); err != nil {
		t.Fatal(err)
	}
	if n := src.count(); n != 2 {
		t.Errorf("a plain turn listed the tools %d times, want 2", n)
	}
	h.llm.Enqueue(testkit.ToolReply(testkit.ToolCall{Name: "make_skill", Arguments: `{"text":"x"}`}), testkit.TextReply("made"))
	if err := h.agent.HandleMessage(context.Background(), dm("make a skill"), &mock.Replier{}); err != nil {
		t.Fatal(err)
	}
	reqs := h.llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if offered(reqs[1], "fresh_skill") || !offered(reqs[2], "fresh_skill") {
		t.Errorf("the tool made in step 1 offered before it existed (%v) or not after (%v)", offered(reqs[1], "fresh_skill"), offered(reqs[2], "fresh_skill"))
	}
}
