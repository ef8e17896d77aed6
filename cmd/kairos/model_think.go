package main

import (
	"context"

	"github.com/kairos-agent/kairos"
)

// checkThinking says where the model's thoughts begin, from what the
// probes' answers showed the client (a </think> never opened: the chat
// template opens thoughts), asking once more with room to finish a
// thought when none of them told.
func (c *modelChecker) checkThinking(ctx context.Context, r *modelReport) {
	if c.client.Thinking(r.name) == "" {
		cctx, cancel := c.ctx(ctx)
		req := probeRequest(r.name, "Reply with the single word OK.")
		req.MaxTokens = 1024
		_, _ = c.client.Chat(cctx, req, nil)
		cancel()
	}
	switch r.thinking = c.client.Thinking(r.name); r.thinking {
	case kairos.ThinkingTemplate:
		c.line("thinking", r.name, "template: the chat template opens <think>, answers begin inside a thought; nothing streams before its </think>")
	case kairos.ThinkingTagged:
		c.line("thinking", r.name, "tagged: no thought opened by the template; answers stream as they come")
	default:
		c.line("thinking", r.name, "unknown: no answer finished; streamed text is held back until one tells (set models.%s.thinking)", r.name)
	}
}
