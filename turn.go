package kairos

import (
	"context"
	"sync"
	"time"
)

// Replier is where a turn's answer goes: a Telegram chat or the terminal.
// Implementations throttle partial updates to what their channel allows.
type Replier interface {
	// Typing tells the user work is under way (tools are running).
	Typing(ctx context.Context)
	// Partial shows the answer so far while it streams.
	Partial(ctx context.Context, text string)
	// Final delivers the whole answer (Markdown from the model).
	Final(ctx context.Context, text string) error
	// Approve asks a human to approve an impactful action and waits for
	// the answer until req.ExpiresAt; expiry or cancellation is a denial.
	Approve(ctx context.Context, req *ApprovalRequest) (Decision, error)
}

// ButtonReplier is a Replier that can show buttons under an answer
// (Telegram's inline keyboards).
type ButtonReplier interface {
	FinalWithButtons(ctx context.Context, text string, rows [][]Button) error
}

// FailureReplier is a Replier whose caller wants a failed turn as an
// error, not only as the apology (the API answers 503 for an outage). The
// agent calls Failure instead of Final(apology) when out is one.
type FailureReplier interface {
	Failure(ctx context.Context, err error, apology string) error
}

// ApprovalRequest asks a human for a yes before an impactful action.
type ApprovalRequest struct {
	ID        string
	ThreadKey string
	UserKey   string
	Action    string // "memory.forget", …
	Tool      string // the tool called ("memory", "notes__add_note")
	Summary   string // what will happen, in one sentence (ToolAction.Summary)
	Reason    string // why it needs approval (impactful, tainted context, …)
	// Detail is the whole of what is approved (ToolAction.Detail): code,
	// a diff, test results. Long details go as a document.
	Detail    string
	ExpiresAt time.Time
	// Zone is the user's IANA time zone: the request shows its expiry as
	// a clock time there.
	Zone string
	// Grantable: "Allow 1h" and "Always here" are offered (the floor of
	// grant.go allows a grant); Target and TargetLabel say for what.
	Grantable   bool
	Target      string
	TargetLabel string
	// NoGrant says why no standing grant is offered ("" when one is, or
	// when the action has nothing to grant): untrusted content in the
	// turn, the policy's never_grant, …
	NoGrant string
	// State is the paused turn as the agent records it; when set, the
	// request is persisted and the turn can be finished after a restart
	// or by another replica.
	State []byte
}

// ErrHandedOff is returned by Approve when the turn's continuation was
// taken over elsewhere (a resumer after this waiter was thought dead): the
// caller must stop the turn without answering.
var ErrHandedOff = Errorf(ECONFLICT, "the turn continues elsewhere")

// Decisions on an approval request.
const (
	DecisionApproved = "approved"
	DecisionDenied   = "denied"
	DecisionExpired  = "expired"
)

// Decision is a human's answer to an approval request.
type Decision struct {
	Outcome string // DecisionApproved, DecisionDenied, DecisionExpired
	By      string // user key of who decided
	ByName  string // their name, when the front end knows it (the decided keyboard shows it)
	At      time.Time
	// Scope is what an approval stands for: GrantOnce, GrantHour or
	// GrantAlways (the button pressed).
	Scope string
}

// ToolRegistry offers the tools a policy enables. A disabled tool is absent
// from the list, so the model can neither see nor call it.
type ToolRegistry interface {
	Tools(p *Policy) []Tool
}

// ToolScope says whom a tool list is for: the turn's user and message.
// All asks for every tool the user may call, not only the ones offered
// (a skill found with `skill list` is callable though not offered).
type ToolScope struct {
	UserKey string
	Query   string
	All     bool
	// Turn is the kind of turn the tools are for: a task's turn gets no
	// tool at all when schedules.tasks_may_use_tools is false.
	Turn TurnKind
	// Wanted names tools the turn asked for (more_tools, or called
	// earlier in the session): offered whatever the message says.
	Wanted []string
}

// ScopedToolRegistry is a ToolRegistry whose tools depend on the user
// (each user's skills). Tools(p) of such a registry is ToolsFor(p, ToolScope{}).
type ScopedToolRegistry interface {
	ToolRegistry
	ToolsFor(p *Policy, s ToolScope) []Tool
}

// Chat actions: what a channel shows while a turn works (Telegram's
// sendChatAction). ActionReplier is optional; ShowAction ignores
// repliers without it.
const (
	ActionTyping         = "typing"
	ActionRecordVoice    = "record_voice" // transcribing a voice note or audio
	ActionUploadDocument = "upload_document"
)

// ActionReplier is a Replier that shows the kind of work under way until
// the answer arrives (the channel repeats it while the work lasts).
type ActionReplier interface {
	Action(ctx context.Context, action string)
}

// ShowAction sets the work shown by out, when out can show one.
func ShowAction(ctx context.Context, out Replier, action string) {
	if a, ok := out.(ActionReplier); ok {
		a.Action(ctx, action)
	}
}

// TurnHooks holds work that must wait until the current turn is saved: a
// tool that ends the session (the memory tool's __NEW_SESSION__) defers
// the end with AfterTurn, so the turn's own messages are stored in the
// session they belong to, and its summary includes them.
type TurnHooks struct {
	mu    sync.Mutex
	funcs []func(context.Context) error
}

type turnHooksKey struct{}

// WithTurnHooks returns ctx carrying a fresh TurnHooks for one turn.
func WithTurnHooks(ctx context.Context) (context.Context, *TurnHooks) {
	h := &TurnHooks{}
	return context.WithValue(ctx, turnHooksKey{}, h), h
}

// AfterTurn runs f once the turn of ctx is saved; outside a turn it runs
// f at once.
func AfterTurn(ctx context.Context, f func(context.Context) error) error {
	h, _ := ctx.Value(turnHooksKey{}).(*TurnHooks)
	if h == nil {
		return f(ctx)
	}
	h.mu.Lock()
	h.funcs = append(h.funcs, f)
	h.mu.Unlock()
	return nil
}

// Run runs the deferred work in order and returns the errors joined.
func (h *TurnHooks) Run(ctx context.Context) []error {
	h.mu.Lock()
	funcs := h.funcs
	h.funcs = nil
	h.mu.Unlock()
	var errs []error
	for _, f := range funcs {
		if err := f(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
