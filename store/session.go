package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// SessionStore implements kairos.SessionStore.
type SessionStore struct{ db *DB }

var _ kairos.SessionStore = (*SessionStore)(nil)

// NewSessionStore returns the session repository of db.
func NewSessionStore(db *DB) *SessionStore { return &SessionStore{db: db} }

type sessionRow struct {
	ID                string `gorm:"primaryKey"`
	ThreadKey         string
	UserKey           string
	Name              string
	StartedAt         int64
	EndedAt           *int64
	Summary           string
	PrevSessionID     string
	RunningSummary    string
	SummarizedThrough int64
	Tainted           bool
}

func (sessionRow) TableName() string { return "sessions" }

func (r *sessionRow) domain() *kairos.Session {
	return &kairos.Session{
		ID: r.ID, ThreadKey: r.ThreadKey, UserKey: r.UserKey, Name: r.Name,
		StartedAt: fromMS(r.StartedAt), EndedAt: fromMSP(r.EndedAt), Summary: r.Summary,
		PrevSessionID: r.PrevSessionID, RunningSummary: r.RunningSummary, SummarizedThrough: r.SummarizedThrough,
		Tainted: r.Tainted,
	}
}

type messageRow struct {
	ID         int64 `gorm:"primaryKey;autoIncrement"`
	SessionID  string
	ThreadKey  string
	UserKey    string
	Role       string
	Content    string
	ToolCalls  string
	ToolCallID string
	Name       string
	Tainted    bool
	CreatedAt  int64 `gorm:"autoCreateTime:false"`
}

func (messageRow) TableName() string { return "messages" }

// OpenSession returns the thread's open session, creating one at `at`.
func (s *SessionStore) OpenSession(ctx context.Context, threadKey, userKey string, at time.Time) (*kairos.Session, error) {
	g := s.db.hot.WithContext(ctx)
	for attempt := 0; attempt < 3; attempt++ {
		r, err := s.openSession(ctx, threadKey)
		if err == nil {
			return r.domain(), nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("find open session: %w", err)
		}
		prev := ""
		var last sessionRow
		if err := g.Where("thread_key = ? AND ended_at IS NOT NULL", threadKey).Order("ended_at DESC").Take(&last).Error; err == nil {
			prev = last.ID
		}
		r = &sessionRow{ID: kairos.NewID(), ThreadKey: threadKey, UserKey: userKey, StartedAt: ms(at), PrevSessionID: prev}
		// The partial unique index on open sessions makes a racing
		// creator lose; it then reads the winner's row.
		res := g.Clauses(clause.OnConflict{DoNothing: true}).Create(r)
		if res.Error != nil {
			return nil, fmt.Errorf("create session: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			return r.domain(), nil
		}
	}
	return nil, kairos.Errorf(kairos.ECONFLICT, "could not open a session for %s", threadKey)
}

// openSession reads the thread's open session (sql.ErrNoRows: none), by a
// statement prepared once: every turn asks.
func (s *SessionStore) openSession(ctx context.Context, threadKey string) (*sessionRow, error) {
	var r sessionRow
	var ended sql.NullInt64
	err := s.db.queryRow(ctx, `SELECT id, thread_key, user_key, name, started_at, ended_at, summary, prev_session_id,
		running_summary, summarized_through, tainted FROM sessions WHERE thread_key = ? AND ended_at IS NULL`, threadKey).
		Scan(&r.ID, &r.ThreadKey, &r.UserKey, &r.Name, &r.StartedAt, &ended, &r.Summary, &r.PrevSessionID,
			&r.RunningSummary, &r.SummarizedThrough, &r.Tainted)
	if ended.Valid {
		r.EndedAt = &ended.Int64
	}
	return &r, err
}

// FindSession returns a session by id.
func (s *SessionStore) FindSession(ctx context.Context, id string) (*kairos.Session, error) {
	var r sessionRow
	err := s.db.gdb.WithContext(ctx).Where("id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "session %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	return r.domain(), nil
}

// LastEndedSession returns the most recently ended session of a thread.
func (s *SessionStore) LastEndedSession(ctx context.Context, threadKey string) (*kairos.Session, error) {
	var r sessionRow
	err := s.db.gdb.WithContext(ctx).Where("thread_key = ? AND ended_at IS NOT NULL", threadKey).Order("ended_at DESC").Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no ended session for %s", threadKey)
	}
	if err != nil {
		return nil, fmt.Errorf("find last session: %w", err)
	}
	return r.domain(), nil
}

// EndSession ends a session with its summary and opens the next one.
func (s *SessionStore) EndSession(ctx context.Context, id, summary string, at time.Time, nextName string) (*kairos.Session, error) {
	var next *kairos.Session
	err := s.db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cur sessionRow
		if err := tx.Where("id = ?", id).Take(&cur).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return kairos.Errorf(kairos.ENOTFOUND, "session %s not found", id)
			}
			return err
		}
		res := tx.Model(&sessionRow{}).Where("id = ? AND ended_at IS NULL", id).
			Updates(map[string]any{"ended_at": ms(at), "summary": summary})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return kairos.Errorf(kairos.ECONFLICT, "session %s already ended", id)
		}
		n := sessionRow{ID: kairos.NewID(), ThreadKey: cur.ThreadKey, UserKey: cur.UserKey, Name: nextName, StartedAt: ms(at), PrevSessionID: id}
		if err := tx.Create(&n).Error; err != nil {
			return err
		}
		next = n.domain()
		return nil
	})
	if err != nil {
		if kairos.ErrorCode(err) != kairos.EINTERNAL {
			return nil, err
		}
		return nil, fmt.Errorf("end session: %w", err)
	}
	return next, nil
}

// UpdateRunningSummary replaces the running summary of trimmed turns.
func (s *SessionStore) UpdateRunningSummary(ctx context.Context, id, summary string, throughID int64) error {
	err := s.db.gdb.WithContext(ctx).Model(&sessionRow{}).Where("id = ?", id).
		Updates(map[string]any{"running_summary": summary, "summarized_through": throughID}).Error
	if err != nil {
		return fmt.Errorf("update running summary: %w", err)
	}
	return nil
}

// ListOpenSessions lists the open sessions.
func (s *SessionStore) ListOpenSessions(ctx context.Context) ([]*kairos.Session, error) {
	var rows []sessionRow
	if err := s.db.gdb.WithContext(ctx).Where("ended_at IS NULL").Order("started_at").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list open sessions: %w", err)
	}
	return sessionsOf(rows), nil
}

// ListEndedSessions lists sessions that ended in [from, to).
func (s *SessionStore) ListEndedSessions(ctx context.Context, from, to time.Time) ([]*kairos.Session, error) {
	var rows []sessionRow
	err := s.db.gdb.WithContext(ctx).Where("ended_at >= ? AND ended_at < ?", ms(from), ms(to)).Order("ended_at").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list ended sessions: %w", err)
	}
	return sessionsOf(rows), nil
}

func sessionsOf(rows []sessionRow) []*kairos.Session {
	out := make([]*kairos.Session, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out
}

// AppendMessages stores messages in order and sets their IDs.
func (s *SessionStore) AppendMessages(ctx context.Context, msgs ...*kairos.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	rows := make([]messageRow, len(msgs))
	for i, m := range msgs {
		calls := ""
		if len(m.ToolCalls) > 0 {
			b, err := json.Marshal(m.ToolCalls)
			if err != nil {
				return fmt.Errorf("encode tool calls: %w", err)
			}
			calls = string(b)
		}
		at := m.CreatedAt
		if at.IsZero() {
			at = s.db.Now()
		}
		rows[i] = messageRow{SessionID: m.SessionID, ThreadKey: m.ThreadKey, UserKey: m.UserKey, Role: m.Role,
			Content: m.Content, ToolCalls: calls, ToolCallID: m.ToolCallID, Name: m.Name, Tainted: m.Tainted, CreatedAt: ms(at)}
	}
	// Under DeferWrites the messages commit with the turn's outbox intent
	// (their IDs are set then).
	err := s.db.write(ctx, func(ctx context.Context, tx *hotTx) error {
		tainted := map[string]bool{}
		for i, r := range rows {
			if err := tx.queryRow(ctx, `INSERT INTO messages (session_id, thread_key, user_key, role, content, tool_calls, tool_call_id, name, tainted, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, r.SessionID, r.ThreadKey, r.UserKey, r.Role, r.Content, r.ToolCalls,
				r.ToolCallID, r.Name, r.Tainted, r.CreatedAt).Scan(&msgs[i].ID); err != nil {
				return err
			}
			if rows[i].Tainted {
				tainted[rows[i].SessionID] = true
			}
		}
		// A session holding untrusted content stays marked (its history
		// and summaries are read as untrusted), in the same transaction.
		for id := range tainted {
			if _, err := tx.exec(ctx, `UPDATE sessions SET tainted = ? WHERE id = ? AND NOT tainted`, true, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append messages: %w", err)
	}
	return nil
}

// Messages returns the session's messages after afterID in order (every
// turn reads its history: a statement prepared once, scanned by hand).
func (s *SessionStore) Messages(ctx context.Context, sessionID string, afterID int64, limit int) ([]*kairos.Message, error) {
	q := `SELECT id, session_id, thread_key, user_key, role, content, tool_calls, tool_call_id, name, tainted, created_at
		FROM messages WHERE session_id = ? AND id > ? ORDER BY id`
	args := []any{sessionID, afterID}
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	st, err := s.db.stmt(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	defer rows.Close()
	var out []*kairos.Message
	for rows.Next() {
		var r messageRow
		if err := rows.Scan(&r.ID, &r.SessionID, &r.ThreadKey, &r.UserKey, &r.Role, &r.Content, &r.ToolCalls, &r.ToolCallID,
			&r.Name, &r.Tainted, &r.CreatedAt); err != nil {
			return nil, fmt.Errorf("list messages: %w", err)
		}
		m := &kairos.Message{ID: r.ID, SessionID: r.SessionID, ThreadKey: r.ThreadKey, UserKey: r.UserKey, Role: r.Role,
			Content: r.Content, ToolCallID: r.ToolCallID, Name: r.Name, Tainted: r.Tainted, CreatedAt: fromMS(r.CreatedAt)}
		if r.ToolCalls != "" {
			if err := json.Unmarshal([]byte(r.ToolCalls), &m.ToolCalls); err != nil {
				return nil, fmt.Errorf("decode tool calls of message %d: %w", r.ID, err)
			}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	return out, nil
}

type toolCallRow struct {
	ID         string `gorm:"primaryKey"`
	SessionID  string `gorm:"primaryKey"`
	ThreadKey  string
	UserKey    string
	Tool       string
	Action     string
	Arguments  string
	Result     string
	Outcome    string
	Envelope   string
	Mode       string
	Tainted    bool
	Approval   string
	DurationMS int64 `gorm:"column:duration_ms"`
	CreatedAt  int64 `gorm:"autoCreateTime:false"`
}

func (toolCallRow) TableName() string { return "tool_calls" }

// RecordToolCall journals a tool call (a repeated id updates the entry).
func (s *SessionStore) RecordToolCall(ctx context.Context, rec *kairos.ToolCallRecord) error {
	at := rec.CreatedAt
	if at.IsZero() {
		at = s.db.Now()
	}
	r := toolCallRow{ID: rec.ID, SessionID: rec.SessionID, ThreadKey: rec.ThreadKey, UserKey: rec.UserKey, Tool: rec.Tool,
		Action: rec.Action, Arguments: rec.Arguments, Result: rec.Result, Outcome: rec.Outcome, Envelope: rec.Envelope,
		Mode: rec.Mode, Tainted: rec.Tainted, Approval: rec.Approval, DurationMS: rec.DurationMS, CreatedAt: ms(at)}
	err := s.db.gdb.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(&r).Error
	if err != nil {
		return fmt.Errorf("record tool call: %w", err)
	}
	return nil
}

// toolCallOrder orders the journal by time and, within one millisecond, by
// insertion: the ids are the model's or random and say nothing about order.
// The tie is broken by insertion: SQLite's rowid (kept by an upsert),
// PostgreSQL's seq column (migration 000028; an upsert keeps it too).
func (s *SessionStore) toolCallOrder() string {
	if s.db.dialect == DialectPostgres {
		return "created_at, seq"
	}
	return "created_at, rowid"
}

// ToolCalls lists the journal of a session in the order it was written (for
// tests and /policy).
func (s *SessionStore) ToolCalls(ctx context.Context, sessionID string) ([]*kairos.ToolCallRecord, error) {
	var rows []toolCallRow
	if err := s.db.gdb.WithContext(ctx).Where("session_id = ?", sessionID).Order(s.toolCallOrder()).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list tool calls: %w", err)
	}
	out := make([]*kairos.ToolCallRecord, len(rows))
	for i, r := range rows {
		out[i] = &kairos.ToolCallRecord{ID: r.ID, SessionID: r.SessionID, ThreadKey: r.ThreadKey, UserKey: r.UserKey,
			Tool: r.Tool, Action: r.Action, Arguments: r.Arguments, Result: r.Result, Outcome: r.Outcome, Envelope: r.Envelope,
			Mode: r.Mode, Tainted: r.Tainted, Approval: r.Approval, DurationMS: r.DurationMS, CreatedAt: fromMS(r.CreatedAt)}
	}
	return out, nil
}

type usageRow struct {
	ID               int64 `gorm:"primaryKey;autoIncrement"`
	SessionID        string
	UserKey          string
	Model            string
	PromptTokens     int
	CompletionTokens int
	AudioMS          int64
	CreatedAt        int64 `gorm:"autoCreateTime:false"`
}

func (usageRow) TableName() string { return "token_usage" }

// RecordUsage records the token usage of one model call.
func (s *SessionStore) RecordUsage(ctx context.Context, rec *kairos.UsageRecord) error {
	at := rec.CreatedAt
	if at.IsZero() {
		at = s.db.Now()
	}
	// Deferred under DeferWrites: usage commits with the turn.
	err := s.db.write(ctx, func(ctx context.Context, tx *hotTx) error {
		_, err := tx.exec(ctx, `INSERT INTO token_usage (session_id, user_key, model, prompt_tokens, completion_tokens, audio_ms, created_at,
			thread_key, kind, cached_tokens, images, cost_nusd, priced, estimated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, rec.SessionID, rec.UserKey, rec.Model, rec.PromptTokens, rec.CompletionTokens,
			rec.Audio.Milliseconds(), ms(at), rec.ThreadKey, spendKind(rec.Kind), rec.CachedTokens, rec.Images, nusd(rec.CostUSD), boolInt(rec.Priced),
			boolInt(rec.Estimated))
		return err
	})
	if err != nil {
		return fmt.Errorf("record usage: %w", err)
	}
	return nil
}

// UsageTotals sums the tokens of a user (userKey) or a session (sessionID).
func (s *SessionStore) UsageTotals(ctx context.Context, userKey, sessionID string) (prompt, completion int64, err error) {
	q := s.db.gdb.WithContext(ctx).Model(&usageRow{})
	if userKey != "" {
		q = q.Where("user_key = ?", userKey)
	}
	if sessionID != "" {
		q = q.Where("session_id = ?", sessionID)
	}
	var t struct{ P, C int64 }
	if err := q.Select("COALESCE(SUM(prompt_tokens),0) AS p, COALESCE(SUM(completion_tokens),0) AS c").Scan(&t).Error; err != nil {
		return 0, 0, fmt.Errorf("usage totals: %w", err)
	}
	return t.P, t.C, nil
}
