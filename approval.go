package kairos

import (
	"context"
	"slices"
	"strings"
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

// Standing approvals (grants). An approval request whose action may be
// granted offers, besides Approve (this call) and Deny, "Allow 1h" and
// "Always here": a grant for the asked user, in this chat (thread), for
// this tool and this target. A later call with the same user, chat, tool
// and target runs without asking while the grant is in force, unless the
// floor says it must ask:
//
//   - the action, the tool or the condition is in approvals.never_grant;
//   - the action always asks (ToolAction.AlwaysAsk: a skill's create,
//     update and rollback);
//   - the call has no target that can be named (ToolAction.Target "");
//   - untrusted content is in the turn (taint always asks);
//   - the turn is a scheduled task's and the grant does not cover tasks.
//
// Grants are rows of the database, so they hold across restarts and
// replicas; a revoke deletes the row, and the next call asks again.

// Grant scopes a decision may carry (Decision.Scope).
const (
	GrantOnce   = ""       // Approve: this call only
	GrantHour   = "hour"   // Allow 1h: here, for an hour
	GrantAlways = "always" // Always here: here, until revoked
)

// GrantHourFor is how long "Allow 1h" lasts.
const GrantHourFor = time.Hour

// NeverGrantUnlistedHost is the approvals.never_grant entry for a network
// write to a host outside network.allow_list, or to a host the code does
// not name literally.
const NeverGrantUnlistedHost = "network.unlisted_host"

// GrantedBy prefixes Decision.By (and ToolInvocation.ApprovedBy) for a
// call a grant covered: "grant:<id>".
const GrantedBy = "grant:"

// Approval outcome journaled (ToolCallRecord.Approval) for a call a grant
// covered.
const ApprovalGranted = "granted"

// Grant is a standing approval.
type Grant struct {
	ID        string
	UserKey   string // whose consent ("telegram:42")
	ThreadKey string // the chat (and topic) it was given in
	Tool      string // the tool ("notes__add_note", "code", "skill__vat_price")
	Action    string // the action it approves ("mcp.write", …)
	Target    string // what it is about, normalised (ToolAction.Target)
	Label     string // the target as the approval showed it
	// CoversTasks lets the user's scheduled tasks in this chat use it.
	CoversTasks bool
	ExpiresAt   time.Time // zero: until revoked
	CreatedAt   time.Time
	CreatedBy   string // who pressed the button
	LastUsedAt  time.Time
	Uses        int64
}

// Active reports whether the grant is in force at t.
func (g *Grant) Active(t time.Time) bool { return g.ExpiresAt.IsZero() || g.ExpiresAt.After(t) }

// GrantKey is what a call is looked up by.
type GrantKey struct {
	UserKey, ThreadKey, Tool, Target string
	// Task: the call is a scheduled task's; only a grant that covers
	// tasks covers it.
	Task bool
}

// GrantFilter selects grants; the zero filter selects all.
type GrantFilter struct {
	UserKey string
}

// GrantStore keeps grants.
type GrantStore interface {
	// SaveGrant stores g, or renews the grant with the same user, chat,
	// tool and target (its expiry and creator; uses and covers_tasks are
	// kept). g.ID is set.
	SaveGrant(ctx context.Context, g *Grant) error
	// UseGrant counts a use of the grant in force at `at` for key and
	// returns it, in one statement (a revoke is seen by the next call);
	// ENOTFOUND when no grant covers the call.
	UseGrant(ctx context.Context, key GrantKey, at time.Time) (*Grant, error)
	// Grants lists the grants in force at `at`, newest first.
	Grants(ctx context.Context, f GrantFilter, at time.Time) ([]*Grant, error)
	// FindGrant returns a grant (ENOTFOUND).
	FindGrant(ctx context.Context, id string) (*Grant, error)
	// RevokeGrant deletes a grant (ENOTFOUND when there is none).
	RevokeGrant(ctx context.Context, id string) error
	// SetGrantTasks says whether a grant covers scheduled tasks (ENOTFOUND).
	SetGrantTasks(ctx context.Context, id string, on bool) error
	// DeleteExpiredGrants deletes the grants expired before `before`.
	DeleteExpiredGrants(ctx context.Context, before time.Time) (int64, error)
}

// GrantFloor reports why a call with act, by tool, may not be granted
// under p ("" when it may): the policy's never_grant, an action that
// always asks, a call with no nameable target. Taint and task coverage
// are the turn's part of the floor (the agent checks them).
func GrantFloor(p *Policy, tool string, act ToolAction) string {
	never := p.Approvals.NeverGrant
	switch {
	case act.AlwaysAsk:
		return act.Name + " always asks"
	case act.Target == "":
		return "what it would do cannot be named for a standing approval"
	case slices.Contains(never, act.Name):
		return "the policy lists " + act.Name + " in approvals.never_grant"
	case slices.Contains(never, tool):
		return "the policy lists " + tool + " in approvals.never_grant"
	case act.UnlistedHost && slices.Contains(never, NeverGrantUnlistedHost):
		return "it writes to a host outside the network allow list"
	}
	return ""
}

// GrantScopeLabel names a scope as the keyboard does.
func GrantScopeLabel(scope string) string {
	switch scope {
	case GrantHour:
		return "for an hour"
	case GrantAlways:
		return "always here"
	}
	return "once"
}

// ValidGrantScope reports whether s is a scope a decision may carry.
func ValidGrantScope(s string) bool {
	return s == GrantOnce || s == GrantHour || s == GrantAlways
}

// NormalTarget trims and collapses the spaces of a target, so the same
// target is written the same way.
func NormalTarget(s string) string { return strings.Join(strings.Fields(s), " ") }
