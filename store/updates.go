package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm/clause"
)

// UpdateLog implements kairos.UpdateLog, kairos.AccessStore and
// kairos.SettingStore.
type UpdateLog struct{ db *DB }

var (
	_ kairos.UpdateLog    = (*UpdateLog)(nil)
	_ kairos.AccessStore  = (*UpdateLog)(nil)
	_ kairos.SettingStore = (*UpdateLog)(nil)
)

// NewUpdateLog returns the update, outbox and access repository of db.
func NewUpdateLog(db *DB) *UpdateLog { return &UpdateLog{db: db} }

type updateRow struct {
	UpdateID   int64 `gorm:"primaryKey;autoIncrement:false"`
	ChatID     int64
	Payload    string
	Status     string
	Attempts   int
	ReceivedAt int64
	DoneAt     *int64
	Owner      string
}

func (updateRow) TableName() string { return "updates" }

// SaveUpdates stores new updates in one transaction and returns them.
func (l *UpdateLog) SaveUpdates(ctx context.Context, ups []*kairos.RawUpdate) ([]*kairos.RawUpdate, error) {
	var fresh []*kairos.RawUpdate
	err := l.db.inTx(ctx, func(ctx context.Context, tx *hotTx) error {
		fresh = fresh[:0]
		for _, u := range ups {
			res, err := tx.exec(ctx, `INSERT INTO updates (update_id, chat_id, payload, status, attempts, received_at, owner) VALUES (?, ?, ?, 'pending', 0, ?, ?)
				ON CONFLICT (update_id) DO NOTHING`, u.UpdateID, u.ChatID, string(u.Payload), ms(u.ReceivedAt), u.Owner)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				fresh = append(fresh, u)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("save updates: %w", err)
	}
	return fresh, nil
}

// PendingUpdates returns unprocessed updates, oldest first.
func (l *UpdateLog) PendingUpdates(ctx context.Context, limit int) ([]*kairos.RawUpdate, error) {
	var rows []updateRow
	q := l.db.gdb.WithContext(ctx).Where("status = ?", "pending").Order("update_id")
	if limit > 0 {
		q = q.Limit(limit)
	}
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("pending updates: %w", err)
	}
	return rawUpdates(rows), nil
}

func rawUpdates(rows []updateRow) []*kairos.RawUpdate {
	out := make([]*kairos.RawUpdate, len(rows))
	for i, r := range rows {
		out[i] = &kairos.RawUpdate{UpdateID: r.UpdateID, ChatID: r.ChatID, Payload: []byte(r.Payload), ReceivedAt: fromMS(r.ReceivedAt), Attempts: r.Attempts, Owner: r.Owner}
	}
	return out
}

// MaxUpdateID returns the highest stored update id.
func (l *UpdateLog) MaxUpdateID(ctx context.Context) (int64, error) {
	var v *int64
	if err := l.db.gdb.WithContext(ctx).Model(&updateRow{}).Select("MAX(update_id)").Scan(&v).Error; err != nil {
		return 0, fmt.Errorf("max update id: %w", err)
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}

// MarkUpdateDone marks an update processed and drops its payload, so a
// stranger's message leaves nothing behind but its id. Under DeferWrites
// the update's remaining deferred writes commit in the same transaction.
func (l *UpdateLog) MarkUpdateDone(ctx context.Context, updateID int64) error {
	now := ms(l.db.Now())
	err := l.db.commit(ctx, true, func(ctx context.Context, tx *hotTx) error {
		_, err := tx.exec(ctx, `UPDATE updates SET status = 'done', payload = '', done_at = ? WHERE update_id = ?`, now, updateID)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark update done: %w", err)
	}
	return nil
}

// BumpAttempts counts one processing attempt and returns the new count.
func (l *UpdateLog) BumpAttempts(ctx context.Context, updateID int64) (int, error) {
	var n int
	// One statement (RETURNING: SQLite 3.35+, PostgreSQL).
	err := l.db.queryRow(ctx, "UPDATE updates SET attempts = attempts + 1 WHERE update_id = ? RETURNING attempts", updateID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("bump attempts: %w", err)
	}
	return n, nil
}

type outboxRow struct {
	Key       string `gorm:"primaryKey"`
	ChatID    int64
	Status    string
	MessageID int64
	CreatedAt int64 `gorm:"autoCreateTime:false"`
	SentAt    *int64
}

func (outboxRow) TableName() string { return "outbox" }

// BeginSend records the intent to send key, or reports its earlier state.
// Under DeferWrites the update's deferred writes (the turn) commit in the
// same transaction, right before the part leaves.
func (l *UpdateLog) BeginSend(ctx context.Context, key string, chatID int64) (string, int64, error) {
	state, id := kairos.OutboxNew, int64(0)
	err := l.db.commit(ctx, false, func(ctx context.Context, tx *hotTx) error {
		res, err := tx.exec(ctx, `INSERT INTO outbox (key, chat_id, status, message_id, created_at) VALUES (?, ?, ?, 0, ?)
			ON CONFLICT (key) DO NOTHING`, key, chatID, kairos.OutboxSending, ms(l.db.Now()))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		return tx.queryRow(ctx, `SELECT status, message_id FROM outbox WHERE key = ?`, key).Scan(&state, &id)
	})
	if err != nil {
		return "", 0, fmt.Errorf("begin send: %w", err)
	}
	return state, id, nil
}

// OutboxState reports a part's state ("" when never attempted).
func (l *UpdateLog) OutboxState(ctx context.Context, key string) (string, int64, error) {
	var state string
	var id int64
	err := l.db.queryRow(ctx, `SELECT status, message_id FROM outbox WHERE key = ?`, key).Scan(&state, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return kairos.OutboxNew, 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("outbox state: %w", err)
	}
	return state, id, nil
}

// MarkSent records the message id of a sent part (deferred under
// DeferWrites: it commits with the update's completion).
func (l *UpdateLog) MarkSent(ctx context.Context, key string, messageID int64) error {
	now := ms(l.db.Now())
	err := l.db.write(ctx, func(ctx context.Context, tx *hotTx) error {
		_, err := tx.exec(ctx, `UPDATE outbox SET status = ?, message_id = ?, sent_at = ? WHERE key = ?`, kairos.OutboxSent, messageID, now, key)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark sent: %w", err)
	}
	return nil
}

type accessRow struct {
	UserID    int64 `gorm:"primaryKey;autoIncrement:false"`
	GrantedBy int64
	CreatedAt int64  `gorm:"autoCreateTime:false"`
	Role      string // RoleAllowed or RoleOperator (operators.go)
}

func (accessRow) TableName() string { return "access_grants" }

// GrantAccess admits a user (idempotent).
func (l *UpdateLog) GrantAccess(ctx context.Context, userID, grantedBy int64) error {
	r := accessRow{UserID: userID, GrantedBy: grantedBy, CreatedAt: ms(l.db.Now()), Role: RoleAllowed}
	if err := l.db.gdb.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r).Error; err != nil {
		return fmt.Errorf("grant access: %w", err)
	}
	return nil
}

// RevokeAccess removes an admitted user.
func (l *UpdateLog) RevokeAccess(ctx context.Context, userID int64) error {
	if err := l.db.gdb.WithContext(ctx).Where("user_id = ?", userID).Delete(&accessRow{}).Error; err != nil {
		return fmt.Errorf("revoke access: %w", err)
	}
	return nil
}

// HasAccess reports whether a user was admitted.
func (l *UpdateLog) HasAccess(ctx context.Context, userID int64) (bool, error) {
	var n int64
	if err := l.db.hot.WithContext(ctx).Model(&accessRow{}).Where("user_id = ?", userID).Count(&n).Error; err != nil {
		return false, fmt.Errorf("has access: %w", err)
	}
	return n > 0, nil
}

// ListAccess lists admitted users.
func (l *UpdateLog) ListAccess(ctx context.Context) ([]int64, error) {
	var ids []int64
	if err := l.db.gdb.WithContext(ctx).Model(&accessRow{}).Order("user_id").Pluck("user_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("list access: %w", err)
	}
	return ids, nil
}

type settingRow struct {
	Key   string `gorm:"primaryKey"`
	Value string
}

func (settingRow) TableName() string { return "settings" }

// Setting returns a setting or "".
func (l *UpdateLog) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := l.db.queryRow(ctx, "SELECT value FROM settings WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read setting: %w", err)
	}
	return v, nil
}

// SetSettingIfAbsent stores value unless the key exists and returns the
// value in force.
func (l *UpdateLog) SetSettingIfAbsent(ctx context.Context, key, value string) (string, error) {
	r := settingRow{Key: key, Value: value}
	if err := l.db.gdb.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r).Error; err != nil {
		return "", fmt.Errorf("write setting: %w", err)
	}
	return l.Setting(ctx, key)
}

// AccessGrant is one admitted user in the database: GrantedBy is the
// operator who paired them (/pair), 0 for `kairos access allow`.
type AccessGrant struct {
	UserID    int64
	GrantedBy int64
	CreatedAt time.Time
	Role      string // RoleAllowed, or RoleOperator for a claimed operator
}

// AccessGrants lists the database's grants by user id.
func (l *UpdateLog) AccessGrants(ctx context.Context) ([]AccessGrant, error) {
	var rows []accessRow
	if err := l.db.gdb.WithContext(ctx).Order("user_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list access: %w", err)
	}
	out := make([]AccessGrant, len(rows))
	for i, r := range rows {
		out[i] = AccessGrant{UserID: r.UserID, GrantedBy: r.GrantedBy, CreatedAt: fromMS(r.CreatedAt), Role: r.Role}
	}
	return out, nil
}
