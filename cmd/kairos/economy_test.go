package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/internal/tokens"
	"github.com/kairos-agent/kairos/store"
)

// plainBudgetBytes is what a plain Telegram message may send the model
// (issue 36: 3 KB or less; it was 6.7 KB). Sizes are deterministic, so
// this is a unit test, not a benchmark.
const plainBudgetBytes = 3 * 1024

// requestSize is one model request as the model receives it: the body's
// bytes and its o200k_base tokens (gpt-4o's encoding).
type requestSize struct{ bytes, tokens int }

func sizeOf(r testkit.ChatRequest) requestSize {
	return requestSize{len(r.Raw), tokens.Count("gpt-4o", string(r.Raw))}
}

// economyModel answers a plain message; it calls memory recall for a
// message that asks what it remembers, and more_tools (for the weather)
// for one about a trip, then says whether the weather tool is offered.
func economyModel(r testkit.ChatRequest) testkit.Reply {
	last := r.Messages[len(r.Messages)-1]
	switch {
	case last.Role == "user" && strings.Contains(last.Content, "remember"):
		return testkit.ToolReply(testkit.ToolCall{Name: "memory", Arguments: `{"action":"recall","query":"favourite things"}`})
	case last.Role == "user" && strings.Contains(last.Content, "trip"):
		return testkit.ToolReply(testkit.ToolCall{Name: "more_tools", Arguments: `{"query":"look up the weather of a city"}`})
	case last.Role == "tool" && r.HasTool("desk__weather_lookup"):
		return testkit.TextReply("Weather tool offered.")
	case last.Role == "tool":
		return testkit.TextReply("Recalled.")
	}
	return testkit.TextReply("Plain.")
}

// TestPromptEconomy measures what a turn sends the model (issue 36): a
// plain message, a turn with one tool call (both of its requests), and a
// plain message of a user with 50 skills and 2 MCP servers; it keeps the
// plain message under plainBudgetBytes, and a skill the user names
// reachable among the 50.
func TestPromptEconomy(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(economyModel)
	e.start()
	e.tg.PushText(2002, 2002, "hello, how are you today?", time.Now())
	waitReply(t, e.tg, 2002, 1, "Plain.")
	plain := sizeOf(e.llm.Requests()[0])
	e.tg.PushText(2002, 2002, "what do you remember about my favourite things?", time.Now())
	waitReply(t, e.tg, 2002, 2, "Recalled.")
	reqs := e.llm.Requests()
	tool1, tool2 := sizeOf(reqs[1]), sizeOf(reqs[2])

	many, named := manyToolsTurn(t)
	t.Logf("plain turn: %d bytes, %d tokens", plain.bytes, plain.tokens)
	t.Logf("tool turn: %d + %d bytes, %d + %d tokens", tool1.bytes, tool2.bytes, tool1.tokens, tool2.tokens)
	t.Logf("50 skills + 2 MCP servers, plain turn: %d bytes, %d tokens", many.bytes, many.tokens)
	if plain.bytes > plainBudgetBytes {
		t.Errorf("a plain message sends %d bytes, budget %d", plain.bytes, plainBudgetBytes)
	}
	if !named.HasTool("skill__skill_37") {
		t.Errorf("the skill the user named is not offered: %v", named.ToolNames())
	}
}

// manyToolsTurn sends a plain message, then one that names a skill, for a
// user with 50 skills and two MCP servers, and returns the first's size
// and the second request.
func manyToolsTurn(t *testing.T) (requestSize, testkit.ChatRequest) {
	t.Helper()
	e := newEnv(t)
	_, url1 := notesServer(t, e)
	srv2, url2 := notesServer(t, e)
	srv2.AddLure("weather_lookup", "Looks up the weather of a city.")
	pol := fmt.Sprintf(`access:
  operators: [%d]
  allowed_users: [2002]
mcp:
  servers:
    notes:
      url: %s
      token_secret: NOTES
      tools: ["*"]
    desk:
      url: %s
      token_secret: NOTES
      tools: ["*"]
`, operatorID, url1, url2)
	if err := os.WriteFile(e.vars["KAIROS_POLICY"], []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	seedSkills(t, e, 50)
	e.llm.SetHandler(economyModel)
	e.start()
	waitFor(t, "both MCP servers to connect", func() bool { return strings.Count(e.logs.String(), "mcp server connected") >= 2 })
	e.tg.PushText(2002, 2002, "hello, how are you today?", time.Now())
	waitReply(t, e.tg, 2002, 1, "Plain.")
	first := e.llm.Requests()[0]
	if !strings.Contains(first.SystemPrompt(), "50 skills and 13 MCP tools") {
		t.Errorf("the prompt does not say what more_tools reaches:\n%s", first.SystemPrompt())
	}
	e.tg.PushText(2002, 2002, "please run skill_37 on my notes", time.Now())
	waitReply(t, e.tg, 2002, 2, "Plain.")
	named := e.llm.Requests()[1]
	// A tool of the second server the message does not bring up, reached
	// by a query.
	e.tg.PushText(2002, 2002, "so, my trip?", time.Now())
	waitReply(t, e.tg, 2002, 3, "Weather tool offered.")
	if reqs := e.llm.Requests(); reqs[2].HasTool("desk__weather_lookup") {
		t.Errorf("the trip message was offered the weather tool before more_tools: %v", reqs[2].ToolNames())
	}
	return sizeOf(first), named
}

// seedSkills stores n enabled skills of the test user, each with a
// description of its own.
func seedSkills(t *testing.T, e *env, n int) {
	t.Helper()
	skills := store.NewSkillStore(e.openStore(t))
	owner := kairos.UserKey(kairos.ChannelTelegram, 2002)
	topics := []string{"invoices", "recipes", "running pace", "plant watering", "currency rates", "book notes", "flight times",
		"grocery lists", "weather alerts", "meeting minutes"}
	for i := range n {
		sk := &kairos.Skill{Name: fmt.Sprintf("skill_%d", i), Owner: owner, Scope: kairos.SkillScopeUser, Enabled: true}
		v := &kairos.SkillVersion{Version: 1, Description: fmt.Sprintf("Summarises the user's %s (variant %d)", topics[i%len(topics)], i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
			Code:        "async function run(input) { return {ok: true}; }", CreatedBy: owner, ApprovedBy: owner}
		if err := skills.CreateSkill(context.Background(), sk, v); err != nil {
			t.Fatal(err)
		}
	}
}
