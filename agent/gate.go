package agent

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// Mode gate: how seed 002's machine drives a turn.
//
//   - A thread starts in DISCUSS with the explore envelope; an idle thread
//     (agent.mode_timeout) falls back to DISCUSS.
//   - A message classified as action moves DISCUSS → DIAGNOSE before the
//     model runs (always allowed).
//   - The model is offered the tools that have at least one action allowed
//     by the envelopes usable in the thread's mode.
//   - A call whose action the mode does not allow: if DIAGNOSE allows it,
//     the thread advances (journaled); if only EXECUTE does, a human is
//     asked, and the approval is the token that enters EXECUTE.
//   - A turn that ended in EXECUTE leaves it with a summary of the answer.

// modeState loads the thread's mode, applying the idle timeout.
func (a *Agent) modeState(ctx context.Context, t *turn) *kairos.ThreadMode {
	tm := &kairos.ThreadMode{ThreadKey: t.in.ThreadKey(), Mode: string(ModeDiscuss), Envelope: string(DefaultEnvelope),
		SessionID: t.sess.ID, UpdatedAt: t.in.Date}
	if a.cfg.Modes == nil {
		return tm
	}
	cur, err := a.cfg.Modes.ThreadMode(ctx, t.in.ThreadKey())
	if err != nil {
		if kairos.ErrorCode(err) != kairos.ENOTFOUND {
			a.log.Warn("load thread mode", "err", err)
		}
		return tm
	}
	tm = cur
	tm.SessionID = t.sess.ID
	if d := t.pol.Agent.ModeTimeout.Approx(); d > 0 && Mode(tm.Mode) != ModeDiscuss &&
		t.in.Date.Sub(tm.UpdatedAt) >= d {
		a.transition(ctx, t, tm, ModeDiscuss, TransitionInput{Actor: "system", At: t.in.Date, Timeout: true})
	}
	return tm
}

// transition applies and journals a mode change; refused changes are
// returned as errors.
func (a *Agent) transition(ctx context.Context, t *turn, tm *kairos.ThreadMode, to Mode, in TransitionInput) error {
	mt, err := Transition(Mode(tm.Mode), to, in)
	if err != nil {
		return err
	}
	tm.Mode = string(to)
	tm.Envelope = string(FitEnvelope(to, EnvelopeID(tm.Envelope)))
	tm.UpdatedAt = in.At
	t.mode = tm.Mode
	t.modeDirty = true
	if a.cfg.Modes != nil {
		rec := &kairos.ModeTransitionRecord{ThreadKey: tm.ThreadKey, From: string(mt.From), To: string(mt.To), Cause: mt.Cause,
			Actor: mt.Actor, ApprovalToken: mt.ApprovalToken, Summary: kairos.Clip(mt.Summary, 500), At: in.At}
		if err := a.cfg.Modes.SetThreadMode(ctx, tm, rec); err != nil {
			a.log.Warn("store thread mode", "err", err)
		}
	}
	return nil
}

// touchMode keeps the thread's mode alive (the idle timeout counts from
// the last turn) and records the envelope in force.
func (a *Agent) touchMode(ctx context.Context, t *turn) {
	if a.cfg.Modes == nil || t.tm == nil {
		return
	}
	// DISCUSS has no timeout to refresh: skip the write unless this turn
	// changed the envelope or the mode.
	if Mode(t.tm.Mode) == ModeDiscuss && !t.modeDirty {
		return
	}
	t.tm.UpdatedAt = t.in.Date
	if err := a.cfg.Modes.SetThreadMode(ctx, t.tm, nil); err != nil {
		a.log.Warn("store thread mode", "err", err)
	}
}

// allowedActions is the union of the actions of the envelopes usable in
// the mode.
func allowedActions(mode Mode) map[string]bool {
	out := map[string]bool{}
	for _, id := range EnvelopesForMode(mode) {
		for act := range AllowedActions(mode, id) {
			out[act] = true
		}
	}
	return out
}

// envelopeFor names the envelope, usable in mode, that grants the action
// (the current one when it does).
func envelopeFor(mode Mode, cur EnvelopeID, action string) EnvelopeID {
	if AllowedActions(mode, cur)[action] {
		return cur
	}
	for _, id := range EnvelopesForMode(mode) {
		if AllowedActions(mode, id)[action] {
			return id
		}
	}
	return ""
}

// toolOffered reports whether any of a tool's actions is allowed. A tool
// that performs one action it declares (an MCP tool, a skill__<name>
// tool) is offered by that action; in DISCUSS it
// is offered also when DIAGNOSE grants that action, as the memory tool
// (whose forget lives in DIAGNOSE's edit envelope) is: the gate moves the
// thread to DIAGNOSE on the call, and approvals still apply.
func toolOffered(mode Mode, allowed map[string]bool, tl kairos.Tool) bool {
	if ext, ok := tl.(interface{ OfferedAction() string }); ok {
		act := ext.OfferedAction()
		return allowed[act] || (mode == ModeDiscuss && allowedActions(ModeDiagnose)[act])
	}
	tool := tl.Spec().Name
	for act := range allowed {
		if act == tool || strings.HasPrefix(act, tool+".") {
			return true
		}
	}
	return false
}

// gate checks a call's action against the mode machine. It returns
// whether the call may run, the outcome of the approval a human was asked
// for on the way (entering EXECUTE; "" when none was asked) and, when the
// call may not run, why.
func (a *Agent) gate(ctx context.Context, t *turn, call kairos.ToolCall, act kairos.ToolAction) (ok bool, approval, why string) {
	if a.cfg.Modes == nil || t.tm == nil {
		return true, "", ""
	}
	mode := Mode(t.tm.Mode)
	if !allowedActions(mode)[act.Name] {
		switch {
		case mode == ModeDiscuss && allowedActions(ModeDiagnose)[act.Name]:
			if err := a.transition(ctx, t, t.tm, ModeDiagnose, TransitionInput{Actor: "agent", At: t.in.Date}); err != nil {
				return false, "", kairos.ErrorMessage(err)
			}
		case allowedActions(ModeExecute)[act.Name]:
			if mode == ModeDiscuss {
				if err := a.transition(ctx, t, t.tm, ModeDiagnose, TransitionInput{Actor: "agent", At: t.in.Date}); err != nil {
					return false, "", kairos.ErrorMessage(err)
				}
			}
			dec := a.ask(ctx, t, call, act, "entering EXECUTE mode: "+orDefault(act.Reason, act.Name))
			if dec.Outcome != kairos.DecisionApproved {
				return false, dec.Outcome, notApproved(act.Name, dec.Outcome)
			}
			if err := a.transition(ctx, t, t.tm, ModeExecute, TransitionInput{Actor: dec.By, At: t.in.Date, ApprovalToken: call.ID}); err != nil {
				return false, dec.Outcome, kairos.ErrorMessage(err)
			}
			approval = journalApproval(dec)
		default:
			return false, "", fmt.Sprintf("%s is not available to you", act.Name)
		}
		mode = Mode(t.tm.Mode)
	}
	if env := envelopeFor(mode, EnvelopeID(t.tm.Envelope), act.Name); env != "" && env != EnvelopeID(t.tm.Envelope) {
		cur, _ := LookupEnvelope(EnvelopeID(t.tm.Envelope))
		t.modeDirty = true
		if res, err := Hop(cur, HopRequest{To: env, Reason: "agent-request", SessionID: t.sess.ID, Mode: mode, At: t.in.Date}); err == nil {
			t.tm.Envelope, t.tm.SessionID = string(res.To), res.SessionID
		} else {
			// The action is granted by the mode; the hop table only
			// decides which envelope the journal names.
			t.tm.Envelope = string(env)
		}
	}
	return true, approval, ""
}

// leaveExecute ends a turn that entered EXECUTE: the answer's summary is
// the exit condition.
func (a *Agent) leaveExecute(ctx context.Context, t *turn, answer string) {
	if t.tm == nil || Mode(t.tm.Mode) != ModeExecute {
		return
	}
	if err := a.transition(ctx, t, t.tm, ModeDiscuss, TransitionInput{Actor: "agent", At: t.in.Date, Summary: "Answered: " + kairos.Clip(answer, 300)}); err != nil {
		a.log.Warn("leave EXECUTE", "err", err)
	}
}

// ModeCommand is /mode: show the thread's mode, or change it
// (`/mode diagnose`, `/mode execute` — the user's own command is the
// approval —, `/mode exit <summary>`, `/mode reset`).
func (a *Agent) ModeCommand(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
	if a.cfg.Modes == nil {
		return "", kairos.Errorf(kairos.EINVALID, "Modes are not enabled.")
	}
	sess, err := a.cfg.Sessions.OpenSession(ctx, in.ThreadKey(), in.UserKey(), in.Date)
	if err != nil {
		return "", err
	}
	t := &turn{in: in, sess: sess, pol: a.cfg.Policy()}
	tm := a.modeState(ctx, t)
	t.tm = tm
	verb, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	in2 := TransitionInput{Actor: in.UserKey(), At: in.Date}
	switch strings.ToLower(verb) {
	case "":
		var next []string
		for m, need := range NextModes(Mode(tm.Mode)) {
			next = append(next, fmt.Sprintf("%s (needs %s)", m, need))
		}
		sort.Strings(next)
		acts := allowedActions(Mode(tm.Mode))
		var names []string
		for n := range acts {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Sprintf("Mode: *%s*, envelope: *%s*\nAllowed: %s\nNext: %s\nChange with /mode diagnose, /mode execute, /mode exit <summary>, /mode reset.",
			tm.Mode, tm.Envelope, strings.Join(names, ", "), strings.Join(next, "; ")), nil
	case "reset", "discuss":
		in2.Reset = true
		err = a.transition(ctx, t, tm, ModeDiscuss, in2)
	case "diagnose":
		err = a.transition(ctx, t, tm, ModeDiagnose, in2)
	case "execute":
		in2.ApprovalToken = "command:" + in.UserKey() + ":" + in.Date.Format(time.RFC3339)
		err = a.transition(ctx, t, tm, ModeExecute, in2)
	case "exit":
		in2.Summary = rest
		err = a.transition(ctx, t, tm, ModeDiscuss, in2)
	default:
		return "", kairos.Errorf(kairos.EINVALID, "Unknown mode command %q. Use /mode, /mode diagnose, /mode execute, /mode exit <summary> or /mode reset.", verb)
	}
	if err != nil {
		return "", err
	}
	return "Mode is now *" + tm.Mode + "*.", nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
