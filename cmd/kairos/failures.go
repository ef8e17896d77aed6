package main

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos/agent"
)

// authAlertEvery spaces the operators' alerts about a refused model key.
const authAlertEvery = time.Hour

// modelFailure hears the turns no model could answer. A refused key is
// the operator's to fix: one error line naming the variable and one
// message to each operator, at most once an hour; the user's apology
// (agent) says the operator was told.
func (m *Main) modelFailure(ctx context.Context, c *core, err error) {
	c.mu.Lock()
	hear := c.onModelFailure
	c.mu.Unlock()
	if hear != nil {
		hear(err)
	}
	if !agent.IsAuthFailure(err) {
		return
	}
	c.mu.Lock()
	now := c.now()
	if !c.lastAuthAlert.IsZero() && now.Sub(c.lastAuthAlert) < authAlertEvery {
		c.mu.Unlock()
		return
	}
	c.lastAuthAlert = now
	tell := c.tellOperators
	c.mu.Unlock()
	c.log.Error("the model endpoint refused the API key: check OPENAI_API_KEY (and OPENAI_BASE_URL); operators are told",
		"base_url", m.Config.OpenAIBaseURL, "err", err)
	if tell != nil {
		tell(context.WithoutCancel(ctx), "The model endpoint "+m.Config.OpenAIBaseURL+" refused my API key, so I cannot answer anyone. "+
			"Check OPENAI_API_KEY (and OPENAI_BASE_URL) and restart me. I'll remind you at most once an hour.")
	}
}
