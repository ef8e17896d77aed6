package kairos

import (
	"context"
	"time"
)

// Session is one stretch of a thread's conversation. A thread has at most
// one open session; /newsession and the automatic division end it and start
// the next, which carries the previous session's summary, not its messages.
type Session struct {
	ID            string
	ThreadKey     string
	UserKey       string // the user who opened it (in a group: the first speaker)
	Name          string
	StartedAt     time.Time
	EndedAt       *time.Time
	Summary       string // the conversation summary written when it ended
	PrevSessionID string
	// RunningSummary condenses the turns up to message SummarizedThrough
	// that no longer fit the prompt's history budget.
	RunningSummary    string
	SummarizedThrough int64
	// Tainted: a message holding untrusted content (a web page, code
	// output, a document, a tainted memory) was stored in the session, so
	// its history, running summary and final summary are untrusted too.
	Tainted bool
}

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one persisted turn element of a session.
type Message struct {
	ID         int64
	SessionID  string
	ThreadKey  string
	UserKey    string // author for user messages
	Role       string
	Content    string
	ToolCalls  []ToolCall // assistant messages that call tools
	ToolCallID string     // tool results
	Name       string     // tool name for tool results, user name in groups
	Tainted    bool       // content came from an untrusted source
	CreatedAt  time.Time
}

// ToolCallRecord is the journal entry of one tool call (issue [policy] §6).
type ToolCallRecord struct {
	ID         string // the model's tool_call id
	SessionID  string
	ThreadKey  string
	UserKey    string
	Tool       string
	Action     string
	Arguments  string // JSON, secrets redacted
	Result     string // JSON
	Outcome    string // ok, error, denied, skipped
	Envelope   string // capability envelope in force
	Mode       string // DISCUSS, DIAGNOSE, EXECUTE
	Tainted    bool
	Approval   string // "", approved, denied, expired
	DurationMS int64
	CreatedAt  time.Time
}

// UsageRecord is the token usage of one model call.
type UsageRecord struct {
	SessionID        string
	UserKey          string
	Model            string
	PromptTokens     int
	CompletionTokens int
	// Audio is the length of audio a transcription call consumed (its
	// model is the transcription model; tokens are then 0).
	Audio     time.Duration
	CreatedAt time.Time

	// The cost accounting of usage.go: the thread, what the call was for
	// (SpendChat, SpendTask, …), the prompt tokens the provider served
	// from its cache (a part of PromptTokens), the images sent, and the
	// cost at the prices in force when the call was made (CostUSD is 0
	// and Priced false when the model has no price: tokens only).
	ThreadKey    string
	Kind         string
	CachedTokens int
	Images       int
	CostUSD      float64
	Priced       bool
	// Estimated: the provider reported no usage, the counts were
	// estimated from the texts (kairos.Usage.Estimated).
	Estimated bool
}

// SessionStore persists sessions, their messages, tool calls and usage.
type SessionStore interface {
	// OpenSession returns the open session of the thread, creating one
	// started at `at` when there is none.
	OpenSession(ctx context.Context, threadKey, userKey string, at time.Time) (*Session, error)
	// FindSession returns a session by id (ENOTFOUND).
	FindSession(ctx context.Context, id string) (*Session, error)
	// LastEndedSession returns the most recently ended session of the thread
	// (ENOTFOUND when there is none).
	LastEndedSession(ctx context.Context, threadKey string) (*Session, error)
	// EndSession closes a session with its summary and opens the next one,
	// named name, in one transaction. It returns the new session.
	// ECONFLICT when the session was already ended.
	EndSession(ctx context.Context, id, summary string, at time.Time, nextName string) (*Session, error)
	// UpdateRunningSummary replaces the running summary of older turns,
	// which now covers the messages up to and including throughID.
	UpdateRunningSummary(ctx context.Context, id, summary string, throughID int64) error
	// ListOpenSessions lists every open session (for the rollover jobs).
	ListOpenSessions(ctx context.Context) ([]*Session, error)
	// ListEndedSessions lists sessions that ended in [from, to).
	ListEndedSessions(ctx context.Context, from, to time.Time) ([]*Session, error)

	// AppendMessages stores messages in order, setting their IDs.
	AppendMessages(ctx context.Context, msgs ...*Message) error
	// Messages returns the session's messages after afterID in order, at
	// most limit (0 = all).
	Messages(ctx context.Context, sessionID string, afterID int64, limit int) ([]*Message, error)

	RecordToolCall(ctx context.Context, rec *ToolCallRecord) error
	RecordUsage(ctx context.Context, rec *UsageRecord) error
}
