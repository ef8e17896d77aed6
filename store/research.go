package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/kairos-agent/kairos"
)

// ResearchStore implements kairos.ResearchStore (traces and their
// evidence ledgers) and kairos.ResearchIndex (the offline folder's
// full-text index: FTS5 with bm25 on SQLite, title weighted 3, text 1;
// ts_rank over a generated tsvector on PostgreSQL, title A, text B).
type ResearchStore struct{ db *DB }

var (
	_ kairos.ResearchStore = (*ResearchStore)(nil)
	_ kairos.ResearchIndex = (*ResearchStore)(nil)
)

// NewResearchStore returns the research repository of db.
func NewResearchStore(db *DB) *ResearchStore { return &ResearchStore{db: db} }

func (s *ResearchStore) gdb(ctx context.Context) *gorm.DB { return s.db.gdb.WithContext(ctx) }

type traceRow struct {
	ID          string
	UserKey     string
	ThreadKey   string
	Question    string
	QuestionKey string
	Depth       string
	Status      string
	Tainted     bool
	State       string
	Answer      string
	CreatedAt   int64 `gorm:"autoCreateTime:false"`
	UpdatedAt   int64 `gorm:"autoUpdateTime:false"`
}

func (traceRow) TableName() string { return "research_traces" }

func (r *traceRow) domain() *kairos.ResearchTrace {
	t := &kairos.ResearchTrace{ID: r.ID, UserKey: r.UserKey, ThreadKey: r.ThreadKey, Question: r.Question,
		QuestionKey: r.QuestionKey, Depth: r.Depth, Status: r.Status, Tainted: r.Tainted,
		CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt)}
	if r.State != "" {
		t.State = []byte(r.State)
	}
	if r.Answer != "" {
		t.Answer = []byte(r.Answer)
	}
	return t
}

func traceState(t *kairos.ResearchTrace) string {
	if len(t.State) == 0 {
		return "{}"
	}
	return string(t.State)
}

// CreateTrace inserts t; an empty ID gets a new one, zero times get now.
func (s *ResearchStore) CreateTrace(ctx context.Context, t *kairos.ResearchTrace) error {
	if t.UserKey == "" || t.Question == "" {
		return kairos.Errorf(kairos.EINVALID, "a research trace needs a user and a question")
	}
	if t.ID == "" {
		t.ID = kairos.NewID()
	}
	now := s.db.Now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	t.UpdatedAt = t.CreatedAt
	row := traceRow{ID: t.ID, UserKey: t.UserKey, ThreadKey: t.ThreadKey, Question: t.Question, QuestionKey: t.QuestionKey,
		Depth: t.Depth, Status: t.Status, Tainted: t.Tainted, State: traceState(t), Answer: string(t.Answer),
		CreatedAt: ms(t.CreatedAt), UpdatedAt: ms(t.UpdatedAt)}
	if err := s.gdb(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("create research trace: %w", err)
	}
	return nil
}

// SaveTrace writes t's status, taint, state and answer.
func (s *ResearchStore) SaveTrace(ctx context.Context, t *kairos.ResearchTrace) error {
	t.UpdatedAt = s.db.Now()
	res := s.gdb(ctx).Model(&traceRow{}).Where("id = ?", t.ID).Updates(map[string]any{
		"status": t.Status, "tainted": t.Tainted, "state": traceState(t), "answer": string(t.Answer), "updated_at": ms(t.UpdatedAt)})
	if res.Error != nil {
		return fmt.Errorf("save research trace: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "no research trace %s", t.ID)
	}
	return nil
}

func (s *ResearchStore) oneTrace(q *gorm.DB, what string) (*kairos.ResearchTrace, error) {
	var row traceRow
	err := q.Order("created_at DESC, id DESC").Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no %s", what)
	}
	if err != nil {
		return nil, fmt.Errorf("read research trace: %w", err)
	}
	return row.domain(), nil
}

// Trace returns one trace, of the user when userKey is set.
func (s *ResearchStore) Trace(ctx context.Context, userKey, id string) (*kairos.ResearchTrace, error) {
	q := s.gdb(ctx).Where("id = ?", id)
	if userKey != "" {
		q = q.Where("user_key = ?", userKey)
	}
	return s.oneTrace(q, "such research trace")
}

// RunningTrace returns the user's newest running trace of the question
// updated at or after since.
func (s *ResearchStore) RunningTrace(ctx context.Context, userKey, questionKey string, since time.Time) (*kairos.ResearchTrace, error) {
	q := s.gdb(ctx).Where("user_key = ? AND question_key = ? AND status = ? AND updated_at >= ?",
		userKey, questionKey, kairos.ResearchRunning, ms(since))
	return s.oneTrace(q, "running research trace")
}

// LastTrace returns the user's newest trace.
func (s *ResearchStore) LastTrace(ctx context.Context, userKey string) (*kairos.ResearchTrace, error) {
	return s.oneTrace(s.gdb(ctx).Where("user_key = ?", userKey), "research yet")
}

// Traces lists traces newest first, one page at a time.
func (s *ResearchStore) Traces(ctx context.Context, userKey string, p kairos.Page) ([]*kairos.ResearchTrace, string, error) {
	n := pageLimit(p.Limit)
	at, id, ok, err := keyCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	q := s.gdb(ctx).Model(&traceRow{})
	if userKey != "" {
		q = q.Where("user_key = ?", userKey)
	}
	if ok {
		q = q.Where("created_at < ? OR (created_at = ? AND id < ?)", at, at, id)
	}
	var rows []traceRow
	if err := q.Order("created_at DESC, id DESC").Limit(n + 1).Find(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("list research traces: %w", err)
	}
	out := make([]*kairos.ResearchTrace, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	out, cur := next(out, n, func(t *kairos.ResearchTrace) string {
		return strconv.FormatInt(ms(t.CreatedAt), 10) + "/" + t.ID
	})
	return out, cur, nil
}

type evidenceRow struct {
	TraceID     string
	Ref         string
	Seq         int
	Tier        string
	Title       string
	URL         string `gorm:"column:url"`
	Path        string
	Text        string
	RetrievedAt int64
	PublishedAt int64
	Tainted     bool
}

func (evidenceRow) TableName() string { return "research_evidence" }

// AddEvidence stores e in its trace's ledger.
func (s *ResearchStore) AddEvidence(ctx context.Context, e *kairos.Evidence) error {
	if e.TraceID == "" || e.Ref == "" {
		return kairos.Errorf(kairos.EINVALID, "evidence needs a trace and a ref")
	}
	var pub int64
	if !e.PublishedAt.IsZero() {
		pub = ms(e.PublishedAt)
	}
	row := evidenceRow{TraceID: e.TraceID, Ref: e.Ref, Tier: e.Tier, Title: e.Title, URL: e.URL, Path: e.Path, Text: e.Text,
		RetrievedAt: ms(e.RetrievedAt), PublishedAt: pub, Tainted: e.Tainted}
	if n, err := strconv.Atoi(e.Ref[1:]); err == nil {
		row.Seq = n
	}
	err := s.gdb(ctx).Create(&row).Error
	if err != nil && clockUniqueViolation(err) {
		return kairos.Errorf(kairos.ECONFLICT, "evidence %s of trace %s exists", e.Ref, e.TraceID)
	}
	if err != nil {
		return fmt.Errorf("add evidence: %w", err)
	}
	return nil
}

// Evidence returns a trace's ledger in the order it was read.
func (s *ResearchStore) Evidence(ctx context.Context, traceID string) ([]*kairos.Evidence, error) {
	var rows []evidenceRow
	if err := s.gdb(ctx).Where("trace_id = ?", traceID).Order("seq, ref").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read evidence: %w", err)
	}
	out := make([]*kairos.Evidence, len(rows))
	for i, r := range rows {
		out[i] = &kairos.Evidence{TraceID: r.TraceID, Ref: r.Ref, Tier: r.Tier, Title: r.Title, URL: r.URL, Path: r.Path,
			Text: r.Text, RetrievedAt: fromMS(r.RetrievedAt), Tainted: r.Tainted}
		if r.PublishedAt != 0 {
			out[i].PublishedAt = fromMS(r.PublishedAt)
		}
	}
	return out, nil
}
