package kairos

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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

// Validate checks the rules every stored memory obeys, whoever writes it
// (the memory tool, the session and roll-up jobs, the store): a user, a
// known store, content that is valid UTF-8, a known category or summary
// type, a pursuing priority in 0..100 and a period key of the shape its
// summary type has. Errors are EINVALID and name the field as the memory
// tool's arguments do, so the model can correct its call.
func (m *Memory) Validate() error {
	if m.UserKey == "" {
		return Errorf(EINVALID, "a memory needs its user")
	}
	content := strings.TrimSpace(strings.ReplaceAll(m.Content, "\x00", ""))
	if content == "" {
		return Errorf(EINVALID, "argument \"content\" is required for store")
	}
	if !utf8.ValidString(content) {
		return Errorf(EINVALID, "argument \"content\" is not valid UTF-8")
	}
	if p := m.PursuingPriority; p != nil && (*p < 0 || *p > 100) {
		return Errorf(EINVALID, "argument \"pursuingPriority\": %d is out of range 0..100", *p)
	}
	switch m.Store {
	case StoreUserMemory:
		if !slices.Contains(MemoryCategories, m.Type) {
			return oneOf("category", m.Type, MemoryCategories)
		}
		if m.PeriodKey != "" {
			return Errorf(EINVALID, "argument \"period_key\" is only for store %q", StoreSummaries)
		}
	case StoreSummaries:
		if !slices.Contains(SummaryTypes, m.Type) {
			return oneOf("summary_type", m.Type, SummaryTypes)
		}
		return CheckPeriodKey(m.Type, m.PeriodKey)
	default:
		return oneOf("store", m.Store, []string{StoreUserMemory, StoreSummaries})
	}
	return nil
}

func oneOf(arg, v string, allowed []string) error {
	return Errorf(EINVALID, "argument %q: %q is not one of %s", arg, v, strings.Join(allowed, ", "))
}

// Period key shapes.
const (
	ShapeDay     = "YYYY-MM-DD"
	ShapeWeek    = "YYYY-Www"
	ShapeMonth   = "YYYY-MM"
	ShapeQuarter = "YYYY-Qn"
	ShapeYear    = "YYYY"
)

// keyShape returns the shape a summary type's period keys have.
func keyShape(summaryType string) string {
	switch summaryType {
	case SummaryConversation, SummaryDaily:
		return ShapeDay
	case SummaryWeekly:
		return ShapeWeek
	case SummaryMonthly:
		return ShapeMonth
	case SummaryQuarterly:
		return ShapeQuarter
	case SummaryYearly:
		return ShapeYear
	}
	return ""
}

// CheckPeriodKey reports whether key is a valid period key for
// summaryType (an existing calendar day, an ISO week the year has, a
// quarter 1–4, …), as a EINVALID error that says what was expected.
func CheckPeriodKey(summaryType, key string) error {
	shape := keyShape(summaryType)
	if shape == "" {
		return Errorf(EINVALID, "unknown summary type %q", summaryType)
	}
	got, _, _, err := ParsePeriodKey(key)
	if err != nil || got != shape {
		return Errorf(EINVALID, "argument \"period_key\": %q is not a valid %s key for %s", key, shape, summaryType)
	}
	return nil
}

// ParsePeriodKey recognises a period key. n is MMDD for days, the week,
// month or quarter number otherwise.
func ParsePeriodKey(key string) (shape string, year, n int, err error) {
	bad := func() (string, int, int, error) {
		return "", 0, 0, Errorf(EINVALID, "%q is not a period key (YYYY-MM-DD, YYYY-Www, YYYY-MM, YYYY-Qn or YYYY)", key)
	}
	if len(key) < 4 {
		return bad()
	}
	year, ok := digits(key[:4])
	if !ok || year < 1 {
		return bad()
	}
	rest := key[4:]
	switch {
	case rest == "":
		return ShapeYear, year, 0, nil
	case len(rest) == 3 && rest[:2] == "-Q":
		q, ok := digits(rest[2:])
		if !ok || q < 1 || q > 4 {
			return bad()
		}
		return ShapeQuarter, year, q, nil
	case len(rest) == 4 && rest[:2] == "-W":
		w, ok := digits(rest[2:])
		if !ok || w < 1 || w > 53 {
			return bad()
		}
		if _, last := time.Date(year, 12, 28, 0, 0, 0, 0, time.UTC).ISOWeek(); w > last {
			return bad() // week 53 of a year with 52 weeks
		}
		return ShapeWeek, year, w, nil
	case len(rest) == 3 && rest[0] == '-':
		m, ok := digits(rest[1:])
		if !ok || m < 1 || m > 12 {
			return bad()
		}
		return ShapeMonth, year, m, nil
	case len(rest) == 6 && rest[0] == '-' && rest[3] == '-':
		m, ok1 := digits(rest[1:3])
		d, ok2 := digits(rest[4:])
		if !ok1 || !ok2 || m < 1 || m > 12 || d < 1 {
			return bad()
		}
		if t := time.Date(year, time.Month(m), d, 0, 0, 0, 0, time.UTC); t.Day() != d {
			return bad() // 2026-02-30
		}
		return ShapeDay, year, m*100 + d, nil
	}
	return bad()
}

// digits parses an all-ASCII-digit string.
func digits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
