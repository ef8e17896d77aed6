package testkit

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
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
	var out []ChatRequest
	for _, r := range f.requests {
		if r.Model == model {
			out = append(out, r)
		}
	}
	return out
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

// --- HTTP ----------------------------------------------------------------------

type oaError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func defaultErrorFor(status int) (msg, typ, code string) {
	switch {
	case status == 400:
		return "Invalid request.", "invalid_request_error", ""
	case status == 401:
		return "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"
	case status == 403:
		return "You are not allowed to sample from this model.", "invalid_request_error", ""
	case status == 404:
		return "The model does not exist or you do not have access to it.", "invalid_request_error", "model_not_found"
	case status == 429:
		return "Rate limit reached for requests. Please try again later.", "requests", "rate_limit_exceeded"
	case status == 503:
		return "The engine is currently overloaded, please try again later.", "server_error", ""
	case status >= 500:
		return "The server had an error while processing your request. Sorry about that!", "server_error", ""
	}
	return http.StatusText(status), "invalid_request_error", ""
}

func writeOAError(w http.ResponseWriter, status int, msg, typ, code string, param string) {
	if msg == "" || typ == "" {
		dm, dt, dc := defaultErrorFor(status)
		if msg == "" {
			msg = dm
		}
		if typ == "" {
			typ = dt
		}
		if code == "" {
			code = dc
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": oaError{Message: msg, Type: typ, Param: strPtr(param), Code: strPtr(code)}})
}

func applyReplyHeaders(w http.ResponseWriter, r Reply) {
	for k, vs := range r.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if r.RetryAfter > 0 {
		w.Header().Set("retry-after", strconv.Itoa(int(math.Ceil(r.RetryAfter.Seconds()))))
		w.Header().Set("retry-after-ms", strconv.FormatInt(r.RetryAfter.Milliseconds(), 10))
	}
}

// writeReplyError writes a scripted failure (Status >= 400 or a raw Body).
func writeReplyError(w http.ResponseWriter, r Reply) {
	applyReplyHeaders(w, r)
	if r.Body != "" {
		status := r.Status
		if status == 0 {
			status = 200
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, r.Body)
		return
	}
	writeOAError(w, r.Status, r.ErrorMessage, r.ErrorType, r.ErrorCode, "")
}

func maskKey(k string) string {
	if len(k) <= 8 {
		return "****"
	}
	return k[:3] + strings.Repeat("*", len(k)-7) + k[len(k)-4:]
}

func (f *FakeOpenAI) serveHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	key := f.apiKey
	f.seq++
	w.Header().Set("x-request-id", fmt.Sprintf("req_fake%d", f.seq))
	f.mu.Unlock()
	if key != "" {
		auth := r.Header.Get("Authorization")
		got, ok := strings.CutPrefix(auth, "Bearer ")
		switch {
		case auth == "":
			writeOAError(w, 401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "invalid_request_error", "", "")
			return
		case !ok || got != key:
			writeOAError(w, 401, "Incorrect API key provided: "+maskKey(got)+". You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key", "")
			return
		}
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case path == "/chat/completions" && r.Method == http.MethodPost:
		if f.injected(w, "chat/completions") {
			return
		}
		f.chat(w, r)
	case path == "/embeddings" && r.Method == http.MethodPost:
		if f.injected(w, "embeddings") {
			return
		}
		f.embeddings(w, r)
	case path == "/audio/transcriptions" && r.Method == http.MethodPost:
		if f.injected(w, "audio/transcriptions") {
			return
		}
		f.transcriptions(w, r)
	case path == "/audio/speech" && r.Method == http.MethodPost:
		if f.injected(w, "audio/speech") {
			return
		}
		f.speech(w, r)
	case path == "/models" && r.Method == http.MethodGet:
		if f.injected(w, "models") {
			return
		}
		f.listModels(w)
	case strings.HasPrefix(path, "/models/") && r.Method == http.MethodGet:
		if f.injected(w, "models") {
			return
		}
		f.getModel(w, strings.TrimPrefix(path, "/models/"))
	default:
		if f.extraRoute(w, r) {
			return
		}
		writeOAError(w, 404, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "invalid_request_error", "", "")
	}
}

func (f *FakeOpenAI) injected(w http.ResponseWriter, path string) bool {
	f.mu.Lock()
	var rep *Reply
	for i, inj := range f.injections {
		if inj.path == "*" || inj.path == path {
			inj.remaining--
			r := inj.reply
			rep = &r
			if inj.remaining <= 0 {
				f.injections = append(f.injections[:i], f.injections[i+1:]...)
			}
			break
		}
	}
	f.mu.Unlock()
	if rep == nil {
		return false
	}
	writeReplyError(w, *rep)
	return true
}

func (f *FakeOpenAI) knownModelLocked(m string) bool {
	if !f.strictModels {
		return true
	}
	for _, id := range f.models {
		if id == m {
			return true
		}
	}
	return false
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type wireRequest struct {
	Model    string        `json:"model"`
	Messages []wireMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
}

func contentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var texts []string
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return string(raw)
}

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// validate applies the request checks OpenAI makes; it returns a 400
// message and param, or "".
func validateChat(w wireRequest) (string, string) {
	if w.Model == "" {
		return "you must provide a model parameter", ""
	}
	if len(w.Messages) == 0 {
		return "[] is too short - 'messages'", "messages"
	}
	if w.StreamOptions != nil && !w.Stream {
		return "The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options"
	}
	for i, t := range w.Tools {
		if t.Type != "function" || t.Function == nil {
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type), fmt.Sprintf("tools[%d].type", i)
		}
		if !toolNameRE.MatchString(t.Function.Name) {
			return fmt.Sprintf("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i), fmt.Sprintf("tools[%d].function.name", i)
		}
		if len(t.Function.Parameters) > 0 && string(t.Function.Parameters) != "null" {
			var obj map[string]any
			if json.Unmarshal(t.Function.Parameters, &obj) != nil {
				return fmt.Sprintf("Invalid 'tools[%d].function.parameters': expected an object.", i), fmt.Sprintf("tools[%d].function.parameters", i)
			}
		}
	}
	pending := map[string]bool{} // tool_call ids awaiting an answer
	var order []string
	for i, m := range w.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool", "function":
		default:
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role), fmt.Sprintf("messages[%d].role", i)
		}
		if m.Role == "tool" {
			if !pending[m.ToolCallID] {
				return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", fmt.Sprintf("messages.[%d].role", i)
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if len(pending) > 0 {
			var missing []string
			for _, id := range order {
				if pending[id] {
					missing = append(missing, id)
				}
			}
			return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(missing, ", "), "messages"
		}
		if m.Role == "assistant" {
			order = nil
			for _, tc := range m.ToolCalls {
				if tc.ID == "" {
					return fmt.Sprintf("Missing required parameter: 'messages[%d].tool_calls[0].id'.", i), "messages"
				}
				pending[tc.ID] = true
				order = append(order, tc.ID)
			}
		}
	}
	if len(pending) > 0 {
		var missing []string
		for _, id := range order {
			if pending[id] {
				missing = append(missing, id)
			}
		}
		return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(missing, ", "), "messages"
	}
	return "", ""
}

func decodeChat(w wireRequest, raw []byte) ChatRequest {
	req := ChatRequest{
		Model: w.Model, Stream: w.Stream, ToolChoice: w.ToolChoice, MaxTokens: w.MaxTokens,
		MaxCompletionTokens: w.MaxCompletionTokens, Temperature: w.Temperature, Raw: json.RawMessage(raw),
	}
	if w.StreamOptions != nil {
		req.IncludeUsage = w.StreamOptions.IncludeUsage
	}
	for _, m := range w.Messages {
		cm := ChatMessage{Role: m.Role, Content: contentText(m.Content), Name: m.Name, ToolCallID: m.ToolCallID, Images: contentImages(m.Content)}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, cm)
	}
	for _, t := range w.Tools {
		if t.Function != nil {
			req.Tools = append(req.Tools, ToolDef{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
		}
	}
	return req
}

// recordChat records a request on arrival and returns a function that
// sets the status it was answered with.
func (f *FakeOpenAI) recordChat(req ChatRequest) func(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	idx := len(f.requests)
	f.requests = append(f.requests, req)
	f.signalLocked()
	return func(status int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.requests[idx].Status = status
		f.signalLocked()
	}
}

// pickReply chooses the scripted answer for req.
func (f *FakeOpenAI) pickReply(req ChatRequest) Reply {
	f.mu.Lock()
	if q := f.modelQueue[req.Model]; len(q) > 0 {
		r := q[0]
		f.modelQueue[req.Model] = q[1:]
		f.mu.Unlock()
		return r
	}
	if h := f.modelHandlers[req.Model]; h != nil {
		f.mu.Unlock()
		return h(req)
	}
	if len(f.queue) > 0 {
		r := f.queue[0]
		f.queue = f.queue[1:]
		f.mu.Unlock()
		return r
	}
	h := f.handler
	f.mu.Unlock()
	if h != nil {
		return h(req)
	}
	return EchoReply(req)
}

func wordCount(s string) int { return len(strings.Fields(s)) }

func (f *FakeOpenAI) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	f.mu.Lock()
	now := f.now()
	f.mu.Unlock()
	var wr wireRequest
	if err != nil || json.Unmarshal(body, &wr) != nil {
		f.recordChat(ChatRequest{Raw: json.RawMessage(body), Time: now})(400)
		writeOAError(w, 400, "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", "invalid_request_error", "", "")
		return
	}
	req := decodeChat(wr, body)
	req.Time = now
	answered := f.recordChat(req)
	if msg, param := validateChat(wr); msg != "" {
		answered(400)
		writeOAError(w, 400, msg, "invalid_request_error", "", param)
		return
	}
	f.mu.Lock()
	known := f.knownModelLocked(req.Model)
	f.mu.Unlock()
	if !known {
		answered(404)
		writeOAError(w, 404, fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model), "invalid_request_error", "model_not_found", "")
		return
	}
	q := f.quirksFor(req.Model)
	if status := q.refuse(w, req, body); status != 0 {
		answered(status)
		return
	}
	rep := f.pickReply(req)
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if rep.Status >= 400 || rep.Body != "" {
		status := rep.Status
		if status == 0 {
			status = 200
		}
		answered(status)
		writeReplyError(w, rep)
		return
	}
	f.mu.Lock()
	f.seq++
	id := fmt.Sprintf("chatcmpl-fake%d", f.seq)
	f.mu.Unlock()
	for i := range rep.ToolCalls {
		if rep.ToolCalls[i].ID == "" && !q.NoToolCallIDs {
			rep.ToolCalls[i].ID = fmt.Sprintf("call_%s_%d", strings.TrimPrefix(id, "chatcmpl-"), i)
		}
	}
	if rep.Model == "" {
		rep.Model = req.Model
	}
	if rep.FinishReason == "" {
		rep.FinishReason = "stop"
		if len(rep.ToolCalls) > 0 {
			rep.FinishReason = "tool_calls"
		}
	}
	if rep.Usage == nil {
		u := Usage{}
		for _, m := range req.Messages {
			u.PromptTokens += wordCount(m.Content) + 4
		}
		u.CompletionTokens = wordCount(rep.Text)
		for _, tc := range rep.ToolCalls {
			u.CompletionTokens += len(tc.Arguments)/4 + 1
		}
		rep.Usage = &u
	}
	answered(200)
	applyReplyHeaders(w, rep)
	if req.Stream {
		f.stream(w, r, id, now, req, rep, q)
		return
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if rep.Text != "" || len(rep.ToolCalls) == 0 {
		msg["content"] = rep.Text
	}
	if len(rep.ToolCalls) > 0 {
		var calls []map[string]any
		for _, tc := range rep.ToolCalls {
			calls = append(calls, q.toolCall(tc, -1))
		}
		msg["tool_calls"] = calls
	}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	answer := map[string]any{
		"id": id, "object": "chat.completion", "created": now.Unix(), "model": rep.Model,
		"system_fingerprint": "fp_fake",
		"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": rep.FinishReason}},
		"usage":              usageJSON(*rep.Usage),
	}
	if q.NoUsage {
		delete(answer, "usage")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

func usageJSON(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_tokens": u.PromptTokens + u.CompletionTokens,
	}
}

// splitWords splits s into chunks that each end after a space, as token
// streams roughly do.
func splitWords(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if r == ' ' || r == '\n' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitFragments cuts JSON arguments into small pieces as OpenAI streams them.
func splitFragments(s string, size int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		n := size
		if n > len(r) {
			n = len(r)
		}
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

func (f *FakeOpenAI) stream(w http.ResponseWriter, r *http.Request, id string, now time.Time, req ChatRequest, rep Reply, q Quirks) {
	if q.NoUsage {
		req.IncludeUsage = false // the server ignores stream_options
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)

	chunk := func(delta map[string]any, finish any) map[string]any {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": now.Unix(), "model": rep.Model,
			"system_fingerprint": "fp_fake",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		if req.IncludeUsage {
			c["usage"] = nil
		}
		return c
	}
	var events []map[string]any
	events = append(events, chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
	for _, p := range splitWords(rep.Reasoning) {
		events = append(events, chunk(map[string]any{"reasoning_content": p}, nil))
	}
	pieces := rep.Chunks
	if pieces == nil {
		pieces = splitWords(rep.Text)
	}
	for _, p := range pieces {
		events = append(events, chunk(map[string]any{"content": p}, nil))
	}
	type frag struct {
		index int
		text  string
	}
	frags := make([][]frag, len(rep.ToolCalls))
	for i, tc := range rep.ToolCalls {
		if q.ArgumentsAsObject {
			continue // the whole object comes in the header
		}
		for _, p := range splitFragments(tc.Arguments, 7) {
			frags[i] = append(frags[i], frag{i, p})
		}
	}
	// Each call starts with a header chunk (id, type, name) followed by its
	// argument fragments; with InterleaveToolCalls all headers come first
	// and the fragments of the calls alternate.
	header := func(i int) map[string]any {
		tc := rep.ToolCalls[i]
		return chunk(map[string]any{"tool_calls": []any{q.toolCall(tc, i)}}, nil)
	}
	fragment := func(fr frag) map[string]any {
		return chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": fr.index, "function": map[string]any{"arguments": fr.text},
		}}}, nil)
	}
	if rep.InterleaveToolCalls {
		for i := range rep.ToolCalls {
			events = append(events, header(i))
		}
		for k := 0; ; k++ {
			more := false
			for i := range frags {
				if k < len(frags[i]) {
					events = append(events, fragment(frags[i][k]))
					more = true
				}
			}
			if !more {
				break
			}
		}
	} else {
		for i := range rep.ToolCalls {
			events = append(events, header(i))
			for _, fr := range frags[i] {
				events = append(events, fragment(fr))
			}
		}
	}
	events = append(events, chunk(map[string]any{}, rep.FinishReason))
	if req.IncludeUsage {
		events = append(events, map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": now.Unix(), "model": rep.Model,
			"system_fingerprint": "fp_fake", "choices": []any{}, "usage": usageJSON(*rep.Usage),
		})
	}
	for n, ev := range events {
		if rep.CutAfter > 0 && n >= rep.CutAfter {
			dropConnection(w)
			return
		}
		if rep.StreamErrorAfter > 0 && n >= rep.StreamErrorAfter {
			msg, typ, code := rep.ErrorMessage, rep.ErrorType, rep.ErrorCode
			if msg == "" {
				msg, typ, code = defaultErrorFor(500)
			}
			b, _ := json.Marshal(map[string]any{"error": oaError{Message: msg, Type: typ, Code: strPtr(code)}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			if flusher != nil {
				flusher.Flush()
			}
			return
		}
		if rep.ChunkDelay > 0 && n > 0 {
			t := time.NewTimer(rep.ChunkDelay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// --- embeddings and models -----------------------------------------------------

// EmbedText returns the fake's embedding of text: a hashed bag of words
// (lower-cased letter/digit runs, FNV-1a into dims buckets), L2-normalised.
// Texts sharing more words have a higher dot product, so tests can check
// ranking. A text without words gets a unit vector on bucket 0.
func EmbedText(text string, dims int) []float32 {
	if dims <= 0 {
		dims = 64
	}
	v := make([]float64, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		h := fnv.New64a()
		_, _ = h.Write([]byte(w))
		v[h.Sum64()%uint64(dims)]++
	}
	if len(words) == 0 {
		v[0] = 1
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dims)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// Cosine returns the cosine similarity of two vectors of equal length.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		if i >= len(b) {
			break
		}
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func (f *FakeOpenAI) embeddings(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	var wr struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	f.mu.Lock()
	now := f.now()
	dims := f.dims
	f.mu.Unlock()
	record := func(er EmbeddingRequest, status int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		er.Time, er.Status = now, status
		f.embeds = append(f.embeds, er)
		f.signalLocked()
	}
	if json.Unmarshal(body, &wr) != nil {
		record(EmbeddingRequest{}, 400)
		writeOAError(w, 400, "We could not parse the JSON body of your request.", "invalid_request_error", "", "")
		return
	}
	inputs, ok := embeddingInputs(wr.Input)
	er := EmbeddingRequest{Model: wr.Model, Input: inputs, Dimensions: wr.Dimensions, EncodingFormat: wr.EncodingFormat}
	if wr.Model == "" {
		record(er, 400)
		writeOAError(w, 400, "you must provide a model parameter", "invalid_request_error", "", "")
		return
	}
	if !ok {
		record(er, 400)
		writeOAError(w, 400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", "invalid_request_error", "", "")
		return
	}
	f.mu.Lock()
	known := f.knownModelLocked(wr.Model)
	f.mu.Unlock()
	if !known {
		record(er, 404)
		writeOAError(w, 404, fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", wr.Model), "invalid_request_error", "model_not_found", "")
		return
	}
	if wr.Dimensions > 0 {
		dims = wr.Dimensions
	}
	record(er, 200)
	data := make([]map[string]any, 0, len(inputs))
	tokens := 0
	for i, in := range inputs {
		vec := EmbedText(in, dims)
		tokens += wordCount(in)
		var emb any = vec
		if wr.EncodingFormat == "base64" {
			buf := make([]byte, 4*len(vec))
			for j, x := range vec {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
			}
			emb = base64.StdEncoding.EncodeToString(buf)
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": emb})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": wr.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// embeddingInputs decodes input: a string, strings, tokens or token lists.
// Empty strings and empty lists are invalid, as with OpenAI.
func embeddingInputs(raw json.RawMessage) ([]string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}, s != ""
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		if len(ss) == 0 {
			return nil, false
		}
		for _, x := range ss {
			if x == "" {
				return ss, false
			}
		}
		return ss, true
	}
	var toks []int
	if json.Unmarshal(raw, &toks) == nil && len(toks) > 0 {
		return []string{intsText(toks)}, true
	}
	var lists [][]int
	if json.Unmarshal(raw, &lists) == nil && len(lists) > 0 {
		var out []string
		for _, l := range lists {
			if len(l) == 0 {
				return nil, false
			}
			out = append(out, intsText(l))
		}
		return out, true
	}
	return nil, false
}

func intsText(toks []int) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = "t" + strconv.Itoa(t)
	}
	return strings.Join(parts, " ")
}

func (f *FakeOpenAI) modelIDsLocked() []string {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, id := range f.models {
		add(id)
	}
	if !f.strictModels {
		var extra []string
		for m := range f.modelQueue {
			extra = append(extra, m)
		}
		for m := range f.modelHandlers {
			extra = append(extra, m)
		}
		sort.Strings(extra)
		for _, m := range extra {
			add(m)
		}
	}
	return ids
}

func (f *FakeOpenAI) listModels(w http.ResponseWriter) {
	f.mu.Lock()
	ids := f.modelIDsLocked()
	created := f.now().Unix()
	f.mu.Unlock()
	data := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		entry := map[string]any{"id": id, "object": "model", "created": created, "owned_by": "testkit"}
		f.mu.Lock()
		for k, v := range f.modelFields[id] {
			entry[k] = v
		}
		f.mu.Unlock()
		data = append(data, entry)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func (f *FakeOpenAI) getModel(w http.ResponseWriter, id string) {
	f.mu.Lock()
	ids := f.modelIDsLocked()
	known := !f.strictModels
	created := f.now().Unix()
	f.mu.Unlock()
	for _, m := range ids {
		if m == id {
			known = true
		}
	}
	if !known {
		writeOAError(w, 404, fmt.Sprintf("The model '%s' does not exist", id), "invalid_request_error", "model_not_found", "model")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "model", "created": created, "owned_by": "testkit"})
}
