package openai

import (
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// Each quirk is answered by the fake in the shape the server in question
// documents, and read through the real go-openai client, streamed and not.

func bothWays(t *testing.T, run func(t *testing.T, onDelta func(string))) {
	t.Run("plain", func(t *testing.T) { run(t, nil) })
	t.Run("stream", func(t *testing.T) { run(t, func(string) {}) })
}

func TestQuirkArgumentsAsObject(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	f.SetQuirks("", testkit.Quirks{ArgumentsAsObject: true})
	c, _ := newClient(t, f)
	bothWays(t, func(t *testing.T, onDelta func(string)) {
		f.Enqueue(testkit.ToolReply(testkit.ToolCall{Name: "get_weather", Arguments: `{"city":"Oslo","days":2}`}))
		req := userReq("local", "weather?")
		req.Tools = []kairos.ToolSpec{weather}
		resp, err := c.Chat(testkit.Deadline(t), req, onDelta)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"city":"Oslo","days":2}` {
			t.Errorf("calls = %+v", resp.Message.ToolCalls)
		}
	})
}

func TestQuirkToolCallsWithoutIDs(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	f.SetQuirks("", testkit.Quirks{NoToolCallIDs: true})
	c, _ := newClient(t, f)
	bothWays(t, func(t *testing.T, onDelta func(string)) {
		f.Enqueue(testkit.ToolReply(testkit.ToolCall{Name: "get_weather", Arguments: `{"city":"Oslo"}`},
			testkit.ToolCall{Name: "get_weather", Arguments: `{"city":"Rome"}`}))
		req := userReq("local", "weather?")
		req.Tools = []kairos.ToolSpec{weather}
		resp, err := c.Chat(testkit.Deadline(t), req, onDelta)
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.Message.ToolCalls
		if len(calls) != 2 || calls[0].ID == "" || calls[0].ID == calls[1].ID || calls[1].Arguments != `{"city":"Rome"}` {
			t.Fatalf("calls = %+v", calls)
		}
		// The ids given are accepted back in the history.
		req.Messages = append(req.Messages, resp.Message,
			kairos.ChatMessage{Role: "tool", ToolCallID: calls[0].ID, Content: "{}"},
			kairos.ChatMessage{Role: "tool", ToolCallID: calls[1].ID, Content: "{}"})
		// A later answer's calls get other ids: the journal and the
		// approvals are keyed by them (call_0 twice overwrote a row).
		f.Enqueue(testkit.ToolReply(testkit.ToolCall{Name: "get_weather", Arguments: `{"city":"Oslo"}`}))
		again, err := c.Chat(testkit.Deadline(t), req, onDelta)
		if err != nil {
			t.Fatal(err)
		}
		if id := again.Message.ToolCalls[0].ID; id == calls[0].ID || id == calls[1].ID {
			t.Errorf("id %q used again", id)
		}
	})
}

func TestQuirkThinking(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	c, _ := newClient(t, f)
	tests := []struct {
		name     string
		reply    testkit.Reply
		thinking string
	}{
		// Qwen3, DeepSeek-R1 distills on llama.cpp and Ollama: thoughts in the content.
		{"think tags", testkit.Reply{Text: "<think>\nThe user greets me. I should greet back.\n</think>\n\nHello there!"}, kairos.ThinkingTagged},
		// A chat template that opens <think> in the prompt: only the closing tag arrives.
		{"closing tag only", testkit.Reply{Text: "The user greets me. I should greet back.</think>Hello there!"}, kairos.ThinkingTemplate},
		// DeepSeek's API and vLLM's reasoning parsers: reasoning_content beside content.
		{"reasoning_content", testkit.Reply{Reasoning: "The user greets me. I should greet back.", Text: "Hello there!"}, kairos.ThinkingTagged},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bothWays(t, func(t *testing.T, onDelta func(string)) {
				var shown []string
				if onDelta != nil {
					onDelta = func(s string) { shown = append(shown, s) }
				}
				rep := tc.reply
				rep.Usage = &testkit.Usage{PromptTokens: 10, CompletionTokens: 30}
				f.Enqueue(rep)
				req := userReq("reasoner", "hi")
				req.Thinking = tc.thinking
				resp, err := c.Chat(testkit.Deadline(t), req, onDelta)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Message.Content != "Hello there!" {
					t.Errorf("content = %q", resp.Message.Content)
				}
				for _, s := range shown {
					if strings.Contains(s, "greet") || strings.Contains(s, "think>") {
						t.Errorf("thinking shown while streaming: %q", s)
					}
				}
				if onDelta != nil && (len(shown) == 0 || shown[len(shown)-1] != "Hello there!") {
					t.Errorf("streamed %q", shown)
				}
				if resp.Usage.CompletionTokens != 30 || resp.Usage.ReasoningTokens == 0 {
					t.Errorf("usage = %+v: thinking is paid for and must be counted", resp.Usage)
				}
			})
		})
	}
}

func TestSplitThink(t *testing.T) {
	tests := []struct{ in, vis, th string }{
		{"plain", "plain", ""},
		{"<think>a</think>b", "b", "a"},
		{"x <think>a</think> y <think>c</think>z", "x  y z", "ac"},
		{"<think>still thinking", "", "still thinking"},
		{"a</think>b", "b", "a"},
		{"<thinking>a</thinking>b", "b", "a"},
	}
	for _, tc := range tests {
		v, th := splitThink(tc.in)
		if v != tc.vis || th != tc.th {
			t.Errorf("splitThink(%q) = %q, %q; want %q, %q", tc.in, v, th, tc.vis, tc.th)
		}
	}
	if got := streamVisible("Hi <thi", kairos.ThinkingTagged); got != "Hi" {
		t.Errorf("streamVisible shows a partial tag: %q", got)
	}
}

func TestQuirkStreamWithoutUsage(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	f.SetQuirks("", testkit.Quirks{NoUsage: true})
	c, _ := newClient(t, f)
	bothWays(t, func(t *testing.T, onDelta func(string)) {
		f.Enqueue(testkit.TextReply("one two three four five six seven eight"))
		resp, err := c.Chat(testkit.Deadline(t), userReq("local", "count to eight please"), onDelta)
		if err != nil {
			t.Fatal(err)
		}
		if onDelta != nil && !f.LastRequest().IncludeUsage {
			t.Error("stream_options.include_usage was not asked for")
		}
		u := resp.Usage
		if !u.Estimated || u.PromptTokens < 5 || u.CompletionTokens < 5 {
			t.Errorf("usage = %+v, want an estimate", u)
		}
	})
}

func TestQuirkMaxCompletionTokens(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	f.SetQuirks("reasoner-x", testkit.Quirks{RejectParams: []string{"max_tokens"}})
	c, _ := newClient(t, f)
	req := userReq("reasoner-x", "hi")
	req.MaxTokens = 500
	for i := 0; i < 2; i++ {
		if _, err := c.Chat(testkit.Deadline(t), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.RequestsFor("reasoner-x")
	// First call: refused, retried with max_completion_tokens; second
	// call: sent right at once.
	if len(reqs) != 3 || reqs[0].Status != 400 || reqs[1].MaxCompletionTokens != 500 || reqs[1].MaxTokens != 0 || reqs[2].Status != 200 || reqs[2].MaxTokens != 0 {
		for _, r := range reqs {
			t.Logf("status %d max_tokens %d max_completion_tokens %d", r.Status, r.MaxTokens, r.MaxCompletionTokens)
		}
		t.Fatal("max_tokens was not replaced once and for all")
	}
}

func TestQuirkUnsupportedStreamOptions(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	f.SetQuirks("", testkit.Quirks{RejectParams: []string{"stream_options"}})
	c, _ := newClient(t, f)
	for i := 0; i < 2; i++ {
		resp, err := c.Chat(testkit.Deadline(t), userReq("old-server", "a b c"), func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Content != "echo: a b c" {
			t.Errorf("content %q", resp.Message.Content)
		}
	}
	reqs := f.Requests()
	if len(reqs) != 3 || reqs[0].Status != 400 || reqs[1].IncludeUsage || reqs[2].IncludeUsage || reqs[2].Status != 200 {
		t.Errorf("%d requests; stream_options was not dropped once and for all", len(reqs))
	}
	// A refused parameter the client does not send is not retried.
	f.SetQuirks("", testkit.Quirks{})
	f.Enqueue(testkit.Reply{Status: 400, ErrorMessage: "Unsupported parameter: 'temperature' is not supported with this model.", ErrorCode: "unsupported_parameter"})
	n := len(f.Requests())
	if _, err := c.Chat(testkit.Deadline(t), userReq("old-server", "x"), nil); err == nil {
		t.Fatal("no error")
	}
	if got := len(f.Requests()) - n; got != 1 {
		t.Errorf("%d requests for an unknown refused parameter, want 1", got)
	}
}

func TestQuirkNoTools(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *testkit.Refusal
	}{{"ollama", testkit.OllamaNoTools}, {"llama.cpp", testkit.LlamaCppNoJinja}, {"vllm", testkit.VLLMNoToolParser}} {
		t.Run(tc.name, func(t *testing.T) {
			f := testkit.NewFakeOpenAI(t)
			f.SetQuirks("", testkit.Quirks{RejectTools: tc.r})
			c, _ := newClient(t, f)
			req := userReq("small", "weather?")
			req.Tools = []kairos.ToolSpec{weather}
			_, err := c.Chat(testkit.Deadline(t), req, nil)
			pe := providerErr(t, err)
			if pe.Kind != kairos.ProviderNoTools || pe.Retryable {
				t.Errorf("error %+v, want kind no_tools, not retryable", pe)
			}
			req.Tools = nil
			if _, err := c.Chat(testkit.Deadline(t), req, nil); err != nil {
				t.Errorf("without tools: %v", err)
			}
		})
	}
}

func TestQuirkContextLength(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mk     func(window, tokens int) testkit.Refusal
		window int
	}{{"openai", testkit.OpenAIContextError, 20}, {"llama.cpp", testkit.LlamaCppContextError, 20}} {
		t.Run(tc.name, func(t *testing.T) {
			f := testkit.NewFakeOpenAI(t)
			f.SetQuirks("", testkit.Quirks{ContextWindow: 20, ContextError: tc.mk})
			c, _ := newClient(t, f)
			_, err := c.Chat(testkit.Deadline(t), userReq("m", strings.Repeat("word ", 40)), nil)
			pe := providerErr(t, err)
			if pe.Kind != kairos.ProviderContextLength || pe.ContextWindow != tc.window || pe.Retryable {
				t.Errorf("error %+v", pe)
			}
		})
	}
}

func TestQuirkRateLimit(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	c, _ := newClient(t, f)
	// Groq and OpenAI send retry-after; many local proxies send none.
	f.Enqueue(testkit.Reply{Status: 429, ErrorMessage: "Rate limit reached for model `llama-3.3-70b-versatile` on tokens per minute (TPM). Please try again in 7.66s.",
		ErrorType: "tokens", ErrorCode: "rate_limit_exceeded", RetryAfter: 8e9})
	f.Enqueue(testkit.Reply{Status: 429})
	for _, want := range []float64{8, 0} {
		_, err := c.Chat(testkit.Deadline(t), userReq("m", "x"), nil)
		pe := providerErr(t, err)
		if pe.StatusCode != 429 || !pe.Retryable || pe.RetryAfter.Seconds() != want {
			t.Errorf("429: %+v, want retryable with Retry-After %vs", pe, want)
		}
	}
}

func TestQuirkErrorWith200(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	c, _ := newClient(t, f)
	tests := []struct {
		name      string
		body      string
		status    int
		retryable bool
	}{
		// OpenRouter: an upstream failure after the request was routed.
		{"openrouter upstream", `{"error":{"code":502,"message":"Provider returned error","metadata":{"provider_name":"Fireworks"}}}`, 502, true},
		{"code as text", `{"error":{"code":"429","message":"Rate limit exceeded: free-models-per-day"}}`, 429, true},
		{"string error", `{"error":"model is loading"}`, 502, true},
		{"bad request", `{"error":{"code":400,"message":"invalid model"}}`, 400, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bothWays(t, func(t *testing.T, onDelta func(string)) {
				f.Enqueue(testkit.Reply{Body: tc.body})
				_, err := c.Chat(testkit.Deadline(t), userReq("m", "x"), onDelta)
				pe := providerErr(t, err)
				if pe.StatusCode != tc.status || pe.Retryable != tc.retryable {
					t.Errorf("got %+v, want status %d retryable %v", pe, tc.status, tc.retryable)
				}
			})
		})
	}
}

// TestModelsListContextWindow reads the context window each server puts
// in GET /models, in its own field.
func TestModelsListContextWindow(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	f.SetModelFields("llama-3.3-70b-versatile", map[string]any{"context_window": 131072, "owned_by": "Meta"}) // Groq
	f.SetModelFields("openai/gpt-4o", map[string]any{"context_length": 128000})                               // OpenRouter
	f.SetModelFields("Qwen/Qwen2.5-7B-Instruct", map[string]any{"max_model_len": 32768})                      // vLLM
	f.SetModelFields("qwen2.5-3b.gguf", map[string]any{"meta": map[string]any{"n_ctx_train": 32768}})         // llama.cpp
	c, _ := newClient(t, f)
	models, err := c.Models(testkit.Deadline(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, m := range models {
		got[m.ID] = m.ContextWindow
	}
	want := map[string]int{"gpt-4o-mini": 0, "text-embedding-3-small": 0, "llama-3.3-70b-versatile": 131072,
		"openai/gpt-4o": 128000, "Qwen/Qwen2.5-7B-Instruct": 32768, "qwen2.5-3b.gguf": 32768}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: window %d, want %d", id, got[id], w)
		}
	}
	f.InjectError("models", 1, 401, "Incorrect API key provided")
	if _, err := c.Models(testkit.Deadline(t)); providerErr(t, err).StatusCode != 401 {
		t.Errorf("401 not reported: %v", err)
	}
}

// TestQuirkGoogleUnknownField: Google's error shape (an array holding the
// error, "Unknown name" for a field it does not take) is read as a refused
// parameter too.
func TestQuirkGoogleUnknownField(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	c, _ := newClient(t, f)
	f.Enqueue(testkit.Reply{Status: 400, Body: `[{"error": {"code": 400, "message": "Invalid JSON payload received. Unknown name \"stream_options\": Cannot find field.", "status": "INVALID_ARGUMENT"}}]`})
	if _, err := c.Chat(testkit.Deadline(t), userReq("gemini-2.0-flash", "hi"), func(string) {}); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 2 || !reqs[0].IncludeUsage || reqs[1].IncludeUsage || reqs[1].Status != 200 {
		t.Fatalf("%d requests; stream_options not dropped after Google's refusal", len(reqs))
	}
}
