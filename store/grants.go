package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
)

var _ kairos.GrantStore = (*GrantStore)(nil)

// GrantStore keeps standing approvals (kairos.Grant): one row per user,
// chat, tool and target.
type GrantStore struct{ db *DB }

// NewGrantStore returns the grant store of db.
func NewGrantStore(db *DB) *GrantStore { return &GrantStore{db: db} }

type grantRow struct {
	ID          string `gorm:"primaryKey"`
	UserKey     string
	ThreadKey   string
	Tool        string
	Action      string
	Target      string
	Label       string
	CoversTasks bool
	ExpiresAt   int64
	CreatedAt   int64 `gorm:"autoCreateTime:false"`
	CreatedBy   string
	LastUsedAt  int64
	Uses        int64
}

func (grantRow) TableName() string { return "grants" }

func (r *grantRow) domain() *kairos.Grant {
	g := &kairos.Grant{ID: r.ID, UserKey: r.UserKey, ThreadKey: r.ThreadKey, Tool: r.Tool, Action: r.Action, Target: r.Target,
		Label: r.Label, CoversTasks: r.CoversTasks, CreatedAt: fromMS(r.CreatedAt), CreatedBy: r.CreatedBy, Uses: r.Uses}
	if r.ExpiresAt != 0 {
		g.ExpiresAt = fromMS(r.ExpiresAt)
	}
	if r.LastUsedAt != 0 {
		g.LastUsedAt = fromMS(r.LastUsedAt)
	}
	return g
}

const grantColumns = `id, user_key, thread_key, tool, action, target, label, covers_tasks, expires_at, created_at, created_by, last_used_at, uses`

// SaveGrant inserts g or renews the grant with its key in one statement:
// a renewal takes g's expiry (an "Always here" over an hour's grant
// lasts), label and creator, and keeps the uses and covers_tasks.
func (s *GrantStore) SaveGrant(ctx context.Context, g *kairos.Grant) error {
	if g.UserKey == "" || g.ThreadKey == "" || g.Tool == "" || g.Target == "" {
		return kairos.Errorf(kairos.EINVALID, "a grant needs a user, a chat, a tool and a target")
	}
	if g.ID == "" {
		g.ID = kairos.NewID()
	}
	if g.CreatedAt.IsZero() {
		g.CreatedAt = s.db.Now()
	}
	var exp int64
	if !g.ExpiresAt.IsZero() {
		exp = ms(g.ExpiresAt)
	}
	var r grantRow
	err := s.db.gdb.WithContext(ctx).Raw(`INSERT INTO grants (`+grantColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0)
		ON CONFLICT (user_key, thread_key, tool, target) DO UPDATE SET expires_at = excluded.expires_at, label = excluded.label,
		action = excluded.action, created_by = excluded.created_by, created_at = excluded.created_at
		RETURNING `+grantColumns, g.ID, g.UserKey, g.ThreadKey, g.Tool, g.Action, g.Target, g.Label, g.CoversTasks, exp,
		ms(g.CreatedAt), g.CreatedBy).Scan(&r).Error
	if err != nil {
		return fmt.Errorf("save grant: %w", err)
	}
	*g = *r.domain()
	return nil
}

// UseGrant counts one use of the grant in force for key.
func (s *GrantStore) UseGrant(ctx context.Context, key kairos.GrantKey, at time.Time) (*kairos.Grant, error) {
	q := `UPDATE grants SET uses = uses + 1, last_used_at = ?
		WHERE user_key = ? AND thread_key = ? AND tool = ? AND target = ? AND (expires_at = 0 OR expires_at > ?)`
	args := []any{ms(at), key.UserKey, key.ThreadKey, key.Tool, key.Target, ms(at)}
	if key.Task {
		q += ` AND covers_tasks = ?`
		args = append(args, true)
	}
	var rows []grantRow
	if err := s.db.gdb.WithContext(ctx).Raw(q+` RETURNING `+grantColumns, args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("use grant: %w", err)
	}
	if len(rows) == 0 {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no grant covers this call")
	}
	return rows[0].domain(), nil
}

// Grants lists the grants in force at `at`, newest first.
func (s *GrantStore) Grants(ctx context.Context, f kairos.GrantFilter, at time.Time) ([]*kairos.Grant, error) {
	q := s.db.gdb.WithContext(ctx).Where("expires_at = 0 OR expires_at > ?", ms(at))
	if f.UserKey != "" {
		q = q.Where("user_key = ?", f.UserKey)
	}
	var rows []grantRow
	if err := q.Order("created_at DESC, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	out := make([]*kairos.Grant, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}

// FindGrant returns a grant.
func (s *GrantStore) FindGrant(ctx context.Context, id string) (*kairos.Grant, error) {
	var r grantRow
	err := s.db.gdb.WithContext(ctx).Where("id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "No standing approval has the id %q (it may have been revoked).", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find grant: %w", err)
	}
	return r.domain(), nil
}

// RevokeGrant deletes a grant.
func (s *GrantStore) RevokeGrant(ctx context.Context, id string) error {
	res := s.db.gdb.WithContext(ctx).Where("id = ?", id).Delete(&grantRow{})
	if res.Error != nil {
		return fmt.Errorf("revoke grant: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "No standing approval has the id %q (it may have been revoked already).", id)
	}
	return nil
}

// SetGrantTasks says whether a grant covers scheduled tasks.
func (s *GrantStore) SetGrantTasks(ctx context.Context, id string, on bool) error {
	res := s.db.gdb.WithContext(ctx).Model(&grantRow{}).Where("id = ?", id).Update("covers_tasks", on)
	if res.Error != nil {
		return fmt.Errorf("set grant tasks: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "No standing approval has the id %q (it may have been revoked).", id)
	}
	return nil
}

// DeleteExpiredGrants deletes the grants that expired before `before`.
func (s *GrantStore) DeleteExpiredGrants(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.gdb.WithContext(ctx).Where("expires_at <> 0 AND expires_at <= ?", ms(before)).Delete(&grantRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("delete expired grants: %w", res.Error)
	}
	return res.RowsAffected, nil
}
