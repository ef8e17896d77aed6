package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// promptedModel answers as a small local model without native tools: its
// calls are text, in the malformed ways such models write them.
func promptedModel(t *testing.T) func(testkit.ChatRequest) testkit.Reply {
	return func(r testkit.ChatRequest) testkit.Reply {
		if len(r.Tools) > 0 {
			return testkit.Reply{Status: 400, ErrorMessage: "registry.ollama.ai/library/qwen2.5:3b does not support tools", ErrorType: "api_error"}
		}
		if !strings.Contains(r.SystemPrompt(), "<tool_call>") {
			t.Errorf("a turn without the prompted tool description:\n%s", r.SystemPrompt())
		}
		last := r.Messages[len(r.Messages)-1]
		switch {
		case strings.Contains(last.Content, "<tool_response>"):
			return testkit.TextReply("Tool said: " + last.Content)
		case strings.Contains(last.Content, "remember"):
			// Single quotes and a trailing comma, in Hermes tags.
			return testkit.TextReply("<tool_call>\n{'name': 'memory', 'arguments': {'action': 'store', 'store': 'user_memory', 'category': 'fact', 'content': 'Lives in Lisbon',}}\n</tool_call>")
		case strings.Contains(last.Content, "weather"):
			// A code fence.
			return testkit.TextReply("Let me search.\n```json\n{\"name\": \"search\", \"arguments\": {\"query\": \"weather Lisbon\"}}\n```")
		case strings.Contains(last.Content, "sum"):
			return testkit.TextReply(`{"name": "code", "arguments": {"action": "execute", "code": "let s = 0; for (let i = 1; i <= 10; i++) s += i; output({sum: s});"}}`)
		case strings.Contains(last.Content, "remind me"):
			return testkit.TextReply("Sure. <tool_call>{\"name\": \"schedule\", \"arguments\": {\"action\": \"create\", \"when\": \"tomorrow at 9am\", \"text\": \"call the dentist\"}}</tool_call>")
		}
		return testkit.TextReply("ok")
	}
}

// TestPromptedToolCallingThroughMain: the acceptance flows (memory,
// search, code, schedule with its approval) with a model that has no
// native tools, once because the policy says so and once found out from
// the server's refusal.
func TestPromptedToolCallingThroughMain(t *testing.T) {
	parallel(t)
	for _, how := range []string{"policy", "refusal"} {
		t.Run(how, func(t *testing.T) {
			searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				json.NewEncoder(w).Encode(map[string]any{"results": []map[string]any{
					{"title": "Lisbon weather", "url": "https://weather.example/lisbon", "content": "Sunny, 21 degrees"}}})
			}))
			defer searx.Close()
			e := newEnv(t)
			e.vars["KAIROS_SEARCH_URL"] = searx.URL
			pol := "access:\n  allowed_users: [2002]\n"
			if how == "policy" {
				pol += "models:\n  test-model: {tool_calling: prompted}\n"
			}
			os.WriteFile(e.vars["KAIROS_POLICY"], []byte(pol), 0o600)
			e.llm.SetHandler(promptedModel(t))
			e.start()
			const user = 2002
			steps := []struct{ say, want string }{
				{"remember that I live in Lisbon", `"success":true`},
				{"what's the weather there?", "Sunny, 21 degrees"},
				{"compute the sum of 1..10 with code", `55`},
			}
			for i, s := range steps {
				e.tg.PushText(user, user, s.say, time.Now())
				waitReply(t, e.tg, user, i+1, s.want)
			}
			// The zone is stored before the command's confirmation goes out,
			// and the chat's updates run in order: wait for the confirmation
			// itself (the zone question also names Europe/Lisbon).
			e.tg.PushText(user, user, "/clock tz Europe/Lisbon", time.Now())
			waitSent(t, e.tg, user, "set to Europe/Lisbon")
			e.tg.PushText(user, user, "please remind me to call the dentist tomorrow at 9", time.Now())
			waitSent(t, e.tg, user, "Approval needed")
			if _, err := e.tg.PressButton(user, user, "Approve"); err != nil {
				t.Fatal(err)
			}
			waitSent(t, e.tg, user, `"kind":"reminder"`)
			out := e.runCLI(t, "schedule", "list", "--user", fmt.Sprint(user))
			if !strings.Contains(out, "call the dentist") {
				t.Fatalf("schedule list: %s", out)
			}
			for _, s := range e.tg.SentTo(user) {
				if strings.Contains(s.LastText(), "<tool_call>") || strings.Contains(s.LastText(), `"arguments"`) {
					t.Errorf("a call reached the user: %q", s.LastText())
				}
			}
			refused := 0
			for _, r := range e.llm.Requests() {
				if r.Status == 400 {
					refused++
				}
			}
			if want := map[string]int{"policy": 0, "refusal": 1}[how]; refused != want {
				t.Errorf("%d refused requests, want %d (the switch is remembered)", refused, want)
			}
		})
	}
}

// TestModelsSectionHotReload: an edit of models.<name>.tool_calling
// applies to the next turn without a restart.
func TestModelsSectionHotReload(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply { return testkit.TextReply("hi " + r.LastUserMessage()) })
	e.start()
	const user = 2002
	e.tg.PushText(user, user, "first", time.Now())
	waitReply(t, e.tg, user, 1, "hi first")
	if r := e.llm.LastRequest(); len(r.Tools) == 0 {
		t.Fatal("native mode sent no tools")
	}
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte(fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002]\nmodels:\n  test-model: {tool_calling: prompted}\n", operatorID)), 0o600)
	deadline := testkit.GiveUpAt(t)
	for n := 2; ; n++ {
		say := fmt.Sprintf("message %d", n)
		e.tg.PushText(user, user, say, time.Now())
		waitReply(t, e.tg, user, n, "hi "+say)
		if r := e.llm.LastRequest(); len(r.Tools) == 0 && strings.Contains(r.SystemPrompt(), "<tool_call>") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the models section edit never applied")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
