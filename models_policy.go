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

// The built-in model table: context windows, output limits, vision and
// list prices in US dollars per million tokens (input, cached input,
// output). Prices move often; an operator who bills by them should set
// models.<name>.price in the policy, which wins over this table. A model
// absent here, or an entry without a price, is counted in tokens only.
// Models served through OpenRouter ("openai/gpt-4o") take the first-party
// entry; OpenRouter may charge differently per upstream provider.
//
// Where each group's figures come from (re-checked 2026-11-27 against
// dated public copies of the providers' pages; doc/models.md lists them):
// OpenAI's GPT-5 family from its pricing page as recorded in May 2026,
// cross-checked against two March 2026 tables; Anthropic's from its model
// pages (platform.claude.com) as crawled in 2026 and a dated October 2026
// change (Sonnet 5.5's cache read fell to $0.10); DeepSeek's V3.2 prices
// (December 2025). The older OpenAI models, Groq and Gemini entries date
// from mid-2025 and were not re-checked: their list prices agreed with
// every 2026 table found, but Gemini's cached-input figures did not.
var builtinModels = map[string]ModelSpec{
	// OpenAI GPT-5 family (cached input is a tenth of input).
	"gpt-5":        chat(400_000, 128_000, true, price(1.25, 0.125, 10.00)),
	"gpt-5-mini":   chat(400_000, 128_000, true, price(0.25, 0.025, 2.00)),
	"gpt-5-nano":   chat(400_000, 128_000, true, price(0.05, 0.005, 0.40)),
	"gpt-5.4":      chat(0, 0, true, price(2.50, 0.25, 15.00)),
	"gpt-5.4-mini": chat(0, 0, true, price(0.75, 0.075, 4.50)),
	"gpt-5.4-nano": chat(0, 0, true, price(0.20, 0.02, 1.25)),
	"gpt-5.5":      chat(0, 0, true, price(5.00, 0.50, 30.00)),
	// OpenAI GPT-4 family and older.
	"gpt-4o":        chat(128_000, 16_384, true, price(2.50, 1.25, 10.00)),
	"gpt-4o-mini":   chat(128_000, 16_384, true, price(0.15, 0.075, 0.60)),
	"gpt-4.1":       chat(1_047_576, 32_768, true, price(2.00, 0.50, 8.00)),
	"gpt-4.1-mini":  chat(1_047_576, 32_768, true, price(0.40, 0.10, 1.60)),
	"gpt-4.1-nano":  chat(1_047_576, 32_768, true, price(0.10, 0.025, 0.40)),
	"gpt-4-turbo":   chat(128_000, 4_096, true, price(10.00, 0, 30.00)),
	"gpt-3.5-turbo": chat(16_385, 4_096, false, price(0.50, 0, 1.50)),
	// OpenAI reasoning models (they refuse max_tokens: the adapter sends
	// max_completion_tokens).
	"o1":      chat(200_000, 100_000, true, price(15.00, 7.50, 60.00)),
	"o1-mini": chat(128_000, 65_536, false, price(1.10, 0.55, 4.40)),
	"o3":      chat(200_000, 100_000, true, price(2.00, 0.50, 8.00)),
	"o3-mini": chat(200_000, 100_000, false, price(1.10, 0.55, 4.40)),
	"o4-mini": chat(200_000, 100_000, true, price(1.10, 0.275, 4.40)),
	// OpenAI audio and embeddings.
	"whisper-1":              {Price: &ModelPrice{AudioPerMinute: 0.006}},
	"gpt-4o-transcribe":      {Price: &ModelPrice{AudioPerMinute: 0.006}},
	"gpt-4o-mini-transcribe": {Price: &ModelPrice{AudioPerMinute: 0.003}},
	"text-embedding-3-small": {ContextWindow: 8_191, Price: price(0.02, 0, 0)},
	"text-embedding-3-large": {ContextWindow: 8_191, Price: price(0.13, 0, 0)},
	"text-embedding-ada-002": {ContextWindow: 8_191, Price: price(0.10, 0, 0)},
	// Groq.
	"llama-3.3-70b-versatile": chat(131_072, 32_768, false, price(0.59, 0, 0.79)),
	"llama-3.1-8b-instant":    chat(131_072, 8_192, false, price(0.05, 0, 0.08)),
	"whisper-large-v3":        {Price: &ModelPrice{AudioPerMinute: 0.111 / 60}},
	"whisper-large-v3-turbo":  {Price: &ModelPrice{AudioPerMinute: 0.04 / 60}},
	// DeepSeek V3.2 (both names; cache-hit input is the cached price).
	"deepseek-chat":     chat(131_072, 8_192, false, price(0.28, 0.028, 0.42)),
	"deepseek-reasoner": chat(131_072, 65_536, false, price(0.28, 0.028, 0.42)),
	// Google Gemini through its OpenAI-compatible endpoint (prompts over
	// 200,000 tokens cost more on the Pro models; the table has the lower
	// tier).
	"gemini-2.0-flash":      chat(1_048_576, 8_192, true, price(0.10, 0.025, 0.40)),
	"gemini-2.0-flash-lite": chat(1_048_576, 8_192, true, price(0.075, 0, 0.30)),
	"gemini-2.5-flash":      chat(1_048_576, 65_536, true, price(0.30, 0.075, 2.50)),
	"gemini-2.5-pro":        chat(1_048_576, 65_536, true, price(1.25, 0.31, 10.00)),
	// Anthropic, by the names OpenRouter (anthropic/claude-sonnet-4.5) and
	// Anthropic (claude-sonnet-4-5-20250929) use; cached input is the
	// cache-read price (cache writes are not counted apart). Haiku 5.5 is
	// left out: its price depends on each prompt's length.
	"claude-3.5-sonnet": chat(200_000, 8_192, true, price(3.00, 0.30, 15.00)),
	"claude-3.5-haiku":  chat(200_000, 8_192, false, price(0.80, 0.08, 4.00)),
	"claude-3.7-sonnet": chat(200_000, 64_000, true, price(3.00, 0.30, 15.00)),
	"claude-sonnet-4":   chat(200_000, 64_000, true, price(3.00, 0.30, 15.00)),
	"claude-sonnet-4.5": chat(200_000, 64_000, true, price(3.00, 0.30, 15.00)),
	"claude-opus-4":     chat(200_000, 32_000, true, price(15.00, 1.50, 75.00)),
	"claude-opus-4.1":   chat(200_000, 32_000, true, price(15.00, 1.50, 75.00)),
	"claude-opus-4.5":   chat(200_000, 64_000, true, price(5.00, 0.50, 25.00)),
	"claude-haiku-4.5":  chat(200_000, 64_000, true, price(1.00, 0.10, 5.00)),
	"claude-sonnet-5":   chat(1_000_000, 128_000, true, price(2.00, 0.20, 10.00)),
	"claude-opus-5":     chat(1_000_000, 128_000, true, price(5.00, 0.50, 25.00)),
	"claude-sonnet-5.5": chat(1_000_000, 128_000, true, price(2.00, 0.10, 10.00)),
	"claude-opus-5.5":   chat(1_000_000, 128_000, true, price(4.00, 0.20, 20.00)),
}

// builtinDashed finds an entry by its name with dots as dashes, the way
// Anthropic spells versions (claude-sonnet-4-5 for claude-sonnet-4.5).
var builtinDashed = func() map[string]string {
	m := make(map[string]string, len(builtinModels))
	for k := range builtinModels {
		m[strings.ReplaceAll(k, ".", "-")] = k
	}
	return m
}()

// chat is a chat model's entry. The providers of the table send thoughts
// apart (reasoning_content) or not at all, never opened by a template:
// their answers stream as they come (ThinkingTagged).
func chat(window, maxOut int, vision bool, p *ModelPrice) ModelSpec {
	return ModelSpec{ContextWindow: window, MaxOutputTokens: maxOut, Vision: &vision, Price: p, Thinking: ThinkingTagged}
}

func price(input, cached, output float64) *ModelPrice {
	return &ModelPrice{Input: input, CachedInput: cached, Output: output}
}
