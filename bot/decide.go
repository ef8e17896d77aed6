package bot

import (
	"context"

	"github.com/kairos-agent/kairos"
)

// Decide decides a persisted approval request from outside Telegram (the
// query API or the console) as a press of its button would: the first
// decision wins, the keyboard in the chat loses its buttons, and the
// paused turn continues here or on whichever replica waits for it. by is
// who decided ("console:<id>", "token:<name>"). The answer is the
// sentence a button press would show. A decision from the web approves
// once: a standing grant is the asked user's own choice, in their chat.
func (b *Bot) Decide(ctx context.Context, id string, approve bool, by string) (string, error) {
	st := b.cfg.Approvals
	if st == nil {
		return "", kairos.Errorf(kairos.ENOTFOUND, "approvals are not persisted here")
	}
	row, err := st.FindApproval(ctx, id)
	if err != nil {
		return "", err
	}
	outcome := kairos.DecisionDenied
	if approve {
		outcome = kairos.DecisionApproved
	}
	dec := kairos.Decision{Outcome: outcome, By: by, At: b.cfg.Now()}
	var local *pendingApproval
	if v, ok := b.approvals.Load(id); ok {
		local = v.(*pendingApproval)
	}
	var said string
	b.decidePersisted(ctx, id, dec, row, local, func(s string) { said = s })
	return said, nil
}

// Replier returns a Replier for a turn that did not come from Telegram
// (the query API's messages): its answer goes to in's chat and its
// approvals are asked there, without the outbox (there is no update to
// key it by).
func (b *Bot) Replier(in *kairos.Inbound) kairos.Replier { return b.replier(0, in) }
