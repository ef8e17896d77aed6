package kairos

import (
	"context"
	"slices"
	"strings"
	"time"
)

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
