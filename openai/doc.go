// Package openai is the adapter between Kairos and any OpenAI-compatible
// chat-completions endpoint (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp).
// It is the only importer of github.com/sashabaranov/go-openai.
//
// Client implements kairos.Model (Chat, streaming when asked, with tool
// calls assembled from streamed fragments and usage collected) and
// kairos.Embedder (Embed), and offers Ping for readiness checks.
//
// Every failure of the provider becomes a *kairos.ProviderError whose
// StatusCode, Retryable and RetryAfter are set precisely (429, 408, 5xx,
// timeouts and connection failures are retryable; an exhausted quota is
// not) and whose Message never holds the API key, a URL path or query, or
// user info: transport errors are reported as method, host and kind only.
//
// It must not retry or fail over by itself (the agent decides), must not
// log keys or prompts, and must not import other Kairos adapters.
package openai
