package kairos

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ChatMessage is one message of a chat-completions request or answer.
type ChatMessage struct {
	Role       string
	Content    string
	Name       string
	ToolCalls  []ToolCall
	ToolCallID string
	// Images are data: URLs sent as image_url content parts after the
	// text (user messages of a vision turn only).
	Images []string
}

// ToolCall is the model's request to run one tool.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text as the model wrote it
}

// ToolSpec is a tool as offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema
	// Untrusted names who wrote the description when the turn cannot
	// trust them ("MCP server notes", "a skill shared by another user"):
	// the agent offers such a description fenced as data, and offering
	// it taints the turn. "" for Kairos's own words.
	Untrusted string `json:"-"`
}

// ChatRequest is one call to a chat model.
type ChatRequest struct {
	Model     string
	Messages  []ChatMessage
	Tools     []ToolSpec
	MaxTokens int
	// Thinking is what is known of where the model's thoughts begin
	// (ModelSpec.Thinking): a streamed answer is shown only where it is
	// known not to be a thought. "" is unknown.
	Thinking string
}

// Usage is the token count the provider reported.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// ReasoningTokens is the part of CompletionTokens the model spent
	// thinking (reasoning_content or <think> blocks): counted and paid
	// for, never shown.
	ReasoningTokens int
	// Estimated is true when the provider reported no usage and the
	// counts were estimated from the texts.
	Estimated bool
	// CachedTokens are the prompt tokens the provider served from its
	// prompt cache (usage.prompt_tokens_details.cached_tokens), billed at
	// the cached price; they are part of PromptTokens.
	CachedTokens int
}

// ChatResponse is the model's answer.
type ChatResponse struct {
	Model        string
	Message      ChatMessage
	FinishReason string
	Usage        Usage
}

// Model is a chat-completions model (an OpenAI-compatible endpoint).
type Model interface {
	// Chat sends the request. When onDelta is not nil the answer is streamed
	// and onDelta receives the accumulated text so far as it grows.
	// Failures are *ProviderError when the provider answered or could not be
	// reached.
	Chat(ctx context.Context, req ChatRequest, onDelta func(text string)) (*ChatResponse, error)
}

// Embedder turns texts into vectors (the /embeddings endpoint).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ProviderError is a failure of the model provider. Retryable is true for
// 429, 5xx, timeouts and connection failures.
type ProviderError struct {
	StatusCode int           // HTTP status, 0 when no answer arrived
	Retryable  bool          // worth retrying (same or another model)
	RetryAfter time.Duration // the provider's Retry-After, if any
	Message    string        // safe description (no URLs with keys)
	// Kind says what a refusal was about, when it is one the caller can
	// act on: ProviderContextLength or ProviderNoTools; empty otherwise.
	Kind string
	// ContextWindow is the model's window when a context-length error
	// said it, else 0.
	ContextWindow int
}

// Kinds of ProviderError.
const (
	// ProviderContextLength: the prompt and answer exceed the model's
	// context window; a shorter prompt may succeed.
	ProviderContextLength = "context_length"
	// ProviderNoTools: the server or model does not take `tools`; the
	// same request with prompted tool calling may succeed.
	ProviderNoTools = "no_tools"
)

// ProviderKind returns err's ProviderError kind, or "".
func ProviderKind(err error) string {
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return ""
}

func (e *ProviderError) Error() string { return "model provider: " + e.Message }

// IsRetryable reports whether err is a retryable provider failure.
func IsRetryable(err error) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe.Retryable
}
