package web

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos"
)

// Backend is what the API and the console read and change; cmd/kairos
// implements it over the store, the bot and the agent. Methods return
// kairos error codes (ENOTFOUND, EINVALID, EFORBIDDEN, …).
type Backend interface {
	kairos.Directory
	// Names returns the names kept for users (by key; those without any
	// are absent).
	Names(ctx context.Context, userKeys []string) (map[string]kairos.UserName, error)
	// Zone is an operator's zone: their Session TZ, else their default,
	// else UTC. The console writes times in it.
	Zone(ctx context.Context, userID int64) *time.Location
	// SearchMemories ranks a user's memories for a query.
	SearchMemories(ctx context.Context, userKey, query string, limit int) ([]*kairos.Memory, error)
	ForgetMemory(ctx context.Context, userKey, id string) error
	// Schedules lists one page of the pending schedules by next run (of
	// one Telegram user when userID is not 0) and the next page's cursor
	// ("" at the end).
	Schedules(ctx context.Context, userID int64, p kairos.Page) ([]ScheduleRow, string, error)
	CancelSchedule(ctx context.Context, id string) error
	// DecideApproval decides a pending request as a button press would;
	// it returns the sentence a press shows.
	DecideApproval(ctx context.Context, id string, approve bool, by string) (string, error)
	// Usage is `kairos usage` for one user (0: everyone) since a day.
	Usage(ctx context.Context, userID int64, since time.Time) ([]UsageRow, error)
	// Skills lists the approved skills.
	Skills(ctx context.Context) ([]SkillRow, error)
	// Skill is one skill with its kept versions, each with the diff from
	// the version before it (ENOTFOUND).
	Skill(ctx context.Context, id int64) (*SkillDetail, error)
	// SkillAction disables, enables, shares, unshares or rolls back a skill
	// (to version `to`, or the one before the current) as an operator;
	// it returns the sentence the Telegram button shows.
	SkillAction(ctx context.Context, id int64, action string, to int) (string, error)
	// ResearchTraces lists research traces newest first, of one user
	// when userKey is set.
	ResearchTraces(ctx context.Context, userKey string, p kairos.Page) ([]*kairos.ResearchTrace, string, error)
	// Tools lists every tool the model can be offered, whether it is,
	// and the MCP servers.
	Tools(ctx context.Context) (*ToolsView, error)
	// Grants lists the standing approvals in force (of one user key when
	// userKey is set), newest first; grants that are gone (expired, or of
	// a tool, MCP server or skill version that no longer exists) are not.
	Grants(ctx context.Context, userKey string) ([]*kairos.Grant, error)
	// RevokeGrant deletes a standing approval (ENOTFOUND); by says who.
	RevokeGrant(ctx context.Context, id, by string) error
	// PolicyText returns the policy file's text ("" when the defaults
	// apply) and the policy in force.
	PolicyText() (string, *kairos.Policy)
	// PolicyView is the file and the policy in force as YAML, defaults
	// included.
	PolicyView() (*PolicyView, error)
	// CheckPolicy validates a policy text as `kairos policy check` does.
	CheckPolicy(text []byte) []PolicyProblem
	// ReplacePolicy validates and writes the policy file; the watcher
	// applies it. A bad text changes nothing.
	ReplacePolicy(ctx context.Context, text []byte) ([]PolicyProblem, error)
	// RunTurn answers text as if the Telegram user had written it; with
	// deliver the answer also goes to their chat.
	RunTurn(ctx context.Context, userID int64, text string, deliver bool) (string, error)
	// Overview is the console's first page.
	Overview(ctx context.Context) (*Overview, error)
	// IsOperator reports whether a Telegram user id is an operator now.
	IsOperator(id int64) bool
}

// PolicyProblem is one error of a policy text, at its line and column.
type PolicyProblem struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// Overview is the operator's summary: activity per minute over the last
// hour, model latency, errors, and today's cost.
type Overview struct {
	TurnsPerMinute  []int     `json:"turns_per_minute"` // oldest first, 60 entries
	ModelLatencyMS  []float64 `json:"model_latency_ms"` // p50 per minute, same minutes
	Errors          int       `json:"errors"`           // failed turns and model calls in the hour
	CostTodayUSD    float64   `json:"cost_today_usd"`
	TokensToday     int64     `json:"tokens_today"`
	PendingApproval int       `json:"pending_approvals"`
	Users           int       `json:"users"`
}
