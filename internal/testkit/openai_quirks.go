package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// Quirks make the fake answer the way a particular OpenAI-compatible
// server does, in that server's documented or observed shapes. The zero
// value is OpenAI's own behaviour.
type Quirks struct {
	// RejectTools, when set, answers a request that has `tools` with this
	// status and message (OllamaNoTools, LlamaCppNoJinja, VLLMNoToolParser).
	RejectTools *Refusal
	// RejectParams answers a request that sets any of these parameters
	// with OpenAI's 400 unsupported_parameter (e.g. "max_tokens" for the
	// o-series, "stream_options" for older servers).
	RejectParams []string
	// ArgumentsAsObject writes tool-call arguments as a JSON object
	// instead of a string of JSON (in a stream: whole, in the call's
	// first chunk).
	ArgumentsAsObject bool
	// RejectImages answers a request with image parts with this refusal
	// (LlamaCppNoVision: a model served without its projector).
	RejectImages *Refusal
	// NoToolCallIDs leaves the id out of tool calls.
	NoToolCallIDs bool
	// NoUsage leaves usage out of answers, and out of streams even when
	// stream_options.include_usage asks for it.
	NoUsage bool
	// ContextWindow > 0 refuses prompts of more estimated tokens (words +
	// 4 per message) with ContextError's shape.
	ContextWindow int
	// ContextError is the refusal for a prompt over ContextWindow;
	// OpenAIContextError by default.
	ContextError func(window, tokens int) Refusal
}

// Refusal is an error answer: status, message, and OpenAI's type, code
// and param (or Raw: a whole body in the server's own shape).
type Refusal struct {
	Status                 int
	Message, Type, Code, P string
	Raw                    string
}

// Refusals in the shapes the servers send.
var (
	// Ollama for a model whose template has no tools (its OpenAI API).
	OllamaNoTools = &Refusal{Status: 400, Message: "registry.ollama.ai/library/gemma2:2b does not support tools", Type: "api_error"}
	// llama.cpp's llama-server started without --jinja.
	LlamaCppNoJinja = &Refusal{Status: 400, Raw: `{"error":{"code":400,"message":"tools param requires --jinja flag","type":"invalid_request_error"}}`}
	// vLLM started without --enable-auto-tool-choice (its own error object, no "error" wrapper).
	VLLMNoToolParser = &Refusal{Status: 400, Raw: `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`}
)

// LlamaCppNoVision is llama-server's answer to an image for a model
// started without --mmproj.
var LlamaCppNoVision = &Refusal{Status: 500, Raw: `{"error":{"code":500,"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"server_error"}}`}

// SetModelFields adds fields to the model's entry in GET /models, as
// servers that describe their models do: {"context_length": 32768}
// (OpenRouter, LM Studio), {"context_window": 131072} (Groq),
// {"max_model_len": 8192} (vLLM), {"meta": {"n_ctx_train": 4096}}
// (llama.cpp). The model is listed from then on.
func (f *FakeOpenAI) SetModelFields(id string, fields map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains(f.models, id) {
		f.models = append(f.models, id)
	}
	if f.modelFields == nil {
		f.modelFields = map[string]map[string]any{}
	}
	f.modelFields[id] = fields
}

// OpenAIContextError is OpenAI's context_length_exceeded answer.
func OpenAIContextError(window, tokens int) Refusal {
	return Refusal{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", P: "messages",
		Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, tokens)}
}

// LlamaCppContextError is llama-server's answer to a prompt over n_ctx.
func LlamaCppContextError(window, tokens int) Refusal {
	return Refusal{Status: 400, Raw: fmt.Sprintf(`{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":%d,"n_ctx":%d}}`, tokens, window)}
}

// SetQuirks makes the fake behave like another server for model ("" for
// every model without quirks of its own).
func (f *FakeOpenAI) SetQuirks(model string, q Quirks) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.quirks == nil {
		f.quirks = map[string]Quirks{}
	}
	f.quirks[model] = q
}

func (f *FakeOpenAI) quirksFor(model string) Quirks {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q, ok := f.quirks[model]; ok {
		return q
	}
	return f.quirks[""]
}

// PromptTokens is the fake's token count of a request: words plus four
// per message (what its usage reports and ContextWindow compares).
func PromptTokens(req ChatRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += wordCount(m.Content) + 4
	}
	return n
}

// refuse writes the quirk's refusal of req, if any, and returns its
// status (0: none).
func (q Quirks) refuse(w http.ResponseWriter, req ChatRequest, body []byte) int {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(body, &fields)
	if q.RejectTools != nil && len(req.Tools) > 0 {
		return q.RejectTools.write(w)
	}
	if q.RejectImages != nil {
		for _, m := range req.Messages {
			if len(m.Images) > 0 {
				return q.RejectImages.write(w)
			}
		}
	}
	for _, p := range q.RejectParams {
		if _, set := fields[p]; set {
			r := Refusal{Status: 400, Type: "invalid_request_error", Code: "unsupported_parameter", P: p,
				Message: fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", p)}
			if p == "max_tokens" {
				r.Message += " Use 'max_completion_tokens' instead."
			}
			return r.write(w)
		}
	}
	if n := PromptTokens(req); q.ContextWindow > 0 && n > q.ContextWindow {
		mk := q.ContextError
		if mk == nil {
			mk = OpenAIContextError
		}
		r := mk(q.ContextWindow, n)
		return r.write(w)
	}
	return 0
}

func (r Refusal) write(w http.ResponseWriter) int {
	if r.Raw != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(r.Status)
		_, _ = w.Write([]byte(r.Raw))
		return r.Status
	}
	writeOAError(w, r.Status, r.Message, r.Type, r.Code, r.P)
	return r.Status
}

// toolCall renders one tool call of an answer (index < 0) or the first
// chunk of a streamed one.
func (q Quirks) toolCall(tc ToolCall, index int) map[string]any {
	var args any = tc.Arguments
	if index >= 0 {
		args = ""
	}
	if q.ArgumentsAsObject {
		var obj any
		if json.Unmarshal([]byte(tc.Arguments), &obj) == nil {
			args = obj
		}
	}
	out := map[string]any{"type": "function", "function": map[string]any{"name": tc.Name, "arguments": args}}
	if index >= 0 {
		out["index"] = index
	}
	if tc.ID != "" && !q.NoToolCallIDs {
		out["id"] = tc.ID
	}
	return out
}

// SetRoute serves a server's own endpoint beside the OpenAI API, by method
// and path from the server's root ("GET /props" for llama-server,
// "POST /api/show" for Ollama).
func (f *FakeOpenAI) SetRoute(method, path string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.routes == nil {
		f.routes = map[string]http.HandlerFunc{}
	}
	f.routes[method+" "+path] = h
}

func (f *FakeOpenAI) extraRoute(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	h := f.routes[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	if h == nil {
		return false
	}
	h(w, r)
	return true
}

// LlamaCppProps answers llama-server's GET /props with n_ctx per slot.
func LlamaCppProps(nCtx int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"default_generation_settings": map[string]any{"n_ctx": nCtx}, "total_slots": 1,
			"chat_template": "{% for message in messages %}…"})
	}
}

// OllamaShow answers Ollama's POST /api/show: the trained length in
// model_info, and num_ctx in parameters when the model sets it (0: not set).
func OllamaShow(trained, numCtx int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		params := "stop \"<|im_end|>\""
		if numCtx > 0 {
			params = fmt.Sprintf("num_ctx %d\n%s", numCtx, params)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"parameters": params, "capabilities": []string{"completion", "tools"},
			"model_info": map[string]any{"general.architecture": "qwen2", "qwen2.context_length": trained}})
	}
}
