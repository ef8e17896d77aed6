package kairos

import (
	"context"
	"encoding/json"
	"time"
)

// Research tiers (seed 004's research loop), lowest first: the user's own
// memories and summaries, the operator's offline references, the
// allow-listed web, an external model given a redacted context, and books
// (suggestions only, never bought).
const (
	TierMemory  = "memory"
	TierOffline = "offline"
	TierWeb     = "web"
	TierModel   = "model"
	TierBook    = "book"
)

// ResearchTiers lists the tiers in the order they are tried.
var ResearchTiers = []string{TierMemory, TierOffline, TierWeb, TierModel, TierBook}

// Research trace statuses.
const (
	ResearchRunning    = "running"     // under way, or cut short: a call with the same question resumes it
	ResearchAnswered   = "answered"    // every part of the question is covered by checked evidence
	ResearchPartial    = "partial"     // some parts are covered, the rest is said to be unknown
	ResearchAbstained  = "abstained"   // nothing checked covers the question
	ResearchOverBudget = "over_budget" // a budget ran out; it answered with what it had
)

// Evidence is one source a research trace read, as kept in its ledger:
// the text is what claims may quote, and a quote that is not in it is
// never shown.
type Evidence struct {
	TraceID string
	// Ref names the evidence inside its trace ("E1", "E2", …): what a
	// claim cites.
	Ref         string
	Tier        string // TierMemory … TierModel
	Title       string
	URL         string // web pages and ZIM articles
	Path        string // offline documents (relative to the folder), memory ids
	Text        string // the text kept (possibly clipped)
	RetrievedAt time.Time
	// PublishedAt is when the source says it was written or last
	// changed (a page's date, a file's time, a memory's update); zero
	// when unknown.
	PublishedAt time.Time
	// Tainted: untrusted content (everything but the user's own untainted
	// memories).
	Tainted bool
}

// ResearchTrace is one research question and its state. State is the
// engine's own record (the plan, the tier reached, what was asked and
// spent) so that a trace cut short resumes; Answer is the result as the
// tool returns it, once there is one.
type ResearchTrace struct {
	ID          string
	UserKey     string
	ThreadKey   string
	Question    string
	QuestionKey string // the normalized question: a running trace with the same key resumes
	Depth       string
	Status      string
	Tainted     bool
	State       json.RawMessage
	Answer      json.RawMessage
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ResearchStore keeps research traces and their evidence ledgers.
type ResearchStore interface {
	// CreateTrace inserts t (its ID is set when empty).
	CreateTrace(ctx context.Context, t *ResearchTrace) error
	// SaveTrace updates t's status, taint, state and answer (ENOTFOUND).
	SaveTrace(ctx context.Context, t *ResearchTrace) error
	// Trace returns one trace of the user (ENOTFOUND); an empty user key
	// finds any user's (operators, the API).
	Trace(ctx context.Context, userKey, id string) (*ResearchTrace, error)
	// RunningTrace returns the user's newest trace with the question key
	// that is still running and was updated at or after since (ENOTFOUND).
	RunningTrace(ctx context.Context, userKey, questionKey string, since time.Time) (*ResearchTrace, error)
	// LastTrace returns the user's newest trace (ENOTFOUND).
	LastTrace(ctx context.Context, userKey string) (*ResearchTrace, error)
	// Traces lists traces newest first (of one user when userKey is set)
	// and the next page's cursor ("" at the end).
	Traces(ctx context.Context, userKey string, p Page) ([]*ResearchTrace, string, error)
	// AddEvidence stores e in its trace's ledger (ECONFLICT when the ref
	// is taken).
	AddEvidence(ctx context.Context, e *Evidence) error
	// Evidence returns a trace's ledger in the order it was read.
	Evidence(ctx context.Context, traceID string) ([]*Evidence, error)
}

// ResearchDoc is one document of the operator's offline folder, as
// indexed for full-text search.
type ResearchDoc struct {
	Path    string // relative to the folder, with forward slashes
	Title   string
	Text    string
	ModTime time.Time
	Size    int64
}

// ResearchDocStamp is what tells an indexed document is still current.
type ResearchDocStamp struct {
	ModTime time.Time
	Size    int64
}

// ResearchIndex is the full-text index of the offline folder (FTS5 on
// SQLite, a tsvector on PostgreSQL).
type ResearchIndex interface {
	// DocStamps returns the stamp of every indexed document by path.
	DocStamps(ctx context.Context) (map[string]ResearchDocStamp, error)
	// PutDoc indexes d, replacing the document at its path.
	PutDoc(ctx context.Context, d *ResearchDoc) error
	// DeleteDocs removes documents by path.
	DeleteDocs(ctx context.Context, paths []string) error
	// SearchDocs returns at most limit documents matching any word of
	// the query, best first (no match: none).
	SearchDocs(ctx context.Context, query string, limit int) ([]*ResearchDoc, error)
}
