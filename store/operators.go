package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Database grants carry a role: RoleAllowed users may talk to the agent;
// RoleOperator users are operators as if listed in access.operators (the
// first operator claims the bot with a single-use code).
const (
	RoleAllowed  = "allowed"
	RoleOperator = "operator"
)

// claimKey is the setting holding the SHA-256 (hex) of the pending
// operator claim code; the code itself is never stored.
const claimKey = "operator_claim_sha256"

// SetOperatorClaim records the hash of a new claim code (replacing one
// pending).
func (l *UpdateLog) SetOperatorClaim(ctx context.Context, codeHash string) error {
	if err := l.SetSetting(ctx, claimKey, codeHash); err != nil {
		return fmt.Errorf("operator claim: %w", err)
	}
	return nil
}

// OperatorClaim returns the pending claim's hash, or "" when none is.
func (l *UpdateLog) OperatorClaim(ctx context.Context) (string, error) {
	return l.Setting(ctx, claimKey)
}

// ClearOperatorClaim drops a pending claim.
func (l *UpdateLog) ClearOperatorClaim(ctx context.Context) error {
	if err := l.db.gdb.WithContext(ctx).Where("key = ?", claimKey).Delete(&settingRow{}).Error; err != nil {
		return fmt.Errorf("clear operator claim: %w", err)
	}
	return nil
}

// ClaimOperator spends the pending claim whose hash is codeHash and makes
// userID an operator, in one transaction; false when no such claim is
// pending (a wrong code, or one already spent: the claim is single-use
// even between replicas).
func (l *UpdateLog) ClaimOperator(ctx context.Context, userID int64, codeHash string) (bool, error) {
	claimed := false
	err := l.db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("key = ? AND value = ?", claimKey, codeHash).Delete(&settingRow{})
		if res.Error != nil || res.RowsAffected != 1 {
			return res.Error
		}
		r := accessRow{UserID: userID, CreatedAt: ms(l.db.Now()), Role: RoleOperator}
		if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "user_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"role"})}).Create(&r).Error; err != nil {
			return err
		}
		claimed = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("claim operator: %w", err)
	}
	return claimed, nil
}

// Operators lists the users the database makes operators.
func (l *UpdateLog) Operators(ctx context.Context) ([]int64, error) {
	var ids []int64
	if err := l.db.gdb.WithContext(ctx).Model(&accessRow{}).Where("role = ?", RoleOperator).Order("user_id").Pluck("user_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("list operators: %w", err)
	}
	return ids, nil
}

// MakeOperator makes userID an operator in the database (a new grant, or
// an allowed user's raised): `kairos access allow ID --operator`, the
// host's way back when no operator is left.
func (l *UpdateLog) MakeOperator(ctx context.Context, userID int64) error {
	r := accessRow{UserID: userID, CreatedAt: ms(l.db.Now()), Role: RoleOperator}
	if err := l.db.gdb.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"role"})}).Create(&r).Error; err != nil {
		return fmt.Errorf("make operator: %w", err)
	}
	return nil
}
