package kairos

import (
	"context"
	"time"
)

// Memory stores (seed 003).
const (
	StoreUserMemory = "user_memory"
	StoreSummaries  = "summaries"
)

// User-memory categories.
var MemoryCategories = []string{"fact", "preference", "life-goal", "project", "open-loop", "relationship", "health", "work", "personal-context"}

// Summary types, each with its calendar-aligned period key.
const (
	SummaryConversation = "conversation-summary" // period key: the day (YYYY-MM-DD)
	SummaryDaily        = "daily-summary"        // YYYY-MM-DD
	SummaryWeekly       = "weekly-summary"       // ISO week YYYY-Www
	SummaryMonthly      = "monthly-summary"      // YYYY-MM
	SummaryQuarterly    = "quarterly-summary"    // YYYY-Qn
	SummaryYearly       = "yearly-summary"       // YYYY
)

// SummaryTypes lists the summary types, finest first.
var SummaryTypes = []string{SummaryConversation, SummaryDaily, SummaryWeekly, SummaryMonthly, SummaryQuarterly, SummaryYearly}

// Memory is one user memory or summary. Memories belong to one user.
type Memory struct {
	ID               string
	UserKey          string
	Store            string // StoreUserMemory or StoreSummaries
	Type             string // category or summary type
	Content          string
	Tags             []string
	PursuingPriority *int   // 0–100, user memories
	PeriodKey        string // summaries
	ChatID           string // conversation summaries: the session id
	// Tainted: written in a turn that held untrusted content (or, for a
	// summary, built from such turns). It is shown to the model as data
	// with its origin, and recalling it taints the turn that reads it.
	Tainted bool
	// TaintSource says what the untrusted content was ("search", "code",
	// "a document", …); empty when untainted.
	TaintSource string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Relevance   float64 // recall only
}

// MemoryFilter selects memories for recall and list.
type MemoryFilter struct {
	UserKey         string // required: memories of this user only
	Query           string // full-text query; empty lists by recency
	Store           string
	Categories      []string
	SummaryTypes    []string
	From, To        *time.Time
	PeriodKeyPrefix string
	Limit           int
	QueryVector     []float32 // optional embedding of Query
}

// MemoryStore persists memories.
type MemoryStore interface {
	// StoreMemory inserts m, or merges it into an existing memory of the
	// same user that says the same thing (same normalized content, or for
	// summaries the same type and period key and chat id). It returns the
	// stored memory and whether it merged.
	StoreMemory(ctx context.Context, m *Memory) (*Memory, bool, error)
	// RecallMemories ranks memories for the filter (BM25, blended with the
	// vector when one is given).
	RecallMemories(ctx context.Context, f MemoryFilter) ([]*Memory, error)
	FindMemory(ctx context.Context, userKey, id string) (*Memory, error)
	// ForgetMemory deletes a memory of the user (ENOTFOUND).
	ForgetMemory(ctx context.Context, userKey, id string) error
	// SetEmbedding stores the vector of a memory.
	SetEmbedding(ctx context.Context, id string, vec []float32) error
}
