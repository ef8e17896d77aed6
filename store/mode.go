package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
)

// ModeStore implements kairos.ModeStore.
type ModeStore struct{ db *DB }

var _ kairos.ModeStore = (*ModeStore)(nil)

// NewModeStore returns the mode repository of db.
func NewModeStore(db *DB) *ModeStore { return &ModeStore{db: db} }

type threadModeRow struct {
	ThreadKey string `gorm:"primaryKey"`
	Mode      string
	Envelope  string
	SessionID string
	UpdatedAt int64 `gorm:"autoUpdateTime:false"`
}

func (threadModeRow) TableName() string { return "thread_modes" }

type transitionRow struct {
	ID            int64 `gorm:"primaryKey;autoIncrement"`
	ThreadKey     string
	FromMode      string
	ToMode        string
	Cause         string
	Actor         string
	ApprovalToken string
	Summary       string
	At            int64
}

func (transitionRow) TableName() string { return "mode_transitions" }

// ThreadMode returns a thread's mode.
func (s *ModeStore) ThreadMode(ctx context.Context, threadKey string) (*kairos.ThreadMode, error) {
	var r threadModeRow
	err := s.db.hot.WithContext(ctx).Where("thread_key = ?", threadKey).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no mode for %s", threadKey)
	}
	if err != nil {
		return nil, fmt.Errorf("read thread mode: %w", err)
	}
	return &kairos.ThreadMode{ThreadKey: r.ThreadKey, Mode: r.Mode, Envelope: r.Envelope, SessionID: r.SessionID, UpdatedAt: fromMS(r.UpdatedAt)}, nil
}

// SetThreadMode stores a thread's mode and journals the transition.
func (s *ModeStore) SetThreadMode(ctx context.Context, m *kairos.ThreadMode, tr *kairos.ModeTransitionRecord) error {
	// Deferred under DeferWrites: the mode commits with the turn.
	err := s.db.write(ctx, func(ctx context.Context, tx *hotTx) error {
		if _, err := tx.exec(ctx, `INSERT INTO thread_modes (thread_key, mode, envelope, session_id, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (thread_key) DO UPDATE SET mode = excluded.mode, envelope = excluded.envelope,
			session_id = excluded.session_id, updated_at = excluded.updated_at`,
			m.ThreadKey, m.Mode, m.Envelope, m.SessionID, ms(m.UpdatedAt)); err != nil {
			return err
		}
		if tr == nil {
			return nil
		}
		_, err := tx.exec(ctx, `INSERT INTO mode_transitions (thread_key, from_mode, to_mode, cause, actor, approval_token, summary, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, tr.ThreadKey, tr.From, tr.To, tr.Cause, tr.Actor, tr.ApprovalToken, tr.Summary, ms(tr.At))
		return err
	})
	if err != nil {
		return fmt.Errorf("set thread mode: %w", err)
	}
	return nil
}

// Transitions lists a thread's journaled mode changes in order.
func (s *ModeStore) Transitions(ctx context.Context, threadKey string) ([]kairos.ModeTransitionRecord, error) {
	var rows []transitionRow
	if err := s.db.gdb.WithContext(ctx).Where("thread_key = ?", threadKey).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list transitions: %w", err)
	}
	out := make([]kairos.ModeTransitionRecord, len(rows))
	for i, r := range rows {
		out[i] = kairos.ModeTransitionRecord{ThreadKey: r.ThreadKey, From: r.FromMode, To: r.ToMode, Cause: r.Cause, Actor: r.Actor,
			ApprovalToken: r.ApprovalToken, Summary: r.Summary, At: fromMS(r.At)}
	}
	return out, nil
}
