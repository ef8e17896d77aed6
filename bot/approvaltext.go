package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// What an approval request says, and what it says once decided.
//
//	Approval needed
//	Forget the memory ‘prefers tea’ (saved Tuesday)?
//	Why: the policy requires approval for memory.forget
//	Allow 1h and Always here cover forgetting any of your memories, in this chat.
//	<the details: arguments, code, a diff; a document when long>
//	Answer by 14:32 (Europe/Lisbon); no answer means no.
//
// Once decided the buttons go and a line says who decided, how and when:
// "✅ Approved once by Ana at 14:25", "⌛ Expired at 14:32 with no answer:
// not done".

// Callback data of the approval buttons: "ap:<id>:<choice>".
const (
	choiceOnce   = "y"
	choiceHour   = "h"
	choiceAlways = "a"
	choiceDeny   = "n"
)

// choiceScope maps a button's choice to its outcome and grant scope.
var choiceScope = map[string]struct{ outcome, scope string }{
	choiceOnce:   {kairos.DecisionApproved, kairos.GrantOnce},
	choiceHour:   {kairos.DecisionApproved, kairos.GrantHour},
	choiceAlways: {kairos.DecisionApproved, kairos.GrantAlways},
	choiceDeny:   {kairos.DecisionDenied, kairos.GrantOnce},
}

// approvalKeyboard is Approve · Allow 1h · Always here · Deny, or Approve
// · Deny where no standing grant may be offered.
func approvalKeyboard(id string, grantable bool) inlineKeyboard {
	btn := func(text, choice string) inlineButton {
		return inlineButton{Text: text, CallbackData: "ap:" + id + ":" + choice}
	}
	if !grantable {
		return inlineKeyboard{InlineKeyboard: [][]inlineButton{{btn("Approve", choiceOnce), btn("Deny", choiceDeny)}}}
	}
	return inlineKeyboard{InlineKeyboard: [][]inlineButton{
		{btn("Approve", choiceOnce), btn("Allow 1h", choiceHour)},
		{btn("Always here", choiceAlways), btn("Deny", choiceDeny)},
	}}
}

// approvalText is the request's message (HTML).
func (b *Bot) approvalText(ctx context.Context, in *kairos.Inbound, id string, req *kairos.ApprovalRequest) string {
	var s strings.Builder
	fmt.Fprintf(&s, "<b>Approval needed</b>\n%s\n<i>Why:</i> %s\n", escape(req.Summary), escape(req.Reason))
	if req.Grantable {
		fmt.Fprintf(&s, "<i>Allow 1h</i> and <i>Always here</i> cover %s, in this chat.\n", escape(req.TargetLabel))
	} else if req.NoGrant != "" {
		fmt.Fprintf(&s, "<i>Once only:</i> %s.\n", escape(req.NoGrant))
	}
	s.WriteString(b.approvalDetail(ctx, in, id, req.Detail))
	fmt.Fprintf(&s, "Answer by %s; no answer means no.", clockTime(req.ExpiresAt, req.Zone, b.cfg.Now()))
	return s.String()
}

// clockTime shows t as a clock time in zone (UTC when unknown), with the
// day when it is not today there.
func clockTime(t time.Time, zone string, now time.Time) string {
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil {
		loc, zone = time.UTC, "UTC"
	}
	lt := t.In(loc)
	if y, m, d := lt.Date(); func() bool { ny, nm, nd := now.In(loc).Date(); return y == ny && m == nm && d == nd }() {
		return lt.Format("15:04") + " (" + zone + ")"
	}
	return lt.Format("Mon 2 Jan 15:04") + " (" + zone + ")"
}

// decidedLine says who decided a request, how and when.
func decidedLine(dec kairos.Decision, zone string, now time.Time) string {
	at := dec.At
	if at.IsZero() {
		at = now
	}
	when := clockTime(at, zone, now)
	switch {
	case dec.Outcome == kairos.DecisionExpired:
		return "⌛ Expired at " + when + " with no answer: not done."
	case dec.Outcome == kairos.DecisionDenied:
		return "❌ Denied by " + decider(dec) + " at " + when + "."
	case dec.Scope == kairos.GrantHour:
		return "✅ Approved by " + decider(dec) + " at " + when + ", and allowed here for an hour (/grants to revoke)."
	case dec.Scope == kairos.GrantAlways:
		return "✅ Approved by " + decider(dec) + " at " + when + ", and always allowed here (/grants to revoke)."
	}
	return "✅ Approved once by " + decider(dec) + " at " + when + "."
}

// decider names who decided, in words.
func decider(dec kairos.Decision) string {
	kind, rest, _ := strings.Cut(dec.By, ":")
	switch kind {
	case kairos.ChannelTelegram:
		if dec.ByName != "" {
			return escape(dec.ByName)
		}
		return "user " + escape(rest)
	case "console":
		return "operator " + escape(rest) + " in the console"
	case "token":
		return "the API token " + escape(rest)
	case kairos.ChannelCLI:
		return "the terminal's user"
	case "":
		return "nobody"
	}
	return escape(dec.By)
}

// choiceAnswer is the toast a decision shows.
func choiceAnswer(outcome, scope string) string {
	switch {
	case outcome == kairos.DecisionDenied:
		return "Denied."
	case scope == kairos.GrantHour:
		return "Approved, and allowed here for an hour."
	case scope == kairos.GrantAlways:
		return "Approved, and always allowed here."
	}
	return "Approved."
}

// parseApprovalData reads "ap:<id>:<choice>"; ok is false for anything
// else.
func parseApprovalData(data string) (id, choice string, ok bool) {
	parts := strings.Split(data, ":")
	if len(parts) != 3 || parts[0] != "ap" || parts[1] == "" {
		return "", "", false
	}
	if _, known := choiceScope[parts[2]]; !known {
		return "", "", false
	}
	return parts[1], parts[2], true
}
