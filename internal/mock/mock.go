package mock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairos-agent/kairos"
)

// Model is a kairos.Model. ChatFn answers (nil: an empty assistant
// message); every request is recorded, its messages copied.
type Model struct {
	ChatFn func(ctx context.Context, req kairos.ChatRequest) (*kairos.ChatResponse, error)

	mu   sync.Mutex
	reqs []kairos.ChatRequest
}

// Chat implements kairos.Model.
func (m *Model) Chat(ctx context.Context, req kairos.ChatRequest, onDelta func(string)) (*kairos.ChatResponse, error) {
	m.mu.Lock()
	req.Messages = append([]kairos.ChatMessage(nil), req.Messages...)
	m.reqs = append(m.reqs, req)
	fn := m.ChatFn
	m.mu.Unlock()
	if fn == nil {
		return Answer(req, ""), nil
	}
	return fn(ctx, req)
}

// SetChat replaces ChatFn while the fake may be in use.
func (m *Model) SetChat(fn func(ctx context.Context, req kairos.ChatRequest) (*kairos.ChatResponse, error)) {
	m.mu.Lock()
	m.ChatFn = fn
	m.mu.Unlock()
}

// Requests returns the recorded requests.
func (m *Model) Requests() []kairos.ChatRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]kairos.ChatRequest(nil), m.reqs...)
}

// Calls is how many requests were made.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reqs)
}

// Answer is a response to req with text as the assistant's message.
func Answer(req kairos.ChatRequest, text string) *kairos.ChatResponse {
	return &kairos.ChatResponse{Model: req.Model, Message: kairos.ChatMessage{Role: kairos.RoleAssistant, Content: text}}
}

// Clock is a kairos.Clock. OnUserMessageFn builds the envelope (nil: a
// fixed one stamped with the message's date and Reply); calls are counted.
type Clock struct {
	OnUserMessageFn func(ctx context.Context, in *kairos.Inbound) (*kairos.ClockEnvelope, error)
	Reply           string // the default envelope's Reply

	UserCalls, AgentCalls atomic.Int32
}

// OnUserMessage implements kairos.Clock.
func (c *Clock) OnUserMessage(ctx context.Context, in *kairos.Inbound) (*kairos.ClockEnvelope, error) {
	c.UserCalls.Add(1)
	if c.OnUserMessageFn != nil {
		return c.OnUserMessageFn(ctx, in)
	}
	now := in.Date.Format(time.RFC3339)
	return &kairos.ClockEnvelope{ThreadKey: in.ThreadKey(), NowISO: now, Elapsed: "PT1H",
		Text: "Clock: now " + now + " (UTC); elapsed since last interaction PT1H.", Reply: c.Reply}, nil
}

// OnAgentMessage implements kairos.Clock.
func (c *Clock) OnAgentMessage(ctx context.Context, m *kairos.AgentMessage) error {
	c.AgentCalls.Add(1)
	return nil
}

// Replier is a kairos.Replier that keeps what it was given. Approve
// records the request and answers with ApproveFn (n counts the requests
// from 1) or, without one, with Decide (default denied).
type Replier struct {
	Decide    string
	ApproveFn func(n int, req *kairos.ApprovalRequest) (kairos.Decision, error)

	mu        sync.Mutex
	partials  []string
	final     string
	finals    int
	typing    int
	approvals []*kairos.ApprovalRequest
}

// Typing implements kairos.Replier.
func (r *Replier) Typing(context.Context) { r.mu.Lock(); r.typing++; r.mu.Unlock() }

// Partial implements kairos.Replier.
func (r *Replier) Partial(_ context.Context, s string) {
	r.mu.Lock()
	r.partials = append(r.partials, s)
	r.mu.Unlock()
}

// Final implements kairos.Replier.
func (r *Replier) Final(_ context.Context, s string) error {
	r.mu.Lock()
	r.final, r.finals = s, r.finals+1
	r.mu.Unlock()
	return nil
}

// Approve implements kairos.Replier.
func (r *Replier) Approve(_ context.Context, req *kairos.ApprovalRequest) (kairos.Decision, error) {
	r.mu.Lock()
	r.approvals = append(r.approvals, req)
	n, fn, out := len(r.approvals), r.ApproveFn, r.Decide
	r.mu.Unlock()
	if fn != nil {
		return fn(n, req)
	}
	if out == "" {
		out = kairos.DecisionDenied
	}
	return kairos.Decision{Outcome: out, By: "telegram:1"}, nil
}

// Text is the last final text.
func (r *Replier) Text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.final
}

// Finals is how many final texts were sent.
func (r *Replier) Finals() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finals
}

// Partials returns the partial texts.
func (r *Replier) Partials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.partials...)
}

// Typings is how many typing indications were sent.
func (r *Replier) Typings() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.typing
}

// Approvals returns the approval requests.
func (r *Replier) Approvals() []*kairos.ApprovalRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*kairos.ApprovalRequest(nil), r.approvals...)
}
