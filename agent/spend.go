package agent

import (
	"context"

	"github.com/kairos-agent/kairos"
)

// Spending caps. The model the agent is given checks the caps before
// every call and records what each call cost (usage.Model); the agent's
// part is to say whom a call is for and to answer a refused turn with the
// cap's one sentence instead of an apology.

// spendContext marks ctx with the turn's user, thread and session. A
// scheduled task's runner presets the kind (kairos.SpendTask); it stays.
func spendContext(ctx context.Context, t *turn) context.Context {
	sc, _ := kairos.SpendOf(ctx)
	sc.UserKey, sc.ThreadKey = t.in.UserKey(), t.in.ThreadKey()
	if t.sess != nil {
		sc.SessionID = t.sess.ID
	}
	if sc.Kind == "" {
		sc.Kind = kairos.SpendChat
	}
	return kairos.WithSpend(ctx, sc)
}

// spendAnswer turns a turn that a spending cap stopped into an answer:
// the cap's sentence (what was reached, when it resets); refused says so.
func spendAnswer(answer string, err error) (string, bool, error) {
	if r, ok := kairos.AsSpendRefusal(err); ok {
		return r.Message, true, nil
	}
	return answer, false, err
}
