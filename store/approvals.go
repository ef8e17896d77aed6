package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
)

var _ kairos.ApprovalStore = (*UpdateLog)(nil)

type approvalRow struct {
	ID          string `gorm:"primaryKey"`
	UpdateID    int64
	ChatID      int64
	ChatKind    string
	TopicID     int64
	UserID      int64
	ThreadKey   string
	Action      string
	Tool        string
	Grantable   bool
	Target      string
	TargetLabel string
	// SourceMessageID is the user's message of the paused turn.
	SourceMessageID int64
	Scope           string
	Zone            string
	Text            string
	MessageID       int64
	State           string
	ExpiresAt       int64
	CreatedAt       int64 `gorm:"autoCreateTime:false"`
	Status          string
	DecidedBy       string
	DecidedAt       int64
	HeartbeatAt     int64
	ClaimedBy       string
}

func (approvalRow) TableName() string { return "approvals" }

func (r *approvalRow) domain() *kairos.PendingApproval {
	pa := &kairos.PendingApproval{ID: r.ID, UpdateID: r.UpdateID, ChatID: r.ChatID, ChatKind: r.ChatKind, TopicID: r.TopicID,
		UserID: r.UserID, ThreadKey: r.ThreadKey, Action: r.Action, Tool: r.Tool, Grantable: r.Grantable, Target: r.Target,
		TargetLabel: r.TargetLabel, SourceMessageID: r.SourceMessageID, Zone: r.Zone, Text: r.Text, MessageID: r.MessageID, State: []byte(r.State),
		ExpiresAt: fromMS(r.ExpiresAt), CreatedAt: fromMS(r.CreatedAt), Status: r.Status, DecidedBy: r.DecidedBy, Scope: r.Scope,
		HeartbeatAt: fromMS(r.HeartbeatAt), ClaimedBy: r.ClaimedBy}
	if r.DecidedAt != 0 {
		pa.DecidedAt = fromMS(r.DecidedAt)
	}
	return pa
}

// CreateApproval stores a pending request (and marks its update done in
// the same transaction when asked).
func (l *UpdateLog) CreateApproval(ctx context.Context, pa *kairos.PendingApproval, markUpdateDone bool) error {
	now := l.db.Now()
	created := pa.CreatedAt
	if created.IsZero() {
		created = now
	}
	r := approvalRow{ID: pa.ID, UpdateID: pa.UpdateID, ChatID: pa.ChatID, ChatKind: pa.ChatKind, TopicID: pa.TopicID,
		UserID: pa.UserID, ThreadKey: pa.ThreadKey, Action: pa.Action, Tool: pa.Tool, Grantable: pa.Grantable, Target: pa.Target,
		TargetLabel: pa.TargetLabel, SourceMessageID: pa.SourceMessageID, Zone: pa.Zone, Text: pa.Text, MessageID: pa.MessageID,
		State: string(pa.State), ExpiresAt: ms(pa.ExpiresAt), CreatedAt: ms(created), Status: kairos.ApprovalPending,
		HeartbeatAt: ms(now)}
	// The turn's deferred writes (DeferWrites) commit with the pause.
	err := l.db.commit(ctx, markUpdateDone, func(ctx context.Context, tx *hotTx) error {
		if _, err := tx.exec(ctx, `INSERT INTO approvals (id, update_id, chat_id, chat_kind, topic_id, user_id, thread_key, action, text,
			message_id, state, expires_at, created_at, status, decided_by, decided_at, heartbeat_at, claimed_by,
			tool, grantable, target, target_label, source_message_id, zone)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.UpdateID, r.ChatID, r.ChatKind, r.TopicID, r.UserID, r.ThreadKey, r.Action, r.Text,
			r.MessageID, r.State, r.ExpiresAt, r.CreatedAt, r.Status, r.DecidedBy, r.DecidedAt, r.HeartbeatAt, r.ClaimedBy,
			r.Tool, r.Grantable, r.Target, r.TargetLabel, r.SourceMessageID, r.Zone); err != nil {
			return err
		}
		if markUpdateDone && pa.UpdateID != 0 {
			_, err := tx.exec(ctx, `UPDATE updates SET status = 'done', payload = '', done_at = ? WHERE update_id = ?`, ms(now), pa.UpdateID)
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create approval: %w", err)
	}
	return nil
}

// SetApprovalMessage records the keyboard's message id while the request
// is pending (and marks its update done with the turn's deferred writes
// when asked). The message id is written whatever the status, so a later
// expiry can still edit the keyboard; the result says whether the request
// was still pending.
func (l *UpdateLog) SetApprovalMessage(ctx context.Context, id string, messageID int64, markUpdateDone bool) (bool, error) {
	now := ms(l.db.Now())
	open := false
	err := l.db.commit(ctx, markUpdateDone, func(ctx context.Context, tx *hotTx) error {
		var status string
		var updateID int64
		if err := tx.queryRow(ctx, `UPDATE approvals SET message_id = ? WHERE id = ? RETURNING status, update_id`, messageID, id).Scan(&status, &updateID); err != nil {
			return err
		}
		open = status == kairos.ApprovalPending
		if markUpdateDone && updateID != 0 {
			_, err := tx.exec(ctx, `UPDATE updates SET status = 'done', payload = '', done_at = ? WHERE update_id = ?`, now, updateID)
			return err
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("record approval message: %w", err)
	}
	return open, nil
}

// FindApproval returns a request.
func (l *UpdateLog) FindApproval(ctx context.Context, id string) (*kairos.PendingApproval, error) {
	var r approvalRow
	err := l.db.gdb.WithContext(ctx).Where("id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "approval request %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find approval: %w", err)
	}
	return r.domain(), nil
}

// DecideApproval moves a pending request to outcome, once.
func (l *UpdateLog) DecideApproval(ctx context.Context, id, outcome, by string, at time.Time) (bool, error) {
	return l.DecideApprovalAs(ctx, id, kairos.Decision{Outcome: outcome, By: by, At: at})
}

// DecideApprovalAs moves a pending request to dec's outcome, with its
// grant scope, once. A scope is kept only on an approval of a request
// that offered a grant.
func (l *UpdateLog) DecideApprovalAs(ctx context.Context, id string, dec kairos.Decision) (bool, error) {
	q := l.db.gdb.WithContext(ctx).Model(&approvalRow{}).Where("id = ? AND status = ?", id, kairos.ApprovalPending)
	if dec.Outcome != kairos.DecisionExpired {
		q = q.Where("expires_at > ?", ms(dec.At))
	}
	set := map[string]any{"status": dec.Outcome, "decided_by": dec.By, "decided_at": ms(dec.At)}
	if dec.Outcome == kairos.DecisionApproved && dec.Scope != kairos.GrantOnce {
		if !kairos.ValidGrantScope(dec.Scope) {
			return false, kairos.Errorf(kairos.EINVALID, "unknown grant scope %q", dec.Scope)
		}
		q = q.Where("grantable = ?", true)
		set["scope"] = dec.Scope
	}
	res := q.Updates(set)
	if res.Error != nil {
		return false, fmt.Errorf("decide approval: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ClaimApproval takes the continuation of a decided request, once; the
// stored turn state is dropped with the claim (the claimer has read it).
func (l *UpdateLog) ClaimApproval(ctx context.Context, id, by string) (bool, error) {
	res := l.db.gdb.WithContext(ctx).Model(&approvalRow{}).Where("id = ? AND claimed_by = ? AND status <> ?", id, "", kairos.ApprovalPending).
		Updates(map[string]any{"claimed_by": by, "state": ""})
	if res.Error != nil {
		return false, fmt.Errorf("claim approval: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// HeartbeatApproval refreshes the waiter's heartbeat and reads the row.
func (l *UpdateLog) HeartbeatApproval(ctx context.Context, id string, at time.Time) (*kairos.PendingApproval, error) {
	if err := l.db.gdb.WithContext(ctx).Model(&approvalRow{}).Where("id = ?", id).Update("heartbeat_at", ms(at)).Error; err != nil {
		return nil, fmt.Errorf("approval heartbeat: %w", err)
	}
	return l.FindApproval(ctx, id)
}

// PendingApprovalsInChat lists a chat's pending requests, oldest first.
func (l *UpdateLog) PendingApprovalsInChat(ctx context.Context, chatID int64) ([]*kairos.PendingApproval, error) {
	var rows []approvalRow
	if err := l.db.gdb.WithContext(ctx).Where("chat_id = ? AND status = ?", chatID, kairos.ApprovalPending).
		Order("created_at").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("pending approvals of a chat: %w", err)
	}
	out := make([]*kairos.PendingApproval, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}

// StaleApprovals lists pending or unclaimed requests nobody waits for.
func (l *UpdateLog) StaleApprovals(ctx context.Context, before time.Time) ([]*kairos.PendingApproval, error) {
	var rows []approvalRow
	if err := l.db.gdb.WithContext(ctx).Where("(status = ? OR claimed_by = ?) AND heartbeat_at < ?", kairos.ApprovalPending, "", ms(before)).
		Order("created_at").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("stale approvals: %w", err)
	}
	out := make([]*kairos.PendingApproval, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}
