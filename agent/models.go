package agent

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/kairos-agent/kairos"
)

// toolModes remembers, for the life of the process, the models whose
// server refused native tools: they are prompted from then on.
type toolModes struct{ m sync.Map }

func (tm *toolModes) prompted(model string) bool {
	_, ok := tm.m.Load(model)
	return ok
}

func (tm *toolModes) setPrompted(model string) { tm.m.Store(model, true) }

// ToolMode returns how tools are offered to model under p: the policy's
// models.<name>.tool_calling, else prompted when the server refused
// native tools earlier, else native.
func (a *Agent) ToolMode(p *kairos.Policy, model string) string {
	spec, _ := p.Model(model)
	if spec.ToolCalling == "" && a.modes.prompted(model) {
		return kairos.ToolCallingPrompted
	}
	return spec.ToolMode()
}

// callModel sends one request to one model in its tool mode. A server
// that refuses native tools switches the model to prompted mode and is
// asked again at once; a context-length refusal compacts the turn's
// history and asks again once. Other failures are returned as they are.
func (a *Agent) callModel(ctx context.Context, t *turn, req kairos.ChatRequest) (*kairos.ChatResponse, error) {
	spec, _ := t.pol.Model(req.Model)
	if spec.MaxOutputTokens > 0 && (req.MaxTokens == 0 || req.MaxTokens > spec.MaxOutputTokens) {
		req.MaxTokens = spec.MaxOutputTokens
	}
	// Where thoughts begin: the adapter shows no streamed text before it
	// is known not to be one.
	req.Thinking = spec.Thinking
	switched, compacted := false, false
	for {
		mode := a.ToolMode(t.pol, req.Model)
		resp, err := a.send(ctx, t, req, mode)
		switch kind := kairos.ProviderKind(err); {
		case err == nil:
			return resp, nil
		case kind == kairos.ProviderNoTools && mode == kairos.ToolCallingNative && !switched:
			a.log.Warn("the server refused native tools; using prompted tool calling for this model from now on", "model", req.Model)
			a.modes.setPrompted(req.Model)
			switched = true
		case kind == kairos.ProviderContextLength && !compacted:
			a.learnWindow(req.Model, contextWindowOf(err))
			smaller, ok := compactHistory(req.Messages, contextWindowOf(err))
			if !ok {
				return nil, err
			}
			a.log.Warn("the prompt exceeded the model's context window; dropped the oldest turns", "model", req.Model,
				"messages_before", len(req.Messages), "messages_after", len(smaller))
			if sameMessages(req.Messages, t.msgs) {
				t.msgs = smaller
			}
			req.Messages = smaller
			compacted = true
		default:
			return nil, err
		}
	}
}

// send shapes the request for the mode and reads a prompted answer back
// into native tool calls.
func (a *Agent) send(ctx context.Context, t *turn, req kairos.ChatRequest, mode string) (*kairos.ChatResponse, error) {
	onDelta := func(text string) { t.out.Partial(ctx, text) }
	if mode == kairos.ToolCallingOff {
		req.Tools = nil
	}
	if mode == kairos.ToolCallingNative {
		resp, err := a.cfg.Model.Chat(ctx, req, func(text string) {
			if len(req.Tools) == 0 || !startsLikeCall(text) {
				onDelta(text)
			}
		})
		if err == nil && len(resp.Message.ToolCalls) == 0 && len(req.Tools) > 0 {
			// Small models behind servers with native tools often write
			// the call as text instead (Ollama's llama3.2 does): a call
			// to a tool on offer is taken as the call it meant to be.
			readTextCalls(resp, req.Tools)
		}
		return resp, err
	}
	tools := req.Tools
	sent := promptedRequest(req)
	resp, err := a.cfg.Model.Chat(ctx, sent, func(text string) {
		if v := promptedVisible(text); v != "" {
			t.out.Partial(ctx, v)
		}
	})
	if err != nil {
		return resp, err
	}
	if len(tools) == 0 {
		// No tools on this step (the budget is spent), but the history
		// shows calls and a small model may write one anyway: it is not
		// run, and the user does not see it.
		if visible, calls := parsePromptedCalls(resp.Message.Content, nil); len(calls) > 0 {
			resp.Message.Content = visible
		}
		return resp, nil
	}
	readTextCalls(resp, tools)
	return resp, nil
}

// readTextCalls turns the calls written in an answer's text into tool
// calls; outside <tool_call> tags only tools on offer count.
func readTextCalls(resp *kairos.ChatResponse, tools []kairos.ToolSpec) {
	known := func(name string) bool {
		for _, s := range tools {
			if s.Name == name {
				return true
			}
		}
		return false
	}
	visible, calls := parsePromptedCalls(resp.Message.Content, known)
	if len(calls) > 0 {
		resp.Message.Content, resp.Message.ToolCalls = visible, calls
		resp.FinishReason = "tool_calls"
	}
}

func contextWindowOf(err error) int {
	var pe *kairos.ProviderError
	if errors.As(err, &pe) {
		return pe.ContextWindow
	}
	return 0
}

func sameMessages(a, b []kairos.ChatMessage) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// compactHistory drops the oldest turns of the history between the
// system prompt (which holds the session summary) and the current turn,
// which starts at the last user message. With a known window it drops
// until the estimate fits three quarters of it, else half of the history;
// whole turns only. It reports false when there is nothing to drop.
func compactHistory(msgs []kairos.ChatMessage, window int) ([]kairos.ChatMessage, bool) {
	if len(msgs) < 3 || msgs[0].Role != kairos.RoleSystem {
		return msgs, false
	}
	current := -1
	for i := len(msgs) - 1; i > 0; i-- {
		if msgs[i].Role == kairos.RoleUser && !strings.HasPrefix(msgs[i].Content, "<tool_response>") {
			current = i
			break
		}
	}
	if current <= 1 {
		return msgs, false
	}
	// Turn starts within the history (user messages), oldest first.
	var starts []int
	for i := 1; i < current; i++ {
		if msgs[i].Role == kairos.RoleUser {
			starts = append(starts, i)
		}
	}
	cut := current // drop everything before the current turn by default
	if window > 0 {
		budget := window * 3 / 4
		for _, s := range append(starts, current) {
			if messagesTokens(msgs[:1])+messagesTokens(msgs[s:]) <= budget {
				cut = s
				break
			}
		}
	} else if len(starts) > 1 {
		cut = starts[len(starts)/2]
	}
	out := make([]kairos.ChatMessage, 0, 1+len(msgs)-cut)
	out = append(out, msgs[0])
	out = append(out, msgs[cut:]...)
	return out, true
}

func messagesTokens(msgs []kairos.ChatMessage) int {
	n := 0
	for _, m := range msgs {
		n += EstimateTokens(m.Content) + EstimateTokens(toolCallsText(m.ToolCalls)) + 4
	}
	return n
}

// startsLikeCall reports whether a streamed answer begins the way a call
// written as text does (then it is not shown while it streams).
func startsLikeCall(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range []string{"{", "[{", "<tool_call", "[TOOL_CALLS", "<|python_tag", "```json\n{\"name\""} {
		if strings.HasPrefix(t, p) || strings.HasPrefix(p, t) && t != "" {
			return true
		}
	}
	return false
}
