package store

import (
	"context"
	"fmt"

	"gorm.io/gorm/clause"
)

// SetSetting stores value under key, replacing any value (per-user
// preferences such as voice replies).
func (l *UpdateLog) SetSetting(ctx context.Context, key, value string) error {
	r := settingRow{Key: key, Value: value}
	err := l.db.gdb.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "key"}},
		DoUpdates: clause.AssignmentColumns([]string{"value"})}).Create(&r).Error
	if err != nil {
		return fmt.Errorf("write setting: %w", err)
	}
	return nil
}
