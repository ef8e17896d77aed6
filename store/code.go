package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// CodeStore implements kairos.CodeExecutionStore over the code_executions
// table (migration 000003).
//
// Status: an execution recorded without an outcome — Success false and no
// ErrorCategory — is an asynchronous job still running and is stored with
// status 'running'; recording it again (same ID) with its outcome marks it
// 'done'. Only done executions count in CodeStats and CodeFailures.
type CodeStore struct{ db *DB }

var _ kairos.CodeExecutionStore = (*CodeStore)(nil)

// NewCodeStore returns the code-execution repository of db.
func NewCodeStore(db *DB) *CodeStore { return &CodeStore{db: db} }

// Execution statuses (the status column).
const (
	CodeStatusRunning = "running"
	CodeStatusDone    = "done"
)

// Limits of CodeFailures.
const (
	DefaultCodeFailures = 5
	MaxCodeFailures     = 100
)

type codeExecutionRow struct {
	ID             string `gorm:"primaryKey"`
	Code           string
	Stdout         string
	Stderr         string
	ExitCode       int
	DurationMS     int64 `gorm:"column:duration_ms"`
	Success        bool
	SessionID      string
	UserKey        string
	TriggerMessage string
	LLMReasoning   string `gorm:"column:llm_reasoning"`
	ErrorCategory  string
	Verb           string
	RiskTier       string
	Result         string
	Status         string
	CreatedAt      int64 `gorm:"autoCreateTime:false"`
}

func (codeExecutionRow) TableName() string { return "code_executions" }

func (r *codeExecutionRow) domain() *kairos.CodeExecution {
	return &kairos.CodeExecution{
		ID: r.ID, Code: r.Code, Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode,
		DurationMS: r.DurationMS, Success: r.Success, SessionID: r.SessionID, UserKey: r.UserKey,
		TriggerMessage: r.TriggerMessage, LLMReasoning: r.LLMReasoning, ErrorCategory: r.ErrorCategory,
		Verb: r.Verb, RiskTier: r.RiskTier, Result: r.Result, CreatedAt: fromMS(r.CreatedAt),
	}
}

// cleanText makes text storable on both dialects: PostgreSQL's TEXT
// refuses NUL bytes and invalid UTF-8, which cell output may contain.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}

// codeUpdateColumns are overwritten when an execution is recorded again;
// id and created_at keep their first values.
var codeUpdateColumns = []string{
	"code", "stdout", "stderr", "exit_code", "duration_ms", "success", "session_id", "user_key",
	"trigger_message", "llm_reasoning", "error_category", "verb", "risk_tier", "result", "status",
}

// RecordExecution inserts e, or updates the execution with e's ID. An
// empty ID is filled with a new UUID and a zero CreatedAt with the store's
// clock, both written back into e. Text is stored with NUL bytes and
// invalid UTF-8 replaced by U+FFFD.
func (s *CodeStore) RecordExecution(ctx context.Context, e *kairos.CodeExecution) error {
	if e == nil {
		return kairos.Errorf(kairos.EINVALID, "no code execution to record")
	}
	if e.ID == "" {
		e.ID = kairos.NewID()
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.db.Now()
	}
	status := CodeStatusDone
	if !e.Success && e.ErrorCategory == "" {
		status = CodeStatusRunning
	}
	r := codeExecutionRow{
		ID: e.ID, Code: cleanText(e.Code), Stdout: cleanText(e.Stdout), Stderr: cleanText(e.Stderr),
		ExitCode: e.ExitCode, DurationMS: e.DurationMS, Success: e.Success,
		SessionID: e.SessionID, UserKey: e.UserKey, TriggerMessage: cleanText(e.TriggerMessage),
		LLMReasoning: cleanText(e.LLMReasoning), ErrorCategory: e.ErrorCategory, Verb: e.Verb,
		RiskTier: e.RiskTier, Result: cleanText(e.Result), Status: status, CreatedAt: ms(e.CreatedAt),
	}
	err := s.db.gdb.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns(codeUpdateColumns),
	}).Create(&r).Error
	if err != nil {
		return fmt.Errorf("record code execution: %w", err)
	}
	return nil
}

// FindExecution returns an execution by id (ENOTFOUND when there is none).
func (s *CodeStore) FindExecution(ctx context.Context, id string) (*kairos.CodeExecution, error) {
	var r codeExecutionRow
	err := s.db.gdb.WithContext(ctx).Where("id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "code execution %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find code execution: %w", err)
	}
	return r.domain(), nil
}

// CodeStats returns the totals of the done executions created at or after
// since, with the error categories of the failures, most frequent first
// (ties by name).
func (s *CodeStore) CodeStats(ctx context.Context, since time.Time) (*kairos.CodeStats, error) {
	g := s.db.gdb.WithContext(ctx)
	scope := func() *gorm.DB {
		return g.Model(&codeExecutionRow{}).Where("status = ? AND created_at >= ?", CodeStatusDone, ms(since))
	}
	var totals struct {
		Total     int64
		Successes int64
		AvgMS     float64
	}
	err := scope().Select(
		"COUNT(*) AS total, " +
			"COALESCE(SUM(CASE WHEN success THEN 1 ELSE 0 END), 0) AS successes, " +
			"COALESCE(AVG(CAST(duration_ms AS DOUBLE PRECISION)), 0) AS avg_ms").
		Scan(&totals).Error
	if err != nil {
		return nil, fmt.Errorf("code stats: %w", err)
	}
	var cats []struct {
		Category string
		N        int64
	}
	err = scope().Where("success = ?", false).
		Select("error_category AS category, COUNT(*) AS n").
		Group("error_category").Order("n DESC, category").Scan(&cats).Error
	if err != nil {
		return nil, fmt.Errorf("code stats by category: %w", err)
	}
	st := &kairos.CodeStats{
		Total:         int(totals.Total),
		Successes:     int(totals.Successes),
		Failures:      int(totals.Total - totals.Successes),
		AvgDurationMS: totals.AvgMS,
		Categories:    make([]kairos.CategoryCount, 0, len(cats)),
	}
	for _, c := range cats {
		st.Categories = append(st.Categories, kairos.CategoryCount{Category: c.Category, Count: int(c.N)})
	}
	return st, nil
}

// CodeFailures returns the last n done failures, newest first. n <= 0
// means DefaultCodeFailures; more than MaxCodeFailures are never returned.
func (s *CodeStore) CodeFailures(ctx context.Context, n int) ([]*kairos.CodeExecution, error) {
	if n <= 0 {
		n = DefaultCodeFailures
	}
	n = min(n, MaxCodeFailures)
	var rows []codeExecutionRow
	err := s.db.gdb.WithContext(ctx).
		Where("success = ? AND status = ?", false, CodeStatusDone).
		Order("created_at DESC, id DESC").Limit(n).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("code failures: %w", err)
	}
	out := make([]*kairos.CodeExecution, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}

// PruneExecutions deletes every execution created before `before` and
// returns how many it deleted.
func (s *CodeStore) PruneExecutions(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.gdb.WithContext(ctx).Where("created_at < ?", ms(before)).Delete(&codeExecutionRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("prune code executions: %w", res.Error)
	}
	return res.RowsAffected, nil
}
