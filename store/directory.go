package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

var _ kairos.Directory = (*Directory)(nil)

// Directory is the read side of the query API and the console: keyset
// pages over users, threads, messages, approvals, memories and schedules.
type Directory struct{ db *DB }

// NewDirectory returns the directory of db.
func NewDirectory(db *DB) *Directory { return &Directory{db: db} }

// pageLimit clamps a page size to 1..200 (default 50).
func pageLimit(n int) int {
	switch {
	case n <= 0:
		return 50
	case n > 200:
		return 200
	}
	return n
}

// next returns the cursor after a page of n items read with limit+1.
func next[T any](items []T, limit int, key func(T) string) ([]T, string) {
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	return items, key(items[limit-1])
}

// seqCursor reads a numeric cursor ("" is the start).
func seqCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(c, 10, 64)
	if err != nil || v < 0 {
		return 0, kairos.Errorf(kairos.EINVALID, "cursor %q is not one this list gave", c)
	}
	return v, nil
}

// keyCursor parses a "<ms>/<id>" cursor, as the lists ordered by a time
// and then an id give; ok is false for an empty cursor.
func keyCursor(c string) (msPart int64, id string, ok bool, err error) {
	if c == "" {
		return 0, "", false, nil
	}
	msText, id, found := strings.Cut(c, "/")
	msPart, perr := strconv.ParseInt(msText, 10, 64)
	if !found || perr != nil || id == "" {
		return 0, "", false, kairos.Errorf(kairos.EINVALID, "cursor %q is not one this list gave", c)
	}
	return msPart, id, true, nil
}

// Users lists users by key.
func (d *Directory) Users(ctx context.Context, p kairos.Page) ([]*kairos.UserView, string, error) {
	n := pageLimit(p.Limit)
	var rows []struct {
		UserKey                   string
		DefaultTZ                 string
		LastInteractionAnyChannel int64
		FirstName                 string
		Username                  string
	}
	err := d.db.gdb.WithContext(ctx).Raw(`SELECT u.user_key, u.default_tz, u.last_interaction_any_channel,
		COALESCE(n.first_name, '') AS first_name, COALESCE(n.username, '') AS username
		FROM clock_users u LEFT JOIN user_names n ON n.user_key = u.user_key
		WHERE u.user_key > ? ORDER BY u.user_key LIMIT ?`, p.Cursor, n+1).Scan(&rows).Error
	if err != nil {
		return nil, "", fmt.Errorf("list users: %w", err)
	}
	out := make([]*kairos.UserView, len(rows))
	for i, r := range rows {
		out[i] = &kairos.UserView{Key: r.UserKey, UserName: kairos.UserName{FirstName: r.FirstName, Username: r.Username},
			DefaultTZ: r.DefaultTZ, LastInteraction: optMS(r.LastInteractionAnyChannel)}
	}
	out, cur := next(out, n, func(u *kairos.UserView) string { return u.Key })
	return out, cur, nil
}

type threadViewRow struct {
	ThreadKey        string
	ThreadKind       string
	SessionTZ        string `gorm:"column:session_tz"`
	LastInteraction  int64
	LastUserMessage  int64
	LastAgentMessage int64
}

func (r threadViewRow) view() *kairos.ThreadView {
	return &kairos.ThreadView{Key: r.ThreadKey, Kind: r.ThreadKind, SessionTZ: r.SessionTZ,
		LastInteraction: optMS(r.LastInteraction), LastUserMessage: optMS(r.LastUserMessage), LastAgentMessage: optMS(r.LastAgentMessage)}
}

const threadViewCols = "t.thread_key, t.thread_kind, t.session_tz, t.last_interaction, t.last_user_message, t.last_agent_message"

// Threads lists threads by key.
func (d *Directory) Threads(ctx context.Context, userKey string, p kairos.Page) ([]*kairos.ThreadView, string, error) {
	n := pageLimit(p.Limit)
	var rows []threadViewRow
	q := `SELECT ` + threadViewCols + ` FROM clock_threads t WHERE t.thread_key > ? ORDER BY t.thread_key LIMIT ?`
	args := []any{p.Cursor, n + 1}
	if userKey != "" {
		q = `SELECT ` + threadViewCols + ` FROM clock_threads t JOIN clock_thread_users u ON u.thread_key = t.thread_key
			WHERE u.user_key = ? AND t.thread_key > ? ORDER BY t.thread_key LIMIT ?`
		args = []any{userKey, p.Cursor, n + 1}
	}
	if err := d.db.gdb.WithContext(ctx).Raw(q, args...).Scan(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("list threads: %w", err)
	}
	out := make([]*kairos.ThreadView, len(rows))
	for i, r := range rows {
		out[i] = r.view()
	}
	out, cur := next(out, n, func(t *kairos.ThreadView) string { return t.Key })
	return out, cur, nil
}

// Thread returns one thread.
func (d *Directory) Thread(ctx context.Context, key string) (*kairos.ThreadView, error) {
	var rows []threadViewRow
	if err := d.db.gdb.WithContext(ctx).Raw(`SELECT `+threadViewCols+` FROM clock_threads t WHERE t.thread_key = ?`, key).
		Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("find thread: %w", err)
	}
	if len(rows) == 0 {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no thread %q", key)
	}
	return rows[0].view(), nil
}

// ThreadMessages lists a thread's messages oldest first.
func (d *Directory) ThreadMessages(ctx context.Context, threadKey string, p kairos.Page) ([]*kairos.MessageView, string, error) {
	n := pageLimit(p.Limit)
	after, err := seqCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	var rows []struct {
		ID        int64
		SessionID string
		Role      string
		Content   string
		Tainted   bool
		CreatedAt int64
	}
	err = d.db.gdb.WithContext(ctx).Raw(`SELECT id, session_id, role, content, tainted, created_at FROM messages
		WHERE thread_key = ? AND id > ? ORDER BY id LIMIT ?`, threadKey, after, n+1).Scan(&rows).Error
	if err != nil {
		return nil, "", fmt.Errorf("list messages: %w", err)
	}
	out := make([]*kairos.MessageView, len(rows))
	for i, r := range rows {
		out[i] = &kairos.MessageView{ID: r.ID, SessionID: r.SessionID, Role: r.Role, Content: r.Content, Tainted: r.Tainted, CreatedAt: fromMS(r.CreatedAt)}
	}
	out, cur := next(out, n, func(m *kairos.MessageView) string { return strconv.FormatInt(m.ID, 10) })
	return out, cur, nil
}

// Approvals lists approval requests newest first (by created time, then
// id); the cursor is "<created_ms>/<id>".
func (d *Directory) Approvals(ctx context.Context, status string, p kairos.Page) ([]*kairos.PendingApproval, string, error) {
	n := pageLimit(p.Limit)
	q := d.db.gdb.WithContext(ctx).Model(&approvalRow{})
	if status != "" {
		q = q.Where("status = ?", status)
	}
	msPart, id, ok, err := keyCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	if ok {
		q = q.Where("created_at < ? OR (created_at = ? AND id < ?)", msPart, msPart, id)
	}
	var rows []approvalRow
	if err := q.Order("created_at DESC, id DESC").Limit(n + 1).Find(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("list approvals: %w", err)
	}
	out := make([]*kairos.PendingApproval, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
		out[i].State = nil // the paused turn is the agent's own record
	}
	out, cur := next(out, n, func(a *kairos.PendingApproval) string {
		return strconv.FormatInt(ms(a.CreatedAt), 10) + "/" + a.ID
	})
	return out, cur, nil
}

// Memories lists memories newest first by insertion order.
func (d *Directory) Memories(ctx context.Context, userKey string, p kairos.Page) ([]*kairos.Memory, string, error) {
	n := pageLimit(p.Limit)
	before, err := seqCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	q := `SELECT ` + memoryCols + ` FROM memories m WHERE (? = 0 OR m.seq < ?)`
	args := []any{before, before}
	if userKey != "" {
		q += ` AND m.user_key = ?`
		args = append(args, userKey)
	}
	q += ` ORDER BY m.seq DESC LIMIT ?`
	args = append(args, n+1)
	var rows []memoryRow
	if err := d.db.gdb.WithContext(ctx).Raw(q, args...).Scan(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("list memories: %w", err)
	}
	cur := ""
	if len(rows) > n {
		rows = rows[:n]
		cur = strconv.FormatInt(rows[n-1].Seq, 10)
	}
	out := make([]*kairos.Memory, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, cur, nil
}

// SchedulePage lists active schedules by next run, then id, of one
// Telegram user when userID is not 0; the cursor is "<next_run_ms>/<id>"
// of the page's last schedule (one that fires while the pages are read
// moves later in the order, and may be listed again).
func (d *Directory) SchedulePage(ctx context.Context, userID int64, p kairos.Page) ([]*kairos.Schedule, string, error) {
	n := pageLimit(p.Limit)
	q := d.db.gdb.WithContext(ctx).Where("status = ?", kairos.ScheduleActive)
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	run, idText, ok, err := keyCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	if ok {
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil {
			return nil, "", kairos.Errorf(kairos.EINVALID, "cursor %q is not one this list gave", p.Cursor)
		}
		q = q.Where("next_run > ? OR (next_run = ? AND id > ?)", run, run, id)
	}
	var rows []scheduleRow
	if err := q.Order("next_run, id").Limit(n + 1).Find(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("list schedules: %w", err)
	}
	out := make([]*kairos.Schedule, len(rows))
	for i := range rows {
		out[i] = rows[i].schedule()
	}
	out, cur := next(out, n, func(s *kairos.Schedule) string {
		return strconv.FormatInt(ms(s.NextRun), 10) + "/" + strconv.FormatInt(s.ID, 10)
	})
	return out, cur, nil
}

// Counts counts users and pending approval requests.
func (d *Directory) Counts(ctx context.Context) (users, pending int, err error) {
	var n struct{ Users, Pending int }
	err = d.db.gdb.WithContext(ctx).Raw(`SELECT (SELECT COUNT(*) FROM clock_users) AS users,
		(SELECT COUNT(*) FROM approvals WHERE status = ?) AS pending`, kairos.ApprovalPending).Scan(&n).Error
	if err != nil {
		return 0, 0, fmt.Errorf("count users and approvals: %w", err)
	}
	return n.Users, n.Pending, nil
}

// optMS is a stored millisecond time where 0 means never.
func optMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return fromMS(v)
}
