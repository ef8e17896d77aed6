package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
)

// Approvals that survive a crash (issue 13). When a tool call needs a
// human's yes, the turn pauses; its state goes with the approval request
// (kairos.ApprovalRequest.State), which the bot persists. If the process
// waiting for the answer dies, whoever later holds the decision calls
// Resume with that state: the step's tool calls run again through the
// same gate with the decisions already taken (so the approved call runs,
// a denied one is reported to the model), and the loop goes on from the
// next step. Nothing of the turn was persisted before the pause (the
// turn's messages are written at its end), so the resumed turn writes
// them once.

// paused is the part of a turn's state that only a pause needs.
type paused struct {
	msgs      []kairos.ChatMessage       // the conversation sent to the model
	step      int                        // the step whose tools are running
	asst      kairos.ChatMessage         // that step's assistant message
	stepCalls int                        // tool calls counted before the step
	decided   map[string]kairos.Decision // the step's decisions so far
	handedOff bool                       // another process continues the turn
	resumed   string                     // the call whose decision resumed the turn (logged when reached)
}

// pausedTurn is the persisted form (JSON) of a turn waiting for approval.
type pausedTurn struct {
	Version   int                        `json:"v"`
	In        *kairos.Inbound            `json:"in"`
	Env       *kairos.ClockEnvelope      `json:"env,omitempty"`
	SessionID string                     `json:"session_id"`
	Tainted   bool                       `json:"tainted,omitempty"`
	TaintedBy []string                   `json:"tainted_by,omitempty"`
	ToolCalls int                        `json:"tool_calls"`
	Tokens    int                        `json:"tokens"`
	ModeDirty bool                       `json:"mode_dirty,omitempty"`
	Pending   []*kairos.Message          `json:"pending"`
	Msgs      []kairos.ChatMessage       `json:"msgs"`
	Step      int                        `json:"step"`
	Asst      kairos.ChatMessage         `json:"asst"`
	Decided   map[string]kairos.Decision `json:"decided,omitempty"`
	CallID    string                     `json:"call_id"`
}

// toolStep runs one step's tool calls and appends their results to the
// conversation.
func (a *Agent) toolStep(ctx context.Context, t *turn, step int, tools []kairos.Tool, asst kairos.ChatMessage, decided map[string]kairos.Decision) error {
	t.step, t.asst, t.stepCalls, t.decided = step, asst, t.toolCalls, decided
	t.out.Typing(ctx)
	results := a.runTools(ctx, t, tools, asst)
	if t.handedOff {
		return kairos.ErrHandedOff
	}
	for i, call := range asst.ToolCalls {
		r := results[i]
		t.msgs = append(t.msgs, kairos.ChatMessage{Role: kairos.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: r.content})
		t.pending = append(t.pending, &kairos.Message{SessionID: t.sess.ID, ThreadKey: t.in.ThreadKey(), Role: kairos.RoleTool,
			ToolCallID: call.ID, Name: call.Name, Content: r.content, Tainted: r.tainted, CreatedAt: t.in.Date})
	}
	t.decided = nil
	return nil
}

// remember keeps a decision of the running step (it travels with a later
// pause of the same step).
func (t *turn) remember(callID string, dec *kairos.Decision) {
	if t.decided == nil {
		t.decided = map[string]kairos.Decision{}
	}
	t.decided[callID] = *dec
}

// pausedState records the turn as it waits for the decision on callID.
func (a *Agent) pausedState(t *turn, callID string) []byte {
	in := *t.in
	// Media was read into the turn already (the conversation holds it);
	// the raw files are not kept.
	in.Attachments, in.Images, in.Documents = nil, nil, nil
	p := pausedTurn{Version: 1, In: &in, Env: t.env, SessionID: t.sess.ID, Tainted: t.tainted, TaintedBy: t.taintedBy, ToolCalls: t.stepCalls,
		Tokens: t.tokens, ModeDirty: t.modeDirty, Pending: t.pending, Msgs: t.msgs, Step: t.step, Asst: t.asst,
		Decided: t.decided, CallID: callID}
	b, err := json.Marshal(p)
	if err != nil {
		a.log.Warn("record paused turn", "err", err)
		return nil
	}
	return b
}

// Resume finishes a turn that paused for approval, from its persisted
// state, once the decision is known: the step's calls run with the
// decision, the model goes on, and the answer goes to out.
func (a *Agent) Resume(ctx context.Context, state []byte, dec kairos.Decision, out kairos.Replier) error {
	var p pausedTurn
	if err := json.Unmarshal(state, &p); err != nil || p.Version != 1 || p.In == nil {
		return kairos.Errorf(kairos.EINVALID, "the paused turn cannot be read (version %d): %v", p.Version, err)
	}
	sess, err := a.cfg.Sessions.FindSession(ctx, p.SessionID)
	if err != nil {
		return fmt.Errorf("resume turn: %w", err)
	}
	t := &turn{in: p.In, env: p.Env, sess: sess, pol: a.cfg.Policy(), out: out, start: time.Now(), tainted: p.Tainted, taintedBy: p.TaintedBy, toolCalls: p.ToolCalls,
		tokens: p.Tokens, modeDirty: p.ModeDirty, pending: p.Pending}
	t.msgs = p.Msgs
	ctx, t.hooks = kairos.WithTurnHooks(ctx)
	t.tm = a.modeState(ctx, t)
	t.mode = t.tm.Mode
	var tools []kairos.Tool
	if a.cfg.Tools != nil {
		tools = a.offeredTools(t)
	}
	decided := map[string]kairos.Decision{}
	for k, v := range p.Decided {
		decided[k] = v
	}
	decided[p.CallID] = dec
	t.resumed = p.CallID
	err = a.toolStep(ctx, t, p.Step, tools, p.Asst, decided)
	t.offered = nil // the tools may have changed the mode or the skills
	if err != nil {
		return a.finish(ctx, t, "", err)
	}
	answer, err := a.loop(ctx, t, p.Step+1)
	return a.finish(ctx, t, answer, err)
}
