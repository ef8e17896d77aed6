package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

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
