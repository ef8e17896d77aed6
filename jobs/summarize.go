package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/fit"
)

// maxTranscript bounds the text sent for one summary (the newest part is
// kept).
const maxTranscript = 24000

// chat asks the model for a summary: one system instruction, one user
// text, no tools. Each configured model is tried once, in order.
func (c *Config) chat(ctx context.Context, system, text string, maxTokens int) (string, error) {
	if c.Model == nil {
		return "", kairos.Errorf(kairos.EINTERNAL, "no model configured for summaries")
	}
	var models []string
	if c.Models != nil {
		models = c.Models()
	}
	if len(models) == 0 {
		models = []string{""}
	}
	if len(text) > maxTranscript {
		text = text[len(text)-maxTranscript:]
		for len(text) > 0 && text[0]&0xC0 == 0x80 {
			text = text[1:]
		}
	}
	var errs []error
	for _, m := range models {
		resp, err := c.Model.Chat(ctx, kairos.ChatRequest{Model: m, MaxTokens: maxTokens, Messages: []kairos.ChatMessage{
			{Role: kairos.RoleSystem, Content: system},
			{Role: kairos.RoleUser, Content: c.fit(m, system, text, maxTokens)},
		}}, nil)
		if err == nil {
			if s := strings.TrimSpace(resp.Message.Content); s != "" {
				return s, nil
			}
			err = errors.New("empty answer")
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if _, capped := kairos.AsSpendRefusal(err); capped {
			return "", err // the next model is refused the same way
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("summarize: %w", errors.Join(errs...))
}

// fit keeps the newest part of text that fits model's context window
// beside the system prompt and the answer's room (the policy's window;
// unknown: unchanged).
func (c *Config) fit(model, system, text string, maxTokens int) string {
	var p *kairos.Policy
	if c.Policy != nil {
		p = c.Policy()
	}
	room := fit.WindowRoom(p, model, maxTokens)
	if room == 0 {
		return text
	}
	count := fit.Estimate
	if c.CountTokens != nil {
		count = func(s string) int { return c.CountTokens(model, s) }
	}
	return fit.Tail(text, room-count(system)-8, count) // 8: two messages' framing
}

const sessionPrompt = "Summarize this conversation for your own later reference: facts learned, decisions, open loops, dates. " +
	"At most 150 words. Reply with the summary only."

// transcript renders the user and assistant turns of a session.
func transcript(sess *kairos.Session, msgs []*kairos.Message) string {
	var b strings.Builder
	if sess.RunningSummary != "" {
		b.WriteString("Earlier: " + sess.RunningSummary + "\n")
	}
	for _, m := range msgs {
		if (m.Role == kairos.RoleUser || m.Role == kairos.RoleAssistant) && strings.TrimSpace(m.Content) != "" {
			who := m.Role
			if m.Role == kairos.RoleUser && m.Name != "" {
				who = "user " + m.Name
			}
			fmt.Fprintf(&b, "%s: %s\n", who, m.Content)
		}
	}
	return b.String()
}

// hasConversation reports whether a session holds anything to summarize.
func hasConversation(msgs []*kairos.Message) bool {
	for _, m := range msgs {
		if (m.Role == kairos.RoleUser || m.Role == kairos.RoleAssistant) && strings.TrimSpace(m.Content) != "" {
			return true
		}
	}
	return false
}

// excerpt is the stand-in summary when no model answers: the newest part
// of the transcript, marked as such, so the division still happens and
// the next session still carries something.
func excerpt(text, why string) string {
	const n = 800
	text = strings.TrimSpace(text)
	if len(text) > n {
		text = text[len(text)-n:]
		for len(text) > 0 && text[0]&0xC0 == 0x80 {
			text = text[1:]
		}
		text = "…" + text
	}
	return "(Unsummarized excerpt; " + why + ".)\n" + text
}
