package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"
)

func newOpenAIClient(f *FakeOpenAI, key string) *goopenai.Client {
	cfg := goopenai.DefaultConfig(key)
	cfg.BaseURL = f.URL()
	return goopenai.NewClientWithConfig(cfg)
}

var weatherTool = goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
	Name: "get_weather", Description: "Weather for a city",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}}

func TestFakeOpenAIChatCompletion(t *testing.T) {
	f := NewFakeOpenAI(t, WithAPIKey("sk-test-0123456789abcdef"))
	c := newOpenAIClient(f, "sk-test-0123456789abcdef")
	ctx := Deadline(t)

	f.Enqueue(TextReply("Hello there"))
	resp, err := c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{
		Model: "gpt-4o-mini",
		Messages: []goopenai.ChatCompletionMessage{
			{Role: "system", Content: "be brief"},
			{Role: "user", Content: "hi"},
		},
		Tools: []goopenai.Tool{weatherTool},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "Hello there" || resp.Choices[0].FinishReason != "stop" || resp.Usage.TotalTokens == 0 {
		t.Errorf("resp = %+v", resp)
	}
	req := f.LastRequest()
	if req.Model != "gpt-4o-mini" || req.SystemPrompt() != "be brief" || req.LastUserMessage() != "hi" || !req.HasTool("get_weather") || req.Stream || req.Status != 200 {
		t.Errorf("recorded = %+v", req)
	}

	// Default answer echoes.
	resp, err = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "m", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "ping"}}})
	if err != nil || resp.Choices[0].Message.Content != "echo: ping" {
		t.Errorf("echo = %+v, %v", resp, err)
	}

	// Parallel tool calls, then the tool results go back.
	f.Enqueue(ToolReply(ToolCall{Name: "get_weather", Arguments: `{"city":"Oslo"}`}, ToolCall{ID: "call_b", Name: "get_weather", Arguments: `{"city":"Rome"}`}))
	resp, err = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "weather?"}}, Tools: []goopenai.Tool{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if resp.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 2 || msg.ToolCalls[0].ID == "" || msg.ToolCalls[1].ID != "call_b" ||
		msg.ToolCalls[0].Function.Arguments != `{"city":"Oslo"}` {
		t.Fatalf("tool answer = %+v", resp.Choices[0])
	}
	history := []goopenai.ChatCompletionMessage{{Role: "user", Content: "weather?"}, msg}
	_, err = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: append(history,
		goopenai.ChatCompletionMessage{Role: "tool", ToolCallID: msg.ToolCalls[0].ID, Content: "sunny"})})
	var apiErr *goopenai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || !strings.Contains(apiErr.Message, "call_b") {
		t.Errorf("missing tool result: err = %v", err)
	}
	_, err = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: append(history,
		goopenai.ChatCompletionMessage{Role: "tool", ToolCallID: msg.ToolCalls[0].ID, Content: "sunny"},
		goopenai.ChatCompletionMessage{Role: "tool", ToolCallID: "call_b", Content: "rain"})})
	if err != nil {
		t.Fatalf("complete tool results: %v", err)
	}
	last := f.LastRequest()
	if tr := last.ToolResults(); len(tr) != 2 || tr[1].ToolCallID != "call_b" || tr[1].Content != "rain" || len(last.Messages[1].ToolCalls) != 2 {
		t.Errorf("recorded tool history = %+v", last.Messages)
	}
	_, err = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []goopenai.ChatCompletionMessage{
		{Role: "user", Content: "x"}, {Role: "tool", ToolCallID: "nope", Content: "y"}}})
	if !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "must be a response to a preceeding message with 'tool_calls'") {
		t.Errorf("orphan tool message: err = %v", err)
	}
	_, err = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "x"}},
		Tools: []goopenai.Tool{{Type: "function", Function: &goopenai.FunctionDefinition{Name: "bad name", Parameters: json.RawMessage(`{}`)}}}})
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
		t.Errorf("bad tool name: err = %v", err)
	}
}

func TestFakeOpenAIAuth(t *testing.T) {
	const key = "sk-live-SECRETSECRETSECRET-9876"
	f := NewFakeOpenAI(t, WithAPIKey(key))
	for _, k := range []string{"", "sk-wrong-key-000000"} {
		_, err := newOpenAIClient(f, k).CreateChatCompletion(Deadline(t), goopenai.ChatCompletionRequest{Model: "m", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
		var apiErr *goopenai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 {
			t.Errorf("key %q: err = %v", k, err)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("unauthorised requests recorded: %d", n)
	}
}

func TestFakeOpenAIStreaming(t *testing.T) {
	f := NewFakeOpenAI(t)
	c := newOpenAIClient(f, "")
	ctx := Deadline(t)

	base := goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "tell me"}}}

	t.Run("text with usage", func(t *testing.T) {
		f.Enqueue(TextReply("one two three four"))
		req := base
		req.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
		r, err := collectStream(ctx, c, req)
		if err != nil || r.text != "one two three four" || r.finish != "stop" || r.usage == nil || r.usage.CompletionTokens != 4 || r.chunks < 6 {
			t.Errorf("text=%q finish=%q usage=%+v chunks=%d err=%v", r.text, r.finish, r.usage, r.chunks, err)
		}
		if r := f.LastRequest(); !r.Stream || !r.IncludeUsage {
			t.Errorf("recorded = %+v", r)
		}
	})
	t.Run("no usage without include_usage", func(t *testing.T) {
		f.Enqueue(TextReply("x"))
		r, err := collectStream(ctx, c, base)
		if err != nil || r.usage != nil {
			t.Errorf("usage=%+v err=%v", r.usage, err)
		}
	})
	for _, interleave := range []bool{false, true} {
		name := "parallel tool calls"
		if interleave {
			name += " interleaved"
		}
		t.Run(name, func(t *testing.T) {
			args := []string{`{"city":"Reykjavík","units":"metric"}`, `{"city":"São Paulo","days":3}`, `{}`}
			f.Enqueue(Reply{Text: "Checking.", InterleaveToolCalls: interleave, ToolCalls: []ToolCall{
				{Name: "get_weather", Arguments: args[0]}, {Name: "get_weather", Arguments: args[1]}, {Name: "noop", Arguments: args[2]},
			}})
			r, err := collectStream(ctx, c, base)
			calls := r.calls
			if err != nil || r.text != "Checking." || r.finish != "tool_calls" || len(calls) != 3 {
				t.Fatalf("text=%q finish=%q calls=%d err=%v", r.text, r.finish, len(calls), err)
			}
			for i, a := range args {
				if calls[i].Function.Arguments != a || calls[i].ID == "" {
					t.Errorf("call %d = %+v, want args %s", i, calls[i], a)
				}
			}
			if calls[2].Function.Name != "noop" {
				t.Errorf("names = %+v", calls)
			}
		})
	}
	t.Run("error mid-stream", func(t *testing.T) {
		f.Enqueue(Reply{Text: "a b c d e f", StreamErrorAfter: 3})
		r, err := collectStream(ctx, c, base)
		if err == nil || r.text != "a b " {
			t.Errorf("text=%q err=%v", r.text, err)
		}
		var apiErr *goopenai.APIError
		if !errors.As(err, &apiErr) || apiErr.Type != "server_error" {
			t.Errorf("err = %#v", err)
		}
	})
	t.Run("cut connection", func(t *testing.T) {
		f.Enqueue(Reply{Text: "a b c d e f", CutAfter: 3})
		r, err := collectStream(ctx, c, base)
		if err == nil && r.finish != "" {
			t.Errorf("cut stream looked complete: finish=%q", r.finish)
		}
	})
	t.Run("status error before stream", func(t *testing.T) {
		f.Enqueue(Reply{Status: 503, RetryAfter: 1500 * time.Millisecond})
		_, err := c.CreateChatCompletionStream(ctx, base)
		var apiErr *goopenai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 {
			t.Errorf("err = %v", err)
		}
	})
}

// streamed is what a client put together from a streamed completion.
type streamed struct {
	text   string
	calls  map[int]*goopenai.ToolCall
	usage  *goopenai.Usage
	finish string
	chunks int
}

// collectStream reads a streamed completion to its end (or error),
// assembling the text and the tool calls from their fragments.
func collectStream(ctx context.Context, c *goopenai.Client, req goopenai.ChatCompletionRequest) (streamed, error) {
	r := streamed{calls: map[int]*goopenai.ToolCall{}}
	s, err := c.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return streamed{}, err
	}
	defer s.Close()
	for {
		ch, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return r, nil
		}
		if err != nil {
			return r, err
		}
		r.chunks++
		if ch.Usage != nil {
			r.usage = ch.Usage
		}
		if len(ch.Choices) == 0 {
			continue
		}
		d := ch.Choices[0].Delta
		r.text += d.Content
		for _, tc := range d.ToolCalls {
			cur := r.calls[*tc.Index]
			if cur == nil {
				cur = &goopenai.ToolCall{}
				r.calls[*tc.Index] = cur
			}
			if tc.ID != "" {
				cur.ID = tc.ID
			}
			cur.Function.Name += tc.Function.Name
			cur.Function.Arguments += tc.Function.Arguments
		}
		if ch.Choices[0].FinishReason != "" {
			r.finish = string(ch.Choices[0].FinishReason)
		}
	}
}

func TestFakeOpenAIPerModelScripting(t *testing.T) {
	f := NewFakeOpenAI(t, WithModels("model-a", "model-b", "emb"))
	c := newOpenAIClient(f, "")
	ctx := Deadline(t)
	f.FailModel("model-a", 500)
	f.EnqueueFor("model-a", Reply{Status: 429, RetryAfter: 2 * time.Second, ErrorCode: "rate_limit_exceeded"})
	f.SetHandler(func(req ChatRequest) Reply {
		if strings.Contains(req.LastUserMessage(), "weather") {
			return ToolReply(ToolCall{Name: "get_weather", Arguments: `{"city":"Oslo"}`})
		}
		return TextReply("fine")
	})
	ask := func(model, text string) (goopenai.ChatCompletionResponse, error) {
		return c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: model, Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: text}}})
	}

	_, err := ask("model-a", "hi")
	var apiErr *goopenai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Code != "rate_limit_exceeded" {
		t.Errorf("first a: %v", err)
	}
	_, err = ask("model-a", "hi")
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 {
		t.Errorf("second a: %v", err)
	}
	resp, err := ask("model-b", "what's the weather")
	if err != nil || len(resp.Choices[0].Message.ToolCalls) != 1 {
		t.Errorf("b: %+v %v", resp, err)
	}
	resp, err = ask("model-b", "hello")
	if err != nil || resp.Choices[0].Message.Content != "fine" {
		t.Errorf("b: %+v %v", resp, err)
	}
	_, err = ask("model-z", "hello")
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 {
		t.Errorf("unknown model: %v", err)
	}
	a := f.RequestsFor("model-a")
	if len(a) != 2 || a[0].Status != 429 || a[1].Status != 500 {
		t.Errorf("model-a requests = %+v", a)
	}

	// Retry-After reaches the client as headers.
	f.EnqueueFor("model-b", Reply{Status: 429, RetryAfter: 1500 * time.Millisecond})
	body := `{"model":"model-b","messages":[{"role":"user","content":"x"}]}`
	r, err := http.Post(f.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 429 || r.Header.Get("Retry-After") != "2" || r.Header.Get("Retry-After-Ms") != "1500" {
		t.Errorf("429 headers = %d %v", r.StatusCode, r.Header)
	}

	models, err := c.ListModels(ctx)
	if err != nil || len(models.Models) != 3 || models.Models[0].ID != "model-a" {
		t.Errorf("models = %+v %v", models, err)
	}
	f.InjectError("models", 1, 503, "")
	if _, err := c.ListModels(ctx); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 {
		t.Errorf("injected models error: %v", err)
	}
}

func TestFakeOpenAIDelayHonoursCancel(t *testing.T) {
	f := NewFakeOpenAI(t)
	c := newOpenAIClient(f, "")
	f.Enqueue(Reply{Text: "late", Delay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "m", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	case <-Deadline(t).Done():
		t.Fatal("delayed request ignored cancellation")
	}
}

func TestFakeOpenAIEmbeddings(t *testing.T) {
	f := NewFakeOpenAI(t, WithEmbeddingDims(256))
	c := newOpenAIClient(f, "")
	ctx := Deadline(t)
	docs := []string{"the stock market fell sharply today", "food for my cat and kitten", "cat videos are funny"}
	resp, err := c.CreateEmbeddings(ctx, goopenai.EmbeddingRequestStrings{Input: append([]string{"cat food"}, docs...), Model: "text-embedding-3-small"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Data) != 4 || len(resp.Data[0].Embedding) != 256 || resp.Usage.PromptTokens == 0 {
		t.Fatalf("resp = %d vectors", len(resp.Data))
	}
	q := resp.Data[0].Embedding
	type scored struct {
		doc   string
		score float64
	}
	var ranked []scored
	for i, d := range docs {
		ranked = append(ranked, scored{d, Cosine(q, resp.Data[i+1].Embedding)})
	}
	sort.Slice(ranked, func(i, j int) bool { return ranked[i].score > ranked[j].score })
	if ranked[0].doc != docs[1] || ranked[2].doc != docs[0] {
		t.Errorf("ranking = %+v", ranked)
	}
	for i, x := range EmbedText("cat food", 256) {
		if q[i] != x {
			t.Fatalf("EmbedText differs from the server at %d", i)
		}
	}

	// base64 encoding, and dimensions from the request.
	resp64, err := c.CreateEmbeddings(ctx, goopenai.EmbeddingRequest{Input: []string{"cat food"}, Model: "m", EncodingFormat: goopenai.EmbeddingEncodingFormatBase64, Dimensions: 256})
	if err != nil || len(resp64.Data) != 1 {
		t.Fatalf("base64: %v", err)
	}
	for i := range q {
		if resp64.Data[0].Embedding[i] != q[i] {
			t.Fatalf("base64 vector differs at %d", i)
		}
	}
	_, err = c.CreateEmbeddings(ctx, goopenai.EmbeddingRequestStrings{Input: []string{""}, Model: "m"})
	var apiErr *goopenai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
		t.Errorf("empty input: %v", err)
	}
	if er := f.EmbeddingRequests(); len(er) != 3 || er[0].Input[1] != docs[0] || er[2].Status != 400 {
		t.Errorf("recorded = %+v", er)
	}
}

func ExampleEmbedText() {
	q := EmbedText("cat food", 64)
	near := EmbedText("food for the cat", 64)
	far := EmbedText("quarterly tax report", 64)
	fmt.Println(Cosine(q, near) > Cosine(q, far))
	// Output: true
}
