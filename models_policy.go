package kairos

import (
	"regexp"
	"strings"
)

// Tool calling modes (models.<name>.tool_calling).
const (
	ToolCallingNative   = "native"   // tools go in the request's `tools`; the server parses calls
	ToolCallingPrompted = "prompted" // tools are described in the system prompt; calls are read from the text
	ToolCallingOff      = "off"      // the model gets no tools at all
)

// ModelSpec is what the policy's `models` section says about one model.
// Zero fields are unknown: Policy.Model fills them from the built-in
// table where it knows the model.
type ModelSpec struct {
	// ContextWindow is the model's context length in tokens (prompt and
	// answer together); 0 is unknown.
	ContextWindow int `yaml:"context_window" json:"context_window,omitempty"`
	// ToolCalling is ToolCallingNative, ToolCallingPrompted or
	// ToolCallingOff; empty means native.
	ToolCalling string `yaml:"tool_calling" json:"tool_calling,omitempty"`
	// Vision says the model reads images; nil is unknown.
	Vision *bool `yaml:"vision" json:"vision,omitempty"`
	// MaxOutputTokens is the most the model may write in one answer; 0 is
	// unknown.
	MaxOutputTokens int `yaml:"max_output_tokens" json:"max_output_tokens,omitempty"`
	// Price, when known, turns token counts into money; nil counts tokens
	// only.
	Price *ModelPrice `yaml:"price" json:"price,omitempty"`
	// Thinking says where the model's thoughts begin: ThinkingTemplate
	// when the server's chat template opens <think> (Qwen3 thinking
	// models, the DeepSeek-R1 distills), so every answer starts inside a
	// thought; ThinkingTagged when thoughts, if any, come with their own
	// opening tag or apart (reasoning_content). Empty is unknown: streamed
	// text is held back until an answer shows which.
	Thinking string `yaml:"thinking" json:"thinking,omitempty"`
}

// Where a model's thoughts begin (models.<name>.thinking).
const (
	ThinkingTemplate = "template" // the chat template opens <think>: answers start inside a thought
	ThinkingTagged   = "tagged"   // thoughts come with their opening tag, or as reasoning_content
)

// ModelPrice is a model's list price in US dollars.
type ModelPrice struct {
	Input          float64 `yaml:"input" json:"input"`                         // per million prompt tokens
	CachedInput    float64 `yaml:"cached_input" json:"cached_input,omitempty"` // per million cached prompt tokens
	Output         float64 `yaml:"output" json:"output"`                       // per million completion tokens
	AudioPerMinute float64 `yaml:"audio_per_minute" json:"audio_per_minute,omitempty"`
	PerImage       float64 `yaml:"per_image" json:"per_image,omitempty"`
}

// ToolMode returns the spec's tool calling mode, native when unset.
func (s ModelSpec) ToolMode() string {
	if s.ToolCalling == "" {
		return ToolCallingNative
	}
	return s.ToolCalling
}

// HasVision reports whether the model is known to read images.
func (s ModelSpec) HasVision() bool { return s.Vision != nil && *s.Vision }

// Model returns what is known of the named model: the policy's entry
// merged over the built-in entry (the policy's non-zero fields win). The
// boolean is false when neither knows the model; the spec is then zero
// (native tools, unknown window, no price).
//
// Built-in lookups also try the name without an OpenRouter-style vendor
// prefix ("openai/gpt-4o") and without a date suffix
// ("gpt-4o-mini-2024-07-18").
func (p *Policy) Model(name string) (ModelSpec, bool) {
	base, known := BuiltinModel(name)
	if p == nil {
		return base, known
	}
	own, ok := p.Models[name]
	if !ok {
		return base, known
	}
	return mergeSpec(base, own), true
}

func mergeSpec(base, own ModelSpec) ModelSpec {
	if own.ContextWindow > 0 {
		base.ContextWindow = own.ContextWindow
	}
	if own.ToolCalling != "" {
		base.ToolCalling = own.ToolCalling
	}
	if own.Vision != nil {
		base.Vision = own.Vision
	}
	if own.MaxOutputTokens > 0 {
		base.MaxOutputTokens = own.MaxOutputTokens
	}
	if own.Price != nil {
		base.Price = own.Price
	}
	if own.Thinking != "" {
		base.Thinking = own.Thinking
	}
	return base
}

var modelDateSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{4}|\d{6}|\d{8}|latest|preview)$`)

// BuiltinModel returns the built-in entry for a well-known model name.
func BuiltinModel(name string) (ModelSpec, bool) {
	lower := strings.ToLower(strings.TrimSpace(name))
	try := []string{lower}
	if i := strings.LastIndex(lower, "/"); i >= 0 {
		try = append(try, lower[i+1:])
	}
	for _, n := range try {
		if s, ok := builtinEntry(n); ok {
			return s, true
		}
		if m := modelDateSuffix.FindStringIndex(n); m != nil {
			if s, ok := builtinEntry(n[:m[0]]); ok {
				return s, true
			}
		}
	}
	return ModelSpec{}, false
}

// builtinEntry is the table's entry for a lower-case name, spelled with
// dots or dashes in its version.
func builtinEntry(n string) (ModelSpec, bool) {
	s, ok := builtinModels[n]
	if !ok {
		s, ok = builtinModels[builtinDashed[n]]
	}
	if !ok {
		return ModelSpec{}, false
	}
	return s.clone(), true
}

// clone copies the pointers so that callers cannot change the table.
func (s ModelSpec) clone() ModelSpec {
	if s.Vision != nil {
		v := *s.Vision
		s.Vision = &v
	}
	if s.Price != nil {
		p := *s.Price
		s.Price = &p
	}
	return s
}

// BuiltinModelNames lists the names of the built-in table (for docs and
// tests), unordered.
func BuiltinModelNames() []string {
	out := make([]string, 0, len(builtinModels))
	for n := range builtinModels {
		out = append(out, n)
	}
	return out
}
