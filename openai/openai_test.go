package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
)

const testKey = "sk-test-SUPERSECRET-abcdef123456"

func newClient(t *testing.T, f *testkit.FakeOpenAI, mod ...func(*Config)) (*Client, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	cfg := Config{
		BaseURL: f.URL(), APIKey: testKey, Timeout: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, m := range mod {
		m(&cfg)
	}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), testKey) {
			t.Errorf("the API key reached the log:\n%s", logs.String())
		}
	})
	return New(cfg), &logs
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

var weather = kairos.ToolSpec{Name: "get_weather", Description: "Weather for a city",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

func userReq(model, text string) kairos.ChatRequest {
	return kairos.ChatRequest{Model: model, Messages: []kairos.ChatMessage{{Role: "system", Content: "sys"}, {Role: "user", Content: text}}}
}

func TestChatPlain(t *testing.T) {
	f := testkit.NewFakeOpenAI(t, testkit.WithAPIKey(testKey))
	c, _ := newClient(t, f)
	f.Enqueue(testkit.Reply{Text: "Hello!", Usage: &testkit.Usage{PromptTokens: 11, CompletionTokens: 2}})
	req := userReq("gpt-4o-mini", "hi")
	req.Tools = []kairos.ToolSpec{weather, {Name: "noop", Description: "no params"}}
	req.MaxTokens = 300
	resp, err := c.Chat(testkit.Deadline(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := kairos.ChatResponse{Model: "gpt-4o-mini", Message: kairos.ChatMessage{Role: "assistant", Content: "Hello!"}, FinishReason: "stop",
		Usage: kairos.Usage{PromptTokens: 11, CompletionTokens: 2}}
	if resp.Model != want.Model || resp.Message.Content != want.Message.Content || resp.Message.Role != "assistant" || resp.FinishReason != "stop" || resp.Usage != want.Usage {
		t.Errorf("resp = %+v", resp)
	}
	got := f.LastRequest()
	if got.Stream || got.MaxTokens != 300 || got.MaxCompletionTokens != 0 || len(got.Tools) != 2 || got.SystemPrompt() != "sys" {
		t.Errorf("request = %+v", got)
	}
	if string(got.Tools[1].Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("empty parameters sent as %s", got.Tools[1].Parameters)
	}
	if !strings.Contains(string(got.Tools[0].Parameters), `"required":["city"]`) {
		t.Errorf("parameters = %s", got.Tools[0].Parameters)
	}

	// Reasoning families get max_completion_tokens.
	req.Model = "o3-mini"
	if _, err := c.Chat(testkit.Deadline(t), req, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.LastRequest(); got.MaxTokens != 0 || got.MaxCompletionTokens != 300 {
		t.Errorf("o3 request = max_tokens %d, max_completion_tokens %d", got.MaxTokens, got.MaxCompletionTokens)
	}
}

func TestChatToolRoundTrip(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	c, _ := newClient(t, f)
	for _, stream := range []bool{false, true} {
		name := "plain"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			f.Enqueue(testkit.Reply{InterleaveToolCalls: true, ToolCalls: []testkit.ToolCall{
				{Name: "get_weather", Arguments: `{"city":"Zürich","detail":"hourly forecast please"}`},
				{Name: "get_weather", Arguments: `{"city":"Kraków"}`},
			}})
			var onDelta func(string)
			if stream {
				onDelta = func(string) {}
			}
			req := userReq("gpt-4o-mini", "weather in Zürich and Kraków?")
			req.Tools = []kairos.ToolSpec{weather}
			resp, err := c.Chat(testkit.Deadline(t), req, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.Message.ToolCalls
			if resp.FinishReason != "tool_calls" || len(calls) != 2 || calls[0].ID == "" || calls[0].ID == calls[1].ID ||
				calls[0].Arguments != `{"city":"Zürich","detail":"hourly forecast please"}` || calls[1].Arguments != `{"city":"Kraków"}` ||
				calls[1].Name != "get_weather" {
				t.Fatalf("resp = %+v", resp)
			}
			// Send the history back: the fake checks tool results pair with the calls.
			f.Enqueue(testkit.TextReply("Sunny and snowy."))
			req.Messages = append(req.Messages, resp.Message,
				kairos.ChatMessage{Role: "tool", ToolCallID: calls[0].ID, Content: `{"temp":21}`},
				kairos.ChatMessage{Role: "tool", ToolCallID: calls[1].ID, Content: `{"temp":-3}`})
			resp, err = c.Chat(testkit.Deadline(t), req, onDelta)
			if err != nil || resp.Message.Content != "Sunny and snowy." {
				t.Fatalf("second turn = %+v, %v", resp, err)
			}
			last := f.LastRequest()
			if len(last.Messages) != 5 || len(last.Messages[2].ToolCalls) != 2 || last.Messages[4].ToolCallID != calls[1].ID {
				t.Errorf("history sent = %+v", last.Messages)
			}
			if last.Stream != stream {
				t.Errorf("stream flag = %v", last.Stream)
			}
		})
	}
}

func TestChatStreaming(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	c, _ := newClient(t, f)
	f.Enqueue(testkit.Reply{Text: "The quick brown fox", Usage: &testkit.Usage{PromptTokens: 7, CompletionTokens: 4}})
	var deltas []string
	req := userReq("m", "go")
	req.Thinking = kairos.ThinkingTagged // known not to begin inside a thought: it streams at once
	resp, err := c.Chat(testkit.Deadline(t), req, func(s string) { deltas = append(deltas, s) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "The quick brown fox" || resp.Usage.PromptTokens != 7 || resp.Usage.CompletionTokens != 4 || resp.FinishReason != "stop" {
		t.Errorf("resp = %+v", resp)
	}
	if len(deltas) != 4 || deltas[0] != "The " || deltas[3] != "The quick brown fox" {
		t.Errorf("deltas = %q", deltas)
	}
	for i := 1; i < len(deltas); i++ {
		if !strings.HasPrefix(deltas[i], deltas[i-1]) {
			t.Errorf("delta %d does not extend the previous one: %q", i, deltas)
		}
	}
	if r := f.LastRequest(); !r.Stream || !r.IncludeUsage {
		t.Errorf("request stream=%v include_usage=%v", r.Stream, r.IncludeUsage)
	}
}

func providerErr(t *testing.T, err error) *kairos.ProviderError {
	t.Helper()
	var pe *kairos.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %T %v, want *kairos.ProviderError", err, err)
	}
	return pe
}

func TestChatErrorClassification(t *testing.T) {
	f := testkit.NewFakeOpenAI(t, testkit.WithAPIKey(testKey))
	c, _ := newClient(t, f)
	short, _ := newClient(t, f, func(cfg *Config) { cfg.Timeout = 300 * time.Millisecond })
	// The client's clock is pinned: an HTTP-date Retry-After is read
	// against it, so how long the cases before it take does not count.
	now := time.Date(2026, 11, 28, 4, 30, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	date := now.Add(90 * time.Second).Format(http.TimeFormat)

	tests := []struct {
		name       string
		reply      testkit.Reply
		stream     bool
		status     int
		retryable  bool
		retryAfter time.Duration
		msg        string
		short      bool // use the client with a 300ms timeout
	}{
		{name: "429 retry-after-ms", reply: testkit.Reply{Status: 429, RetryAfter: 2500 * time.Millisecond}, status: 429, retryable: true, retryAfter: 2500 * time.Millisecond, msg: "HTTP 429: Rate limit reached"},
		{name: "429 stream", reply: testkit.Reply{Status: 429, RetryAfter: 2 * time.Second}, stream: true, status: 429, retryable: true, retryAfter: 2 * time.Second},
		{name: "429 quota", reply: testkit.Reply{Status: 429, ErrorCode: "insufficient_quota", ErrorMessage: "You exceeded your current quota", ErrorType: "insufficient_quota"}, status: 429, retryable: false},
		{name: "503 http date", reply: testkit.Reply{Status: 503, Header: http.Header{"Retry-After": {date}}}, status: 503, retryable: true, retryAfter: 90 * time.Second},
		{name: "500", reply: testkit.ErrorReply(500, ""), status: 500, retryable: true, msg: "server had an error"},
		{name: "502 html body", reply: testkit.Reply{Status: 502, Body: "<html>bad gateway</html>"}, status: 502, retryable: true, msg: "HTTP 502"},
		{name: "408", reply: testkit.ErrorReply(408, "timeout"), status: 408, retryable: true},
		{name: "400", reply: testkit.ErrorReply(400, "bad things in https://api.example.com/v1/x?key=abc"), status: 400, retryable: false, msg: "bad things in https://api.example.com"},
		{name: "404", reply: testkit.ErrorReply(404, ""), status: 404, retryable: false},
		{name: "mid-stream error", reply: testkit.Reply{Text: "a b c d", StreamErrorAfter: 2}, stream: true, status: 0, retryable: true, msg: "error in stream"},
		{name: "cut stream", reply: testkit.Reply{Text: "a b c d", CutAfter: 2}, stream: true, status: 0, retryable: true},
		{name: "malformed 200", reply: testkit.Reply{Body: "{not json"}, status: 0, retryable: true, msg: "malformed answer"},
		{name: "timeout", reply: testkit.Reply{Text: "late", Delay: 30 * time.Second}, status: 0, retryable: true, msg: "timeout", short: true},
		{name: "timeout stream", reply: testkit.Reply{Text: "a b c d e", ChunkDelay: 30 * time.Second}, stream: true, status: 0, retryable: true, msg: "timeout", short: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.Enqueue(tc.reply)
			var onDelta func(string)
			if tc.stream {
				onDelta = func(string) {}
			}
			client := c
			if tc.short {
				client = short
			}
			_, err := client.Chat(testkit.Deadline(t), userReq("gpt-4o-mini", "x"), onDelta)
			pe := providerErr(t, err)
			if pe.StatusCode != tc.status || pe.Retryable != tc.retryable {
				t.Errorf("got status %d retryable %v, want %d %v (%s)", pe.StatusCode, pe.Retryable, tc.status, tc.retryable, pe.Message)
			}
			if pe.RetryAfter != tc.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", pe.RetryAfter, tc.retryAfter)
			}
			if !strings.Contains(pe.Message, tc.msg) || !strings.HasPrefix(pe.Message, "chat gpt-4o-mini: ") {
				t.Errorf("Message = %q, want it to contain %q", pe.Message, tc.msg)
			}
			if strings.Contains(pe.Message, "key=abc") || strings.Contains(pe.Message, "/v1") {
				t.Errorf("Message leaks a URL: %q", pe.Message)
			}
			if kairos.IsRetryable(err) != tc.retryable {
				t.Errorf("IsRetryable = %v", !tc.retryable)
			}
		})
	}
}

func TestChatAuthFailureHidesKey(t *testing.T) {
	f := testkit.NewFakeOpenAI(t, testkit.WithAPIKey("sk-the-right-key-000"))
	c, logs := newClient(t, f) // sends testKey, which is wrong
	_, err := c.Chat(testkit.Deadline(t), userReq("m", "x"), nil)
	pe := providerErr(t, err)
	if pe.StatusCode != 401 || pe.Retryable {
		t.Errorf("pe = %+v", pe)
	}
	if strings.Contains(pe.Error(), testKey) || strings.Contains(pe.Error(), "account/api-keys") {
		t.Errorf("message = %q", pe.Message)
	}
	if !strings.Contains(logs.String(), "status=401") {
		t.Errorf("failure not logged: %s", logs.String())
	}
}

func TestTransportErrors(t *testing.T) {
	// A port with nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	tests := []struct {
		name    string
		baseURL string
		kind    string
	}{
		{name: "refused with user info", baseURL: "http://user:" + testKey + "@" + addr + "/v1?api-key=" + testKey, kind: "connection refused"},
		{name: "dns", baseURL: "http://no-such-host.invalid/v1", kind: "DNS lookup failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Config{BaseURL: tc.baseURL, APIKey: testKey, Timeout: 5 * time.Second})
			_, err := c.Chat(testkit.Deadline(t), userReq("m", "x"), nil)
			pe := providerErr(t, err)
			if !pe.Retryable || pe.StatusCode != 0 || !strings.Contains(pe.Message, tc.kind) || !strings.Contains(pe.Message, "POST ") {
				t.Errorf("pe = %+v", pe)
			}
			if strings.Contains(pe.Message, testKey) || strings.Contains(pe.Message, "/v1") || strings.Contains(pe.Message, "user") {
				t.Errorf("message leaks: %q", pe.Message)
			}
			if err := c.Ping(testkit.Deadline(t)); !kairos.IsRetryable(err) || !strings.Contains(err.Error(), "GET ") {
				t.Errorf("Ping = %v", err)
			}
		})
	}

	t.Run("not a TLS server", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(srv.Close)
		c := New(Config{BaseURL: strings.Replace(srv.URL, "http://", "https://", 1) + "/v1", Timeout: 5 * time.Second})
		pe := providerErr(t, c.Ping(testkit.Deadline(t)))
		if pe.Retryable || !strings.Contains(pe.Message, "TLS") {
			t.Errorf("pe = %+v", pe)
		}
	})
}

func TestCallerCancellationIsNotProviderError(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	c, _ := newClient(t, f)
	for _, stream := range []bool{false, true} {
		f.Enqueue(testkit.Reply{Text: "a b c", Delay: time.Minute})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		var onDelta func(string)
		if stream {
			onDelta = func(string) {}
		}
		go func() {
			_, err := c.Chat(ctx, userReq("m", "x"), onDelta)
			done <- err
		}()
		if _, err := f.WaitRequests(testkit.Deadline(t), len(f.Requests())+1); err != nil {
			t.Fatal(err)
		}
		cancel()
		select {
		case err := <-done:
			var pe *kairos.ProviderError
			if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
				t.Errorf("stream=%v: err = %v", stream, err)
			}
		case <-testkit.Deadline(t).Done():
			t.Fatal("Chat ignored cancellation")
		}
	}
}

func TestEmbed(t *testing.T) {
	f := testkit.NewFakeOpenAI(t, testkit.WithEmbeddingDims(32))
	c, _ := newClient(t, f, func(cfg *Config) { cfg.EmbeddingModel = "emb-small" })
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = "text number " + string(rune('a'+i%26)) + " " + strings.Repeat("x", i%7+1)
	}
	vecs, err := c.Embed(testkit.Deadline(t), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors", len(vecs))
	}
	for i, v := range vecs {
		want := testkit.EmbedText(texts[i], 32)
		for j := range want {
			if v[j] != want[j] {
				t.Fatalf("vector %d differs at %d", i, j)
			}
		}
	}
	reqs := f.EmbeddingRequests()
	if len(reqs) != 2 || len(reqs[0].Input) != 256 || len(reqs[1].Input) != 44 || reqs[0].Model != "emb-small" {
		t.Errorf("requests = %d", len(reqs))
	}

	if v, err := c.Embed(testkit.Deadline(t), nil); v != nil || err != nil {
		t.Errorf("empty = %v, %v", v, err)
	}
	if _, err := c.Embed(testkit.Deadline(t), []string{"ok", " "}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("blank text: %v", err)
	}
	f.InjectError("embeddings", 1, 500, "")
	_, err = c.Embed(testkit.Deadline(t), []string{"a"})
	if pe := providerErr(t, err); pe.StatusCode != 500 || !pe.Retryable || !strings.HasPrefix(pe.Message, "embeddings emb-small: ") {
		t.Errorf("pe = %+v", pe)
	}
}

func TestPing(t *testing.T) {
	f := testkit.NewFakeOpenAI(t, testkit.WithAPIKey(testKey))
	c, _ := newClient(t, f)
	if err := c.Ping(testkit.Deadline(t)); err != nil {
		t.Fatal(err)
	}
	f.InjectError("models", 1, 503, "")
	if pe := providerErr(t, c.Ping(testkit.Deadline(t))); pe.StatusCode != 503 || !pe.Retryable {
		t.Errorf("pe = %+v", pe)
	}
	f.SetAPIKey("sk-other-key-00000")
	if pe := providerErr(t, c.Ping(testkit.Deadline(t))); pe.StatusCode != 401 || pe.Retryable {
		t.Errorf("pe = %+v", pe)
	}
}

// A readiness probe pings every few seconds: a provider that stays down
// is one warning, not one per probe, and its recovery is one line.
func TestPingLogsAnOutageOnce(t *testing.T) {
	f := testkit.NewFakeOpenAI(t, testkit.WithAPIKey(testKey))
	c, logs := newClient(t, f)
	f.InjectError("models", 3, 503, "")
	for i := 0; i < 3; i++ {
		if err := c.Ping(testkit.Deadline(t)); err == nil {
			t.Fatalf("ping %d: no error from a failing provider", i)
		}
	}
	if err := c.Ping(testkit.Deadline(t)); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN msg=\"model provider call failed\""); n != 1 {
		t.Errorf("%d warnings for one outage:\n%s", n, out)
	}
	if n := strings.Count(out, "model provider answers again"); n != 1 {
		t.Errorf("%d recovery lines:\n%s", n, out)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{"ms wins", http.Header{"Retry-After": {"3"}, "Retry-After-Ms": {"1200"}}, 1200 * time.Millisecond},
		{"date", http.Header{"Retry-After": {now.Add(time.Minute).Format(http.TimeFormat)}}, time.Minute},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"negative", http.Header{"Retry-After": {"-4"}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryAfter(tc.h, now); got != tc.want {
				t.Errorf("retryAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSafe(t *testing.T) {
	c := New(Config{APIKey: "sk-abc-123-secret"})
	tests := []struct{ in, want string }{
		{"Incorrect API key provided: sk-abc-123-secret.", "Incorrect API key provided: [redacted]."},
		{"see https://user:pw@host.example:8443/path?token=x.", "see https://host.example."},
		{"line\n  two", "line two"},
	}
	for _, tc := range tests {
		if got := c.safe(tc.in); got != tc.want {
			t.Errorf("safe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := c.safe(strings.Repeat("é", 400)); len([]rune(got)) != maxMessage+1 {
		t.Errorf("not shortened: %d runes", len([]rune(got)))
	}
}

// KAIROS_EMBEDDING_DIMENSIONS reaches the endpoint as `dimensions`, and
// the vectors come back at that size; unset, the parameter is absent.
func TestEmbedDimensions(t *testing.T) {
	for _, dims := range []int{0, 256} {
		f := testkit.NewFakeOpenAI(t, testkit.WithEmbeddingDims(1536))
		c, _ := newClient(t, f, func(cfg *Config) { cfg.EmbeddingDimensions = dims })
		vecs, err := c.Embed(testkit.Deadline(t), []string{"sister's birthday in June"})
		if err != nil {
			t.Fatal(err)
		}
		want := dims
		if want == 0 {
			want = 1536
		}
		if len(vecs) != 1 || len(vecs[0]) != want {
			t.Fatalf("dims %d: vector of %d, want %d", dims, len(vecs[0]), want)
		}
		if reqs := f.EmbeddingRequests(); len(reqs) != 1 || reqs[0].Dimensions != dims {
			t.Fatalf("dims %d: requests %+v", dims, reqs)
		}
	}
}
