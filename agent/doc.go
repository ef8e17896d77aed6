// Package agent answers a user's message: it stamps the turn through the
// clock wrapper, assembles the prompt (persona, clock envelope, relevant
// memories, session summary, tool guide, trimmed history), runs the
// tool-calling loop against a kairos.Model with retries and fallback models,
// gates every tool call through the mode machine, capability envelopes,
// taint and approvals, and streams the answer to a kairos.Replier.
//
// It depends on the root package's interfaces only; it must not import the
// adapters (bot, openai, store, sandbox) nor the tools' implementations.
package agent
