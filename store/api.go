package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

var _ kairos.APIStore = (*APIStore)(nil)

// APIStore keeps the query API's tokens and write record and the
// console's sign-in links and sessions.
type APIStore struct{ db *DB }

// NewAPIStore returns the API store of db.
func NewAPIStore(db *DB) *APIStore { return &APIStore{db: db} }

type apiTokenRow struct {
	ID         string `gorm:"primaryKey"`
	Name       string
	Scope      string
	Hash       string
	CreatedAt  int64 `gorm:"autoCreateTime:false"`
	LastUsedAt int64
	RevokedAt  int64
}

func (apiTokenRow) TableName() string { return "api_tokens" }

func (r *apiTokenRow) domain() *kairos.APIToken {
	t := &kairos.APIToken{ID: r.ID, Name: r.Name, Scope: r.Scope, CreatedAt: fromMS(r.CreatedAt)}
	if r.LastUsedAt != 0 {
		t.LastUsedAt = fromMS(r.LastUsedAt)
	}
	if r.RevokedAt != 0 {
		t.RevokedAt = fromMS(r.RevokedAt)
	}
	return t
}

// CreateAPIToken stores a token under the hash of its secret.
// A scope that is not one of kairos.Scopes is refused (EINVALID).
func (s *APIStore) CreateAPIToken(ctx context.Context, t *kairos.APIToken, hash string) error {
	if !slices.Contains(kairos.Scopes, t.Scope) {
		return kairos.Errorf(kairos.EINVALID, "scope %q is not one of %s", t.Scope, strings.Join(kairos.Scopes, ", "))
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = s.db.Now()
	}
	r := apiTokenRow{ID: t.ID, Name: t.Name, Scope: t.Scope, Hash: hash, CreatedAt: ms(t.CreatedAt)}
	if err := s.db.gdb.WithContext(ctx).Create(&r).Error; err != nil {
		return fmt.Errorf("create api token: %w", err)
	}
	return nil
}

// APITokenByHash finds a token in force and records its use (at most once
// a minute, so reads do not turn every request into a write).
func (s *APIStore) APITokenByHash(ctx context.Context, hash string, at time.Time) (*kairos.APIToken, error) {
	var rows []apiTokenRow
	if err := s.db.gdb.WithContext(ctx).Where("hash = ? AND revoked_at = 0", hash).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find api token: %w", err)
	}
	if len(rows) == 0 {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "unknown or revoked token")
	}
	r := rows[0]
	if ms(at)-r.LastUsedAt >= time.Minute.Milliseconds() {
		if err := s.db.gdb.WithContext(ctx).Model(&apiTokenRow{}).Where("id = ?", r.ID).
			Update("last_used_at", ms(at)).Error; err != nil {
			return nil, fmt.Errorf("record api token use: %w", err)
		}
		r.LastUsedAt = ms(at)
	}
	return r.domain(), nil
}

// APITokens lists every token, oldest first.
func (s *APIStore) APITokens(ctx context.Context) ([]*kairos.APIToken, error) {
	var rows []apiTokenRow
	if err := s.db.gdb.WithContext(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list api tokens: %w", err)
	}
	out := make([]*kairos.APIToken, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}

// RevokeAPIToken revokes a token in force.
func (s *APIStore) RevokeAPIToken(ctx context.Context, id string, at time.Time) error {
	res := s.db.gdb.WithContext(ctx).Model(&apiTokenRow{}).Where("id = ? AND revoked_at = 0", id).Update("revoked_at", ms(at))
	if res.Error != nil {
		return fmt.Errorf("revoke api token: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "no token in force has the id %q", id)
	}
	return nil
}

type apiWriteRow struct {
	ID        int64 `gorm:"primaryKey"`
	Actor     string
	Method    string
	Path      string
	Status    int
	CreatedAt int64 `gorm:"autoCreateTime:false"`
}

func (apiWriteRow) TableName() string { return "api_writes" }

// RecordAPIWrite appends one write to the record.
func (s *APIStore) RecordAPIWrite(ctx context.Context, w *kairos.APIWrite) error {
	if w.CreatedAt.IsZero() {
		w.CreatedAt = s.db.Now()
	}
	r := apiWriteRow{Actor: w.Actor, Method: w.Method, Path: w.Path, Status: w.Status, CreatedAt: ms(w.CreatedAt)}
	if err := s.db.gdb.WithContext(ctx).Create(&r).Error; err != nil {
		return fmt.Errorf("record api write: %w", err)
	}
	return nil
}

// APIWrites lists the newest writes first.
func (s *APIStore) APIWrites(ctx context.Context, limit int) ([]*kairos.APIWrite, error) {
	var rows []apiWriteRow
	if err := s.db.gdb.WithContext(ctx).Order("id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list api writes: %w", err)
	}
	out := make([]*kairos.APIWrite, len(rows))
	for i, r := range rows {
		out[i] = &kairos.APIWrite{Actor: r.Actor, Method: r.Method, Path: r.Path, Status: r.Status, CreatedAt: fromMS(r.CreatedAt)}
	}
	return out, nil
}

// CreateConsoleLink stores a sign-in link.
func (s *APIStore) CreateConsoleLink(ctx context.Context, hash string, userID int64, expires time.Time) error {
	err := s.db.gdb.WithContext(ctx).Exec(`INSERT INTO console_links (hash, user_id, expires_at, used_at) VALUES (?, ?, ?, 0)`,
		hash, userID, ms(expires)).Error
	if err != nil {
		return fmt.Errorf("create console link: %w", err)
	}
	return nil
}

// UseConsoleLink spends a link with one conditional update, so two
// browsers racing for the same link cannot both sign in.
func (s *APIStore) UseConsoleLink(ctx context.Context, hash string, at time.Time) (int64, error) {
	res := s.db.gdb.WithContext(ctx).Exec(`UPDATE console_links SET used_at = ? WHERE hash = ? AND used_at = 0 AND expires_at > ?`,
		ms(at), hash, ms(at))
	if res.Error != nil {
		return 0, fmt.Errorf("use console link: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return 0, kairos.Errorf(kairos.ENOTFOUND, "This sign-in link is unknown, used or expired; send /console for a new one.")
	}
	var uid int64
	if err := s.db.gdb.WithContext(ctx).Raw(`SELECT user_id FROM console_links WHERE hash = ?`, hash).Scan(&uid).Error; err != nil {
		return 0, fmt.Errorf("use console link: %w", err)
	}
	return uid, nil
}

// CreateConsoleSession stores a session.
func (s *APIStore) CreateConsoleSession(ctx context.Context, hash string, cs *kairos.ConsoleSession) error {
	err := s.db.gdb.WithContext(ctx).Exec(`INSERT INTO console_sessions (hash, user_id, csrf, created_at, expires_at, ended_at)
		VALUES (?, ?, ?, ?, ?, 0)`, hash, cs.UserID, cs.CSRF, ms(cs.CreatedAt), ms(cs.ExpiresAt)).Error
	if err != nil {
		return fmt.Errorf("create console session: %w", err)
	}
	return nil
}

// ConsoleSession returns a live session.
func (s *APIStore) ConsoleSession(ctx context.Context, hash string, at time.Time) (*kairos.ConsoleSession, error) {
	var rows []struct {
		UserID    int64
		CSRF      string
		CreatedAt int64
		ExpiresAt int64
	}
	err := s.db.gdb.WithContext(ctx).Raw(`SELECT user_id, csrf, created_at, expires_at FROM console_sessions
		WHERE hash = ? AND ended_at = 0 AND expires_at > ?`, hash, ms(at)).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find console session: %w", err)
	}
	if len(rows) == 0 {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no such session")
	}
	r := rows[0]
	return &kairos.ConsoleSession{UserID: r.UserID, CSRF: r.CSRF, CreatedAt: fromMS(r.CreatedAt), ExpiresAt: fromMS(r.ExpiresAt)}, nil
}

// EndConsoleSession ends a session.
func (s *APIStore) EndConsoleSession(ctx context.Context, hash string, at time.Time) error {
	err := s.db.gdb.WithContext(ctx).Exec(`UPDATE console_sessions SET ended_at = ? WHERE hash = ? AND ended_at = 0`, ms(at), hash).Error
	if err != nil {
		return fmt.Errorf("end console session: %w", err)
	}
	return nil
}
