package kairos

// The built-in model table: context windows, output limits and vision as
// the providers document them, and list prices in US dollars per million
// tokens. The prices were read from the providers' public pricing pages
// (OpenAI, Groq, DeepSeek, Google AI for developers, Anthropic) in June
// 2025; they change, so an operator who bills by them should set
// models.<name>.price in the policy, which wins over this table. Models
// served through OpenRouter ("openai/gpt-4o") take the first-party entry;
// OpenRouter may charge differently per upstream provider. A model absent
// here, or an entry without a price, is counted in tokens only.
var builtinModels = map[string]ModelSpec{
	// OpenAI chat models.
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
	// DeepSeek (cache-hit input is the cached price).
	"deepseek-chat":     chat(65_536, 8_192, false, price(0.27, 0.07, 1.10)),
	"deepseek-reasoner": chat(65_536, 32_768, false, price(0.55, 0.14, 2.19)),
	// Google Gemini through its OpenAI-compatible endpoint.
	"gemini-2.0-flash":      chat(1_048_576, 8_192, true, price(0.10, 0.025, 0.40)),
	"gemini-2.0-flash-lite": chat(1_048_576, 8_192, true, price(0.075, 0, 0.30)),
	"gemini-2.5-flash":      chat(1_048_576, 65_536, true, price(0.30, 0.075, 2.50)),
	"gemini-2.5-pro":        chat(1_048_576, 65_536, true, price(1.25, 0.31, 10.00)),
	// Anthropic models as OpenRouter names them (anthropic/…).
	"claude-3.5-sonnet": chat(200_000, 8_192, true, price(3.00, 0.30, 15.00)),
	"claude-3.5-haiku":  chat(200_000, 8_192, false, price(0.80, 0.08, 4.00)),
	"claude-3.7-sonnet": chat(200_000, 64_000, true, price(3.00, 0.30, 15.00)),
	"claude-sonnet-4":   chat(200_000, 64_000, true, price(3.00, 0.30, 15.00)),
}

func chat(window, maxOut int, vision bool, p *ModelPrice) ModelSpec {
	return ModelSpec{ContextWindow: window, MaxOutputTokens: maxOut, Vision: &vision, Price: p}
}

func price(input, cached, output float64) *ModelPrice {
	return &ModelPrice{Input: input, CachedInput: cached, Output: output}
}
