package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/tools"
)

type stubClock struct{}

func (stubClock) OnUserMessage(ctx context.Context, in *kairos.Inbound) (*kairos.ClockEnvelope, error) {
	return &kairos.ClockEnvelope{ThreadKey: in.ThreadKey(), NowISO: in.Date.Format(time.RFC3339), Text: "Clock: " + in.Date.Format(time.RFC3339)}, nil
}

func (stubClock) OnAgentMessage(ctx context.Context, m *kairos.AgentMessage) error { return nil }

type finalOnly struct{ text string }

func (r *finalOnly) Typing(context.Context)                  {}
func (r *finalOnly) Partial(context.Context, string)         {}
func (r *finalOnly) Final(_ context.Context, s string) error { r.text = s; return nil }
func (r *finalOnly) Approve(context.Context, *kairos.ApprovalRequest) (kairos.Decision, error) {
	return kairos.Decision{}, nil
}

// A message that arrives across the division boundary before the job ran
// is answered in the new session, whose prompt carries the previous
// session's summary and not its messages.
func TestAgentTurnAcrossTheBoundary(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	u := e.user(7, "Asia/Tokyo")
	e.model.fn = func(req kairos.ChatRequest) (string, error) {
		if strings.Contains(req.Messages[0].Content, "Summarize this conversation") {
			return "Ann plans to call the dentist on Tuesday.", nil
		}
		return "Good morning, Ann.", nil
	}
	a := agent.New(agent.Config{Model: e.model, Sessions: e.sessions, Clock: stubClock{}, Tools: tools.NewRegistry(),
		Policy: e.cfg.Policy, Models: []string{"m1"}, Rollover: e.sched.Sessions().Rollover,
		Now: func() time.Time { return time.Date(2026, 3, 3, 7, 30, 0, 0, u.loc) }})
	old := e.say(u, time.Date(2026, 3, 2, 21, 0, 0, 0, u.loc), "remind me: dentist tomorrow")

	in := inbound(u, time.Date(2026, 3, 3, 7, 30, 0, 0, u.loc))
	out := &finalOnly{}
	if err := a.HandleMessage(ctx, in, out); err != nil {
		t.Fatal(err)
	}
	if out.text != "Good morning, Ann." {
		t.Fatalf("answer %q", out.text)
	}
	cur := e.open(u)
	if cur.ID == old.ID || cur.PrevSessionID != old.ID {
		t.Fatalf("turn session %+v", cur)
	}
	msgs, _ := e.sessions.Messages(ctx, cur.ID, 0, 0)
	if len(msgs) != 2 || msgs[0].Content != "good morning" {
		t.Fatalf("new session messages %+v", msgs)
	}
	turn := e.model.requests("Clock: ")
	if len(turn) != 1 {
		t.Fatalf("%d turn requests", len(turn))
	}
	var prompt []string
	for _, m := range turn[0].Messages {
		prompt = append(prompt, m.Content)
	}
	all := strings.Join(prompt, "\n")
	if !strings.Contains(all, "Ann plans to call the dentist on Tuesday.") || strings.Contains(all, "remind me: dentist tomorrow") {
		t.Fatalf("prompt does not carry the summary instead of the old messages:\n%s", all)
	}
}
