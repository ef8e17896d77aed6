package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kairos-agent/kairos"
)

// needsApproval decides whether an action needs a human's yes: impactful
// actions when the clock policy requires confirmation (CLOCK.md §8.2),
// actions the policy lists, and impactful actions once untrusted content
// is in the turn (seed 004 taint).
func (a *Agent) needsApproval(t *turn, act kairos.ToolAction) (bool, string) {
	if act.AlwaysAsk {
		reason := orDefault(act.Reason, act.Name+" always needs a human's yes")
		if t.tainted {
			reason += "; untrusted content (" + t.taintSource() + ") is in this turn"
		}
		return true, reason
	}
	if slices.Contains(t.pol.Approvals.Required, act.Name) {
		return true, "the policy requires approval for " + act.Name
	}
	if act.Impactful && t.tainted {
		return true, "untrusted content (" + t.taintSource() + ") is in this turn"
	}
	if act.Impactful && t.pol.Clock.Inference.RequireConfirmationForImpactfulActions {
		reason := act.Reason
		if reason == "" {
			reason = "impactful action"
		}
		return true, reason
	}
	return false, ""
}

// ask sends an approval request and waits for the human's decision; a
// failure to ask counts as a denial.
func (a *Agent) ask(ctx context.Context, t *turn, call kairos.ToolCall, act kairos.ToolAction, reason string) kairos.Decision {
	if dec, ok := t.decided[call.ID]; ok {
		if call.ID == t.resumed {
			t.resumed = "" // the decision that resumed the turn: logged once, here
			a.log.Info("approval decided", "user_id", t.in.UserID, "thread", t.in.ThreadKey(), "action", act.Name,
				"outcome", dec.Outcome, "scope", kairos.GrantScopeLabel(dec.Scope), "by", dec.By, "reason", reason)
		}
		// Decided before the turn paused or was resumed: a grant the
		// decision asked for is kept now (once: the scope is spent).
		if a.keepGrant(ctx, t, call, act, dec) {
			dec.Scope = kairos.GrantOnce
			t.remember(call.ID, &dec)
		}
		return dec
	}
	if g := a.coveredByGrant(ctx, t, call, act); g != nil {
		dec := kairos.Decision{Outcome: kairos.DecisionApproved, By: GrantDecider + g.ID, At: a.cfg.Now()}
		t.remember(call.ID, &dec)
		a.log.Info("approval covered by a grant", "user_id", t.in.UserID, "thread", t.in.ThreadKey(), "action", act.Name,
			"grant", g.ID, "uses", g.Uses)
		return dec
	}
	req := a.approvalRequest(t, call, act, reason)
	dec, err := t.out.Approve(ctx, req)
	if errors.Is(err, kairos.ErrHandedOff) {
		t.handedOff = true
		return kairos.Decision{Outcome: kairos.DecisionDenied}
	}
	defer t.remember(call.ID, &dec)
	if err != nil || dec.Outcome == "" {
		if err != nil {
			a.log.Warn("approval request failed", "err", err)
		}
		dec.Outcome = kairos.DecisionDenied
	}
	a.log.Info("approval decided", "user_id", t.in.UserID, "thread", t.in.ThreadKey(), "action", act.Name,
		"outcome", dec.Outcome, "scope", kairos.GrantScopeLabel(dec.Scope), "by", dec.By, "reason", reason)
	if a.keepGrant(ctx, t, call, act, dec) {
		dec.Scope = kairos.GrantOnce
	}
	return dec
}

// notApproved is the result the model reads after a human said no.
func notApproved(action, outcome string) string {
	return fmt.Sprintf("a human did not approve %s (%s); do not retry it, tell the user", action, outcome)
}

func approvalTimeout(p *kairos.Policy) time.Duration {
	if d := p.Approvals.Timeout.Approx(); d > 0 {
		return d
	}
	return 10 * time.Minute
}
