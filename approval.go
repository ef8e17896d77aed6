package kairos

import (
	"context"
	"time"
)

// Approval statuses of a persisted approval request.
const (
	ApprovalPending = "pending"
	// The decided statuses are DecisionApproved, DecisionDenied and
	// DecisionExpired.
)

// PendingApproval is a turn paused for a human's Approve/Deny, persisted
// so that a restart (or another replica) can finish it. State is the
// agent's own record of the paused turn (opaque to every other part):
// the conversation so far, the assistant message with its tool calls and
// the results already produced.
type PendingApproval struct {
	ID        string // the callback id in the keyboard's data ("ap:<id>:y")
	UpdateID  int64  // the update whose turn is paused (its outbox keys finish the turn)
	ChatID    int64
	ChatKind  string
	TopicID   int64
	UserID    int64 // who was asked (an operator may decide too)
	ThreadKey string
	Action    string
	Tool      string
	// Grantable, Target and TargetLabel: the request offered a standing
	// grant for this target (ApprovalRequest).
	Grantable   bool
	Target      string
	TargetLabel string
	// SourceMessageID is the user's message whose turn is paused: a reply
	// to it waits for the decision.
	SourceMessageID int64
	Zone            string // the user's IANA zone (ApprovalRequest.Zone)
	Text            string // the keyboard message (HTML), for the edit that removes the buttons
	MessageID       int64  // the keyboard message
	State           []byte
	ExpiresAt       time.Time
	CreatedAt       time.Time

	Status    string // ApprovalPending or a Decision outcome
	DecidedBy string
	DecidedAt time.Time
	Scope     string // the decision's grant scope (Decision.Scope)
	// HeartbeatAt is refreshed by the live waiter; a stale heartbeat means
	// nobody is waiting any more (the process died).
	HeartbeatAt time.Time
	// ClaimedBy names who continues the turn after the decision (the
	// waiter or a resumer); set once.
	ClaimedBy string
}

// ApprovalStore persists paused turns. Every transition is a conditional
// update, so across processes each request is decided once and continued
// once.
type ApprovalStore interface {
	// CreateApproval stores a pending request; with markUpdateDone the
	// update it belongs to is marked processed in the same transaction
	// (the turn now lives in the approval row).
	CreateApproval(ctx context.Context, pa *PendingApproval, markUpdateDone bool) error
	// SetApprovalMessage records the keyboard's message id of a request
	// stored before its keyboard was sent; with markUpdateDone the update
	// it belongs to is marked processed in the same transaction. It
	// reports false when the request was decided meanwhile (the decider
	// saw no message id, so the caller closes the keyboard).
	SetApprovalMessage(ctx context.Context, id string, messageID int64, markUpdateDone bool) (bool, error)
	// FindApproval returns a request (ENOTFOUND when unknown).
	FindApproval(ctx context.Context, id string) (*PendingApproval, error)
	// DecideApproval moves a pending request to outcome; it reports false
	// when the request was not pending any more (decided elsewhere).
	// Approved and denied need the request unexpired at `at`.
	DecideApproval(ctx context.Context, id, outcome, by string, at time.Time) (bool, error)
	// DecideApprovalAs is DecideApproval with the decision's grant scope.
	DecideApprovalAs(ctx context.Context, id string, dec Decision) (bool, error)
	// PendingApprovalsInChat lists a chat's pending requests.
	PendingApprovalsInChat(ctx context.Context, chatID int64) ([]*PendingApproval, error)
	// ClaimApproval takes the right to continue a decided turn; false when
	// someone else holds it.
	ClaimApproval(ctx context.Context, id, by string) (bool, error)
	// HeartbeatApproval refreshes the live waiter's heartbeat and returns
	// the request's current state.
	HeartbeatApproval(ctx context.Context, id string, at time.Time) (*PendingApproval, error)
	// StaleApprovals lists the requests, pending or decided but never
	// claimed, whose heartbeat is older than `before` (nobody waits for
	// them).
	StaleApprovals(ctx context.Context, before time.Time) ([]*PendingApproval, error)
}
