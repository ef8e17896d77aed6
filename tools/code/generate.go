package code

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/fit"
	"github.com/kairos-agent/kairos/tools/cell"
)

// coderMaxTokens bounds one answer of the coding model.
const coderMaxTokens = 2048

// CoderPrompt returns the system prompt of generate's coding call: the
// cell's globals, only those the policy and the secrets enable.
func CoderPrompt(p *kairos.Policy, secretNames []string) string {
	g := cell.GrantFor(p)
	var b strings.Builder
	b.WriteString("You write JavaScript (ES2023) for a sandboxed QuickJS cell. Top-level await works. ")
	b.WriteString("There is no filesystem, no import/require, no process, no DOM")
	if !g.Enabled {
		b.WriteString(", no network")
	}
	b.WriteString(".\nGlobals:\n")
	b.WriteString("- output(data): returns the result as JSON; always call it (the last call wins)\n")
	b.WriteString("- console.log(...): debug text only\n")
	b.WriteString("- sleep(ms): await a delay\n")
	b.WriteString("- checkpoint({cursor, stage, completed, state}): save progress when the work cannot finish in time; the next run sees it as `resume`\n")
	if len(secretNames) > 0 {
		fmt.Fprintf(&b, "- listSecrets(); getSecret(name): a secret for API calls, never print it. Secrets: %s\n", listOrNone(secretNames, 10))
	}
	if g.Enabled && len(secretNames) > 0 {
		b.WriteString("- getJSON(url, authSecret?), postJSON(url, body, authSecret?): JSON over HTTP; authSecret is a secret's name\n")
		b.WriteString("- fetchWithAuth(url, {method, headers, body, authSecret}): a Response with ok, status, text(), json()\n")
	} else if g.Enabled {
		b.WriteString("- getJSON(url), postJSON(url, body): JSON over HTTP\n")
		b.WriteString("- fetch(url, {method, headers, body}): a Response with ok, status, text(), json()\n")
	}
	if g.Enabled {
		fmt.Fprintf(&b, "Network: %s only; allowed hosts: %s.\n", strings.Join(g.Methods, "/"), listOrNone(g.AllowHosts, 20))
	}
	b.WriteString("Answer with the complete program in one ```javascript block and nothing else.")
	return b.String()
}

var fenceRE = regexp.MustCompile("(?s)```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:\n[ \t]*```|$)")

// ExtractCode returns the code of a model's answer: the first fenced block
// (```js, ```javascript, ``` …; an unclosed fence runs to the end), or the
// whole answer when it has no fence.
func ExtractCode(answer string) string {
	if m := fenceRE.FindStringSubmatch(answer); m != nil {
		return strings.TrimSpace(m[2])
	}
	return strings.TrimSpace(answer)
}

// generate asks the coding model for code, runs it and feeds failures
// back, up to MaxAttempts attempts.
func (t *Tool) generate(ctx context.Context, inv *kairos.ToolInvocation, a *args) (*response, error) {
	pol := t.pol()
	user := "Task: " + t.red.Scrub(a.Task)
	if strings.TrimSpace(a.Context) != "" {
		user += "\n\nContext:\n" + t.red.Scrub(a.Context)
	}
	msgs := []kairos.ChatMessage{
		{Role: kairos.RoleSystem, Content: CoderPrompt(pol, t.secretNames(pol))},
		{Role: kairos.RoleUser, Content: user},
	}
	model := ""
	if t.coder != nil {
		model = t.coder()
	}
	var last *response
	for attempt := 1; attempt <= MaxAttempts; attempt++ {
		resp, err := t.model.Chat(ctx, kairos.ChatRequest{Model: model, Messages: t.fit(pol, model, msgs), MaxTokens: coderMaxTokens}, nil)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if last != nil {
				last.Note = "the coding model failed on attempt " + fmt.Sprint(attempt) + ": " + kairos.ErrorMessage(err)
				return last, nil
			}
			if kairos.ErrorCode(err) == kairos.EINTERNAL {
				return nil, kairos.Errorf(kairos.EUNAVAILABLE, "the coding model failed: %s", t.red.Scrub(err.Error()))
			}
			return nil, err
		}
		answer := resp.Message.Content
		code := t.red.Scrub(ExtractCode(answer))
		msgs = append(msgs, kairos.ChatMessage{Role: kairos.RoleAssistant, Content: kairos.Clip(answer, MaxCodeBytes)})
		if code == "" || len(code) > MaxCodeBytes {
			last = &response{Success: false, Attempts: attempt, Error: "the coding model wrote no usable code"}
			msgs = append(msgs, kairos.ChatMessage{Role: kairos.RoleUser, Content: "There was no usable code in your answer. Answer with the complete program in one ```javascript block."})
			continue
		}
		if c := t.classify(pol, code); c.action.Impactful {
			// Running it needs the approval that execute asks for.
			return &response{Success: false, Code: code, Attempts: attempt,
				Error: c.action.Reason + ", which needs approval: run it with action execute and this code"}, nil
		}
		reasoning := strings.TrimSpace(inv.Reasoning + fmt.Sprintf("\n\n[generate attempt %d/%d] %s", attempt, MaxAttempts, kairos.Clip(a.Task, 1000)))
		r, err := t.execute(ctx, inv, run{code: code, timeoutMS: a.TimeoutMS, reasoning: reasoning})
		if err != nil {
			return nil, err
		}
		r.Code, r.Attempts = code, attempt
		last = r
		if r.Success || r.Status == StatusRunning || r.Checkpoint != nil {
			return r, nil
		}
		msgs = append(msgs, kairos.ChatMessage{Role: kairos.RoleUser, Content: feedback(r)})
	}
	return last, nil
}

// fit fits a coding call into the model's context window (the policy's;
// unknown: unchanged): earlier attempts go first, keeping the latest
// answer and its feedback; then the task's message is cut at its end
// (the task comes before its context), the latest answer and feedback
// at their start. The system prompt stays whole.
func (t *Tool) fit(pol *kairos.Policy, model string, msgs []kairos.ChatMessage) []kairos.ChatMessage {
	room := fit.WindowRoom(pol, model, coderMaxTokens)
	if room == 0 {
		return msgs
	}
	count := fit.Estimate
	if t.count != nil {
		count = func(s string) int { return t.count(model, s) }
	}
	total := func(ms []kairos.ChatMessage) int {
		n := 0
		for _, m := range ms {
			n += count(m.Content) + 4
		}
		return n
	}
	out := append([]kairos.ChatMessage(nil), msgs...)
	for len(out) > 4 && total(out) > room {
		out = append(out[:2:2], out[4:]...)
	}
	// The task's message first, to at most half of what the system prompt
	// leaves when an attempt follows; then, while still over, the latest
	// answer (its code), the task's message, the feedback.
	order := []int{1}
	if len(out) > 2 {
		half := (room - count(out[0].Content)) / 2
		if total(out) > room {
			out[1].Content = fit.Head(out[1].Content, half, count)
		}
		order = []int{2, 1, 3}
	}
	for _, i := range order {
		over := total(out) - room
		if over <= 0 {
			break
		}
		if i >= len(out) {
			continue
		}
		if keep := count(out[i].Content) - over; i == 1 {
			out[i].Content = fit.Head(out[i].Content, keep, count)
		} else {
			out[i].Content = fit.Tail(out[i].Content, keep, count)
		}
	}
	return out
}

// feedback tells the coding model how its code failed.
func feedback(r *response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The code failed (%s): %s\n", r.ErrorCategory, clipTail(r.Error, 1500))
	if len(r.Result) > 0 {
		fmt.Fprintf(&b, "Its output before failing: %s\n", kairos.Clip(string(r.Result), 500))
	}
	b.WriteString("Fix it. Answer with the complete corrected program in one ```javascript block.")
	return b.String()
}
