package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// ToolCall is a tool call in a chat request (assistant history) or in a
// scripted Reply.
type ToolCall struct {
	ID        string // "call_<n>" when left empty in a Reply
	Name      string
	Arguments string // JSON text
}

// ChatMessage is one decoded message of a chat-completions request.
type ChatMessage struct {
	Role       string
	Content    string // text parts joined when the content was an array
	Name       string
	ToolCalls  []ToolCall
	ToolCallID string
	Images     []string // image_url parts' URLs (data: URLs for uploads)
}

// ToolDef is a function tool offered in a request.
type ToolDef struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// ChatRequest is one decoded /v1/chat/completions request, as the fake
// received it, with the status it answered (0 while it is still being
// answered, or when the client went away first).
type ChatRequest struct {
	Model               string
	Messages            []ChatMessage
	Tools               []ToolDef
	ToolChoice          json.RawMessage
	Stream              bool
	IncludeUsage        bool // stream_options.include_usage
	MaxTokens           int
	MaxCompletionTokens int
	Temperature         *float64
	Raw                 json.RawMessage // the whole body
	Time                time.Time
	Status              int // HTTP status the fake answered
}

// LastUserMessage returns the content of the last user message.
func (r ChatRequest) LastUserMessage() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// SystemPrompt returns the system and developer messages joined by "\n".
func (r ChatRequest) SystemPrompt() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == "system" || m.Role == "developer" {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolNames returns the names of the tools offered, in order.
func (r ChatRequest) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// HasTool reports whether a tool named name was offered.
func (r ChatRequest) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// ToolResults returns the role "tool" messages of the request.
func (r ChatRequest) ToolResults() []ChatMessage {
	var out []ChatMessage
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// Usage is the token count a Reply reports.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// Reply scripts one answer of FakeOpenAI's chat endpoint.
type Reply struct {
	Text         string
	Reasoning    string // sent as reasoning_content (DeepSeek's and vLLM's reasoning parsers)
	ToolCalls    []ToolCall
	FinishReason string // "stop", or "tool_calls" when there are tool calls, by default
	Usage        *Usage // computed from word counts when nil
	Model        string // reported model; the request's by default

	// Failure: a Status >= 400 answers with an OpenAI error object.
	Status       int
	ErrorMessage string
	ErrorType    string
	ErrorCode    string
	RetryAfter   time.Duration // sets retry-after (whole seconds, rounded up) and retry-after-ms
	Header       http.Header   // extra response headers
	Body         string        // a raw body to send instead of JSON (Status or 200)

	// Timing and stream shape.
	Delay               time.Duration // before answering (ends early if the client goes away)
	ChunkDelay          time.Duration // between streamed chunks
	Chunks              []string      // content chunks to stream; Text split in words by default
	InterleaveToolCalls bool          // stream argument fragments of parallel calls round-robin
	StreamErrorAfter    int           // >0: after this many chunks send an error event and stop
	CutAfter            int           // >0: drop the connection after this many chunks, no [DONE]
}

// TextReply answers with text.
func TextReply(text string) Reply { return Reply{Text: text} }

// ToolReply answers with tool calls (several are parallel calls).
func ToolReply(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// ErrorReply answers with an HTTP error status and OpenAI's error object
// (a default message for the status when message is empty).
func ErrorReply(status int, message string) Reply {
	return Reply{Status: status, ErrorMessage: message}
}

// EchoReply is the default answer: the last user message, prefixed "echo: ".
func EchoReply(req ChatRequest) Reply { return Reply{Text: "echo: " + req.LastUserMessage()} }

// EmbeddingRequest is one decoded /v1/embeddings request.
type EmbeddingRequest struct {
	Model          string
	Input          []string
	Dimensions     int
	EncodingFormat string
	Time           time.Time
	Status         int
}

// OpenAIOption configures NewFakeOpenAI.
type OpenAIOption func(*FakeOpenAI)

// WithAPIKey makes the fake require "Authorization: Bearer <key>".
func WithAPIKey(key string) OpenAIOption { return func(f *FakeOpenAI) { f.apiKey = key } }

// WithModels sets the models /v1/models lists; a chat or embeddings request
// for any other model then fails with 404 model_not_found.
func WithModels(ids ...string) OpenAIOption {
	return func(f *FakeOpenAI) { f.models = append([]string(nil), ids...); f.strictModels = true }
}

// WithEmbeddingDims sets the default embedding size (64).
func WithEmbeddingDims(n int) OpenAIOption { return func(f *FakeOpenAI) { f.dims = n } }

type openAIInjection struct {
	path      string
	remaining int
	reply     Reply
}

// FakeOpenAI is an in-process OpenAI-compatible server for tests. Chat
// answers come from, in order: the model's queue (EnqueueFor), the model's
// handler (SetModelHandler), the shared queue (Enqueue), the shared handler
// (SetHandler), and finally EchoReply. It is safe for concurrent use.
type FakeOpenAI struct {
	tb  testing.TB
	srv *httptest.Server

	mu            sync.Mutex
	changed       chan struct{}
	now           func() time.Time
	apiKey        string
	models        []string
	strictModels  bool
	dims          int
	queue         []Reply
	modelQueue    map[string][]Reply
	handler       func(ChatRequest) Reply
	modelHandlers map[string]func(ChatRequest) Reply
	injections    []*openAIInjection
	requests      []ChatRequest
	embeds        []EmbeddingRequest
	seq           int
	audio         audioState        // openai_audio.go
	quirks        map[string]Quirks // openai_quirks.go
	modelFields   map[string]map[string]any
	routes        map[string]http.HandlerFunc // "METHOD /path" outside the OpenAI API
}

// NewFakeOpenAI starts a fake OpenAI-compatible server that stops when the
// test ends.
func NewFakeOpenAI(tb testing.TB, opts ...OpenAIOption) *FakeOpenAI {
	tb.Helper()
	f := &FakeOpenAI{
		tb:            tb,
		changed:       make(chan struct{}),
		now:           time.Now,
		models:        []string{"gpt-4o-mini", "text-embedding-3-small"},
		dims:          64,
		modelQueue:    map[string][]Reply{},
		modelHandlers: map[string]func(ChatRequest) Reply{},
	}
	for _, o := range opts {
		o(f)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	tb.Cleanup(func() {
		f.srv.CloseClientConnections()
		f.srv.Close()
	})
	return f
}

// URL is the API base URL including "/v1", the value for OPENAI_BASE_URL.
func (f *FakeOpenAI) URL() string { return f.srv.URL + "/v1" }

// SetAPIKey changes the required key ("" accepts any or no key).
func (f *FakeOpenAI) SetAPIKey(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apiKey = key
}

// SetNow replaces the clock used for "created" fields and records.
func (f *FakeOpenAI) SetNow(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = now
}

// Enqueue adds replies to the shared queue.
func (f *FakeOpenAI) Enqueue(replies ...Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, replies...)
}

// EnqueueFor adds replies to model's own queue.
func (f *FakeOpenAI) EnqueueFor(model string, replies ...Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.modelQueue[model] = append(f.modelQueue[model], replies...)
}

// SetHandler answers requests that no queue covers (nil restores EchoReply).
func (f *FakeOpenAI) SetHandler(h func(ChatRequest) Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
}

// SetModelHandler answers model's requests once its queue is empty.
func (f *FakeOpenAI) SetModelHandler(model string, h func(ChatRequest) Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h == nil {
		delete(f.modelHandlers, model)
		return
	}
	f.modelHandlers[model] = h
}

// FailModel makes every request for model fail with status (after its
// queue is used up).
func (f *FakeOpenAI) FailModel(model string, status int) {
	f.SetModelHandler(model, func(ChatRequest) Reply { return ErrorReply(status, "") })
}

// InjectError answers the next n requests to path ("chat/completions",
// "embeddings", "models" or "*") with status, before any scripting.
func (f *FakeOpenAI) InjectError(path string, n int, status int, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injections = append(f.injections, &openAIInjection{path: path, remaining: n, reply: ErrorReply(status, message)})
}

// Pending returns how many queued replies (shared and per model) are unused.
func (f *FakeOpenAI) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.queue)
	for _, q := range f.modelQueue {
		n += len(q)
	}
	return n
}

// Requests returns every chat request received, in order.
func (f *FakeOpenAI) Requests() []ChatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ChatRequest(nil), f.requests...)
}

// RequestsFor returns the chat requests for model, in order.
func (f *FakeOpenAI) RequestsFor(model string) []ChatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return filter(f.requests, func(r ChatRequest) bool { return r.Model == model })
}

// LastRequest returns the last chat request (zero when none arrived).
func (f *FakeOpenAI) LastRequest() ChatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		return ChatRequest{}
	}
	return f.requests[len(f.requests)-1]
}

// EmbeddingRequests returns every embeddings request received, in order.
func (f *FakeOpenAI) EmbeddingRequests() []EmbeddingRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]EmbeddingRequest(nil), f.embeds...)
}

// WaitRequests blocks until at least n chat requests have arrived.
func (f *FakeOpenAI) WaitRequests(ctx context.Context, n int) ([]ChatRequest, error) {
	for {
		f.mu.Lock()
		if len(f.requests) >= n {
			out := append([]ChatRequest(nil), f.requests...)
			f.mu.Unlock()
			return out, nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return f.Requests(), fmt.Errorf("testkit: waiting for %d chat requests: %w", n, ctx.Err())
		}
	}
}

func (f *FakeOpenAI) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}
