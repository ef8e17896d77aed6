package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// pausingReplier approves the first request and, at the second, takes the
// turn's state and reports the turn handed off (as the bot does when the
// process is stopping or another replica took the continuation).
type pausingReplier struct {
	mock.Replier
	state []byte
}

func newPausingReplier() *pausingReplier {
	p := &pausingReplier{}
	p.ApproveFn = func(n int, req *kairos.ApprovalRequest) (kairos.Decision, error) {
		if n == 1 {
			return kairos.Decision{Outcome: kairos.DecisionApproved, By: "telegram:1"}, nil
		}
		p.state = req.State
		return kairos.Decision{Outcome: kairos.DecisionDenied}, kairos.ErrHandedOff
	}
	return p
}

// TestResumePausedTurn pauses a turn at the second of two impactful calls
// of one step and resumes it from the recorded state: the first call's
// decision is reused (not asked again), each call runs at most once, the
// model goes on from the tool results, and the turn is persisted once.
func TestResumePausedTurn(t *testing.T) {
	for _, tc := range []struct {
		decide   string
		wantRuns int32
		second   string
	}{
		{kairos.DecisionApproved, 2, `"success":true`},
		{kairos.DecisionDenied, 1, "did not approve memory.forget (denied)"},
	} {
		t.Run(tc.decide, func(t *testing.T) {
			forget := &echoTool{name: "forget", impactful: true}
			h := newHarness(t, []string{"m1"}, false, forget)
			h.llm.Enqueue(testkit.ToolReply(
				testkit.ToolCall{ID: "c1", Name: "forget", Arguments: `{"text":"a"}`},
				testkit.ToolCall{ID: "c2", Name: "forget", Arguments: `{"text":"b"}`}))
			ctx := context.Background()
			first := newPausingReplier()
			if err := h.agent.HandleMessage(ctx, dm("forget a and b"), first); err != nil {
				t.Fatal(err)
			}
			if first.Finals() != 0 || len(first.state) == 0 || forget.calls.Load() != 0 {
				t.Fatalf("paused turn: finals %d, state %d bytes, runs %d", first.Finals(), len(first.state), forget.calls.Load())
			}
			sess, _ := h.sessions.OpenSession(ctx, dm("").ThreadKey(), "", time.Now())
			if msgs, _ := h.sessions.Messages(ctx, sess.ID, 0, 0); len(msgs) != 0 {
				t.Fatalf("the paused turn wrote %d messages", len(msgs))
			}

			h.llm.Enqueue(testkit.TextReply("all done"))
			second := &mock.Replier{Decide: kairos.DecisionDenied}
			if err := h.agent.Resume(ctx, first.state, kairos.Decision{Outcome: tc.decide, By: "telegram:1"}, second); err != nil {
				t.Fatal(err)
			}
			if second.Text() != "all done" || second.Finals() != 1 || len(second.Approvals()) != 0 {
				t.Fatalf("resumed: final %q ×%d, asked again %d times", second.Text(), second.Finals(), len(second.Approvals()))
			}
			if forget.calls.Load() != tc.wantRuns {
				t.Fatalf("forget ran %d times, want %d", forget.calls.Load(), tc.wantRuns)
			}
			res := h.llm.LastRequest().ToolResults()
			if len(res) != 2 || !strings.Contains(res[0].Content, `"success":true`) || !strings.Contains(res[1].Content, tc.second) {
				t.Fatalf("tool results after the resume = %+v", res)
			}
			msgs, _ := h.sessions.Messages(ctx, sess.ID, 0, 0)
			var roles []string
			for _, m := range msgs {
				roles = append(roles, m.Role)
			}
			if strings.Join(roles, ",") != "user,assistant,tool,tool,assistant" {
				t.Fatalf("persisted turn = %v", roles)
			}
			if err := h.agent.Resume(ctx, []byte(`{"v":9}`), kairos.Decision{Outcome: tc.decide}, second); kairos.ErrorCode(err) != kairos.EINVALID {
				t.Fatalf("Resume(bad state) = %v", err)
			}
		})
	}
}
