package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kairos-agent/kairos"
)

func knownTools(name string) bool {
	switch name {
	case "search", "code", "memory", "schedule":
		return true
	}
	return false
}

type call struct{ Name, Args string }

func TestParsePromptedCalls(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		visible string
		calls   []call
	}{
		{"hermes tags", "Let me look.\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"go 1.24\"}}\n</tool_call>",
			"Let me look.", []call{{"search", `{"query":"go 1.24"}`}}},
		{"two tagged calls", "<tool_call>{\"name\":\"search\",\"arguments\":{\"query\":\"a\"}}</tool_call>\n<tool_call>{\"name\":\"memory\",\"arguments\":{\"action\":\"list\"}}</tool_call>",
			"", []call{{"search", `{"query":"a"}`}, {"memory", `{"action":"list"}`}}},
		{"unclosed tag", "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}",
			"", []call{{"search", `{"query":"x"}`}}},
		{"trailing commas", "<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"x\", \"max_results\": 3,},}</tool_call>",
			"", []call{{"search", `{"max_results":3,"query":"x"}`}}},
		{"single quotes", "<tool_call>{'name': 'memory', 'arguments': {'action': 'store', 'content': 'likes \"tea\"', 'tags': ['a']}}</tool_call>",
			"", []call{{"memory", `{"action":"store","content":"likes \"tea\"","tags":["a"]}`}}},
		{"apostrophe kept", "<tool_call>{\"name\": \"memory\", \"arguments\": {\"action\": \"store\", \"content\": \"user's cat is Tom\"}}</tool_call>",
			"", []call{{"memory", `{"action":"store","content":"user's cat is Tom"}`}}},
		{"python literals", "<tool_call>{'name': 'code', 'arguments': {'action': 'execute', 'code': 'output(1)', 'x': True, 'y': None}}</tool_call>",
			"", []call{{"code", `{"action":"execute","code":"output(1)","x":true,"y":null}`}}},
		{"json fence", "Searching now.\n```json\n{\"name\": \"search\", \"arguments\": {\"query\": \"weather\"}}\n```",
			"Searching now.", []call{{"search", `{"query":"weather"}`}}},
		{"several calls in a list", "```\n[{\"name\": \"search\", \"arguments\": {\"query\": \"a\"}}, {\"name\": \"search\", \"arguments\": {\"query\": \"b\"}}]\n```",
			"", []call{{"search", `{"query":"a"}`}, {"search", `{"query":"b"}`}}},
		{"one object per line", "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"a\"}}\n{\"name\": \"search\", \"arguments\": {\"query\": \"b\"}}\n</tool_call>",
			"", []call{{"search", `{"query":"a"}`}, {"search", `{"query":"b"}`}}},
		{"bare json", "{\"name\": \"schedule\", \"arguments\": {\"action\": \"list\"}}",
			"", []call{{"schedule", `{"action":"list"}`}}},
		{"embedded in prose", "Sure, I'll check: {\"name\": \"search\", \"parameters\": {\"query\": \"news\"}} and report back.",
			"Sure, I'll check:  and report back.", []call{{"search", `{"query":"news"}`}}},
		{"arguments as a string", "<tool_call>{\"name\": \"search\", \"arguments\": \"{\\\"query\\\": \\\"x\\\"}\"}</tool_call>",
			"", []call{{"search", `{"query":"x"}`}}},
		{"openai shape", "```json\n{\"tool_calls\": [{\"function\": {\"name\": \"search\", \"arguments\": \"{\\\"query\\\":\\\"q\\\"}\"}}]}\n```",
			"", []call{{"search", `{"query":"q"}`}}},
		{"mistral", "[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {\"query\": \"a\"}}, {\"name\": \"memory\", \"arguments\": {\"action\": \"list\"}}]",
			"", []call{{"search", `{"query":"a"}`}, {"memory", `{"action":"list"}`}}},
		{"llama python tag", "<|python_tag|>{\"name\": \"search\", \"parameters\": {\"query\": \"b\"}}<|eom_id|>",
			"", []call{{"search", `{"query":"b"}`}}},
		{"plain answer", "The capital of France is Paris.", "The capital of France is Paris.", nil},
		{"json the user asked for", "Here it is:\n```json\n{\"name\": \"Alice\", \"age\": 30}\n```",
			"Here it is:\n```json\n{\"name\": \"Alice\", \"age\": 30}\n```", nil},
		{"unknown tool outside tags", "{\"name\": \"delete_everything\", \"arguments\": {}}", "{\"name\": \"delete_everything\", \"arguments\": {}}", nil},
		{"unknown tool in tags is still a call", "<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>", "", []call{{"nope", `{}`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			visible, calls := parsePromptedCalls(tc.text, knownTools)
			var got []call
			for _, c := range calls {
				if !strings.HasPrefix(c.ID, "call_") || len(c.ID) < 20 {
					t.Errorf("id %q", c.ID)
				}
				if !json.Valid([]byte(c.Arguments)) {
					t.Errorf("arguments not JSON: %s", c.Arguments)
				}
				got = append(got, call{c.Name, normJSON(t, c.Arguments)})
			}
			want := make([]call, 0, len(tc.calls))
			for _, c := range tc.calls {
				want = append(want, call{c.Name, normJSON(t, c.Args)})
			}
			if len(got) == 0 {
				got = []call{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if visible != tc.visible {
				t.Errorf("visible = %q, want %q", visible, tc.visible)
			}
		})
	}
}

func normJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func FuzzParsePromptedCalls(f *testing.F) {
	f.Add("<tool_call>{'name': 'search', 'arguments': {'query': 'x',}}</tool_call>")
	f.Add("```json\n[{\"name\":\"code\",\"arguments\":{}}]\n```")
	f.Add("text {\"name\": \"memory\", \"arguments\": {\"a\": [1,2,]}} more")
	f.Fuzz(func(t *testing.T, s string) {
		_, calls := parsePromptedCalls(s, knownTools)
		for _, c := range calls {
			if !json.Valid([]byte(c.Arguments)) {
				t.Fatalf("arguments %q are not JSON", c.Arguments)
			}
		}
	})
}

func TestPromptedRequest(t *testing.T) {
	specs := []kairos.ToolSpec{{Name: "search", Description: "Search the web.", Parameters: json.RawMessage(`{"type": "object",
		"properties": {"query": {"type": "string"}}}`)}}
	req := kairos.ChatRequest{Model: "m", Tools: specs, Messages: []kairos.ChatMessage{
		{Role: "system", Content: "You are Kairos."},
		{Role: "user", Content: "news?"},
		{Role: "assistant", Content: "Looking.", ToolCalls: []kairos.ToolCall{{ID: "c1", Name: "search", Arguments: `{"query":"news"}`}, {ID: "c2", Name: "search", Arguments: `{"query":"more"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: `{"results":[]}`},
		{Role: "tool", ToolCallID: "c2", Content: `{"results":[1]}`},
		{Role: "system", Content: "The tool budget of this turn is used up."},
	}}
	got := promptedRequest(req)
	if len(got.Tools) != 0 {
		t.Error("tools still sent")
	}
	roles := []string{}
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
		if len(m.ToolCalls) > 0 {
			t.Error("tool_calls still sent")
		}
	}
	if diff := cmp.Diff([]string{"system", "user", "assistant", "user", "user"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	sys := got.Messages[0].Content
	if !strings.HasPrefix(sys, "You are Kairos.") || !strings.Contains(sys, `- search: Search the web.`) || !strings.Contains(sys, `{"type":"object","properties":{"query":{"type":"string"}}}`) {
		t.Errorf("system prompt:\n%s", sys)
	}
	// The assistant's earlier calls read back as calls.
	_, calls := parsePromptedCalls(got.Messages[2].Content, knownTools)
	if len(calls) != 2 || calls[1].Arguments != `{"query":"more"}` {
		t.Errorf("assistant history %q", got.Messages[2].Content)
	}
	if res := got.Messages[3].Content; strings.Count(res, "<tool_response>") != 2 || !strings.Contains(res, `"name":"search"`) {
		t.Errorf("tool results %q", res)
	}
	if !strings.HasPrefix(got.Messages[4].Content, "[system note] ") {
		t.Errorf("late system message %q", got.Messages[4].Content)
	}
	if req.Messages[2].ToolCalls == nil || len(req.Tools) != 1 {
		t.Error("the native request was changed")
	}
}

func TestPromptedVisible(t *testing.T) {
	for in, want := range map[string]string{
		"Let me check <tool_call>{\"na": "Let me check",
		"Let me check <tool_":           "Let me check",
		"{\"name\": \"sea":              "",
		"Sure. ```json\n{":              "Sure.",
		"Plain answer so far":           "Plain answer so far",
		"[TOOL_CALLS][":                 "",
		"<|python_tag|>{":               "",
	} {
		if got := promptedVisible(in); got != want {
			t.Errorf("promptedVisible(%q) = %q, want %q", in, got, want)
		}
	}
}
