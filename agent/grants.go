package agent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/kairos-agent/kairos"
)

// Standing approvals (kairos.Grant). ask consults them before it asks a
// human, and keeps the one a decision asked for ("Allow 1h", "Always
// here"). The floor is checked both times, here, whatever the front end
// offered: kairos.GrantFloor (never_grant, always-ask actions, calls with
// no nameable target), taint, and who decided.

// GrantDecider prefixes Decision.By for a call a grant covered.
const GrantDecider = kairos.GrantedBy

// grantFloor says why no grant may cover, or be made for, this call in
// this turn ("" when one may). A task's turn may use a grant that covers
// tasks; it never makes one (nobody is there to press a button).
func (a *Agent) grantFloor(t *turn, call kairos.ToolCall, act kairos.ToolAction) string {
	switch {
	case a.cfg.Grants == nil:
		return "standing approvals are not kept here"
	case t.tainted:
		return "untrusted content (" + t.taintSource() + ") is in this turn"
	case t.in.Turn != kairos.TurnUser && t.in.Turn != kairos.TurnTask:
		return "this turn is not a conversation's"
	}
	return kairos.GrantFloor(t.pol, call.Name, act)
}

func grantKey(t *turn, call kairos.ToolCall, act kairos.ToolAction) kairos.GrantKey {
	return kairos.GrantKey{UserKey: t.in.UserKey(), ThreadKey: t.in.ThreadKey(), Tool: call.Name,
		Target: kairos.NormalTarget(act.Target), Task: t.in.Turn == kairos.TurnTask}
}

// coveredByGrant returns the grant in force that covers the call (its
// use counted), or nil: then a human is asked.
func (a *Agent) coveredByGrant(ctx context.Context, t *turn, call kairos.ToolCall, act kairos.ToolAction) *kairos.Grant {
	if a.grantFloor(t, call, act) != "" {
		return nil
	}
	g, err := a.cfg.Grants.UseGrant(ctx, grantKey(t, call, act), a.cfg.Now())
	if err != nil {
		if kairos.ErrorCode(err) != kairos.ENOTFOUND {
			a.log.Warn("look up grant", "err", err)
		}
		return nil
	}
	return g
}

// keepGrant stores the grant an approval asked for, when the floor allows
// it and the asked user decided (an operator approves for once only). It
// reports whether the decision carried a grant scope to spend.
func (a *Agent) keepGrant(ctx context.Context, t *turn, call kairos.ToolCall, act kairos.ToolAction, dec kairos.Decision) bool {
	if dec.Outcome != kairos.DecisionApproved || dec.Scope == kairos.GrantOnce {
		return false
	}
	if why := a.grantFloor(t, call, act); why != "" || t.in.Turn != kairos.TurnUser || dec.By != t.in.UserKey() ||
		!kairos.ValidGrantScope(dec.Scope) {
		a.log.Warn("standing approval refused; approved once", "action", act.Name, "scope", dec.Scope, "by", dec.By, "why", why)
		return true
	}
	k := grantKey(t, call, act)
	g := &kairos.Grant{UserKey: k.UserKey, ThreadKey: k.ThreadKey, Tool: k.Tool, Action: act.Name, Target: k.Target,
		Label: orDefault(act.TargetLabel, k.Target), CreatedBy: dec.By, CreatedAt: a.cfg.Now()}
	if dec.Scope == kairos.GrantHour {
		g.ExpiresAt = g.CreatedAt.Add(kairos.GrantHourFor)
	}
	if err := a.cfg.Grants.SaveGrant(context.WithoutCancel(ctx), g); err != nil {
		a.log.Warn("save grant", "err", err)
		return true
	}
	a.log.Info("standing approval granted", "user_id", t.in.UserID, "thread", t.in.ThreadKey(), "tool", g.Tool,
		"target", g.Target, "scope", dec.Scope, "grant", g.ID)
	return true
}

// approvalRequest is what the human is asked: one sentence of what will
// happen, why, the details, and whether a standing grant may be offered.
func (a *Agent) approvalRequest(t *turn, call kairos.ToolCall, act kairos.ToolAction, reason string) *kairos.ApprovalRequest {
	req := &kairos.ApprovalRequest{ID: call.ID, ThreadKey: t.in.ThreadKey(), UserKey: t.in.UserKey(), Action: act.Name, Tool: call.Name,
		Summary: orDefault(act.Summary, callSentence(call)), Reason: reason, Detail: act.Detail,
		ExpiresAt: a.cfg.Now().Add(approvalTimeout(t.pol)), State: a.pausedState(t, call.ID)}
	if req.Detail == "" {
		req.Detail = argumentsDetail(call)
	}
	if t.env != nil {
		req.Zone = t.env.SessionTZ
	}
	why := a.grantFloor(t, call, act)
	switch {
	case t.in.Turn == kairos.TurnUser && why == "":
		req.Grantable, req.Target = true, kairos.NormalTarget(act.Target)
		req.TargetLabel = orDefault(act.TargetLabel, req.Target)
	case act.Target != "" && a.cfg.Grants != nil:
		req.NoGrant = why // a grant could exist for it, but not now
	}
	return req
}

// journalApproval is the approval outcome the tool-call journal records.
func journalApproval(dec kairos.Decision) string {
	if dec.Outcome == kairos.DecisionApproved && strings.HasPrefix(dec.By, GrantDecider) {
		return kairos.ApprovalGranted
	}
	return dec.Outcome
}

// callSentence is the sentence of a call whose tool wrote none.
func callSentence(c kairos.ToolCall) string {
	return "Call the tool " + c.Name + " (its arguments are below)?"
}

// argumentsDetail shows a call's arguments, indented, secrets redacted.
func argumentsDetail(c kairos.ToolCall) string {
	var v any
	if json.Unmarshal([]byte(redactArgs(c.Arguments)), &v) != nil {
		return kairos.Clip(c.Arguments, 2000)
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return ""
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return "Arguments:\n" + string(b)
}
