package kairos

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"time"
)

// API token scopes, each covering the ones before it: read lists and
// shows; write also changes what users asked for (decides approvals,
// cancels schedules, forgets memories, acts on skills, runs turns);
// admin also replaces the policy, and even then only to narrow it
// (policy.WebEditRefusal).
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
	ScopeAdmin = "admin"
)

// Scopes lists the scopes from the narrowest to the widest.
var Scopes = []string{ScopeRead, ScopeWrite, ScopeAdmin}

// APIToken is a bearer token of the query API. Only a hash of its secret
// is stored; the secret is shown once, when it is made.
type APIToken struct {
	ID         string
	Name       string
	Scope      string
	CreatedAt  time.Time
	LastUsedAt time.Time // zero: never used
	RevokedAt  time.Time // zero: in force
}

// Allows reports whether the token's scope covers scope: its own and
// every narrower one. An unknown scope covers nothing and is covered by
// nothing.
func (t *APIToken) Allows(scope string) bool {
	have, need := slices.Index(Scopes, t.Scope), slices.Index(Scopes, scope)
	return have >= 0 && need >= 0 && have >= need
}

// APIWrite is one change made through the API or the console, recorded
// with who made it ("token:<name>" or "console:<user id>").
type APIWrite struct {
	Actor     string
	Method    string
	Path      string
	Status    int
	CreatedAt time.Time
}

// AccessEntry is one request to the API or the console, as the access
// log keeps it: who made it ("token:<name>", "console:<user id>", or ""
// when no token or session was accepted), through which token or session
// (the token's id, the first characters of the session's hash), the path
// without its query (which can carry a sign-in link) and the answer.
type AccessEntry struct {
	At      time.Time
	Door    string // "api" or "console"
	Actor   string
	Via     string
	Method  string
	Path    string
	Status  int
	Elapsed time.Duration
}

// ConsoleSession is a signed-in operator's browser session.
type ConsoleSession struct {
	UserID    int64
	CSRF      string // the token every form of the session carries
	CreatedAt time.Time
	ExpiresAt time.Time
}

// APIStore keeps API tokens, the write record and the console's sign-in
// links and sessions. Secrets are passed in as hashes (HashSecret).
type APIStore interface {
	// CreateAPIToken stores t (its ID set by the caller) under hash.
	CreateAPIToken(ctx context.Context, t *APIToken, hash string) error
	// APITokenByHash returns the token in force with that hash (ENOTFOUND
	// when unknown or revoked) and records its use at `at`.
	APITokenByHash(ctx context.Context, hash string, at time.Time) (*APIToken, error)
	// APITokens lists every token, revoked ones included, oldest first.
	APITokens(ctx context.Context) ([]*APIToken, error)
	// RevokeAPIToken revokes a token by id (ENOTFOUND when unknown or
	// already revoked).
	RevokeAPIToken(ctx context.Context, id string, at time.Time) error
	// RecordAPIWrite appends to the write record.
	RecordAPIWrite(ctx context.Context, w *APIWrite) error
	// APIWrites lists the newest writes first, at most limit.
	APIWrites(ctx context.Context, limit int) ([]*APIWrite, error)
	// RecordAccess appends one request to the access log.
	RecordAccess(ctx context.Context, a *AccessEntry) error
	// AccessLog lists one page of the access log, newest first (the
	// cursor is the last entry's sequence number).
	AccessLog(ctx context.Context, p Page) ([]*AccessEntry, string, error)

	// CreateConsoleLink stores a single-use sign-in link for an operator.
	CreateConsoleLink(ctx context.Context, hash string, userID int64, expires time.Time) error
	// UseConsoleLink spends a link: it returns its user once, when unspent
	// and unexpired at `at` (ENOTFOUND otherwise).
	UseConsoleLink(ctx context.Context, hash string, at time.Time) (int64, error)
	// CreateConsoleSession stores a session under hash.
	CreateConsoleSession(ctx context.Context, hash string, s *ConsoleSession) error
	// ConsoleSession returns a live session (ENOTFOUND when unknown, ended
	// or expired at `at`).
	ConsoleSession(ctx context.Context, hash string, at time.Time) (*ConsoleSession, error)
	// EndConsoleSession ends a session (idempotent).
	EndConsoleSession(ctx context.Context, hash string, at time.Time) error
}

// NewSecret returns a random secret of 32 bytes, URL-safe base64, with a
// prefix that says what it is ("kat_" for API tokens).
func NewSecret(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// HashSecret is how a token, link or session secret is stored: SHA-256
// in hex. The secrets are 256 random bits, so a slow password hash would
// add nothing but latency.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// UserName is what Telegram calls a user, kept from their latest
// message: the first name and the @username (without the @).
type UserName struct {
	FirstName string `json:"first_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

// NameStore keeps users' names as the bot sees them.
type NameStore interface {
	// NoteUserName stores userKey's names as of `at`.
	NoteUserName(ctx context.Context, userKey string, n UserName, at time.Time) error
}

// UserView is a user as the API and console list them.
type UserView struct {
	Key string `json:"key"` // "telegram:42"
	UserName
	DefaultTZ       string    `json:"default_tz,omitempty"`
	LastInteraction time.Time `json:"last_interaction,omitzero"`
}

// ThreadView is a thread with its clock state.
type ThreadView struct {
	Key              string    `json:"key"`
	Kind             string    `json:"kind,omitempty"`
	SessionTZ        string    `json:"session_tz,omitempty"`
	LastInteraction  time.Time `json:"last_interaction,omitzero"`
	LastUserMessage  time.Time `json:"last_user_message,omitzero"`
	LastAgentMessage time.Time `json:"last_agent_message,omitzero"`
}

// MessageView is one stored message of a thread.
type MessageView struct {
	ID        int64     `json:"id"`
	SessionID string    `json:"session_id"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	Tainted   bool      `json:"tainted,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Page asks for one page of a list: the items after Cursor (the sort key
// of the last item of the previous page, "" for the first), at most Limit.
type Page struct {
	Cursor string
	Limit  int
}

// Directory is the read side the API and the console list from. Lists are
// in a stable order and return the cursor of the next page ("" at the end).
type Directory interface {
	// Users lists users by key.
	Users(ctx context.Context, p Page) ([]*UserView, string, error)
	// Threads lists threads by key, those userKey took part in when set.
	Threads(ctx context.Context, userKey string, p Page) ([]*ThreadView, string, error)
	// Thread returns one thread (ENOTFOUND).
	Thread(ctx context.Context, key string) (*ThreadView, error)
	// ThreadMessages lists a thread's messages oldest first.
	ThreadMessages(ctx context.Context, threadKey string, p Page) ([]*MessageView, string, error)
	// Approvals lists approval requests newest first, of one status when
	// status is set.
	Approvals(ctx context.Context, status string, p Page) ([]*PendingApproval, string, error)
	// Memories lists memories newest first, of one user when userKey is set.
	Memories(ctx context.Context, userKey string, p Page) ([]*Memory, string, error)
	// Counts returns how many users there are and how many approval
	// requests are pending.
	Counts(ctx context.Context) (users, pendingApprovals int, err error)
}
