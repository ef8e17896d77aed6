package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// CompactAllClockActions applies CLOCK.md §10.3's compaction (expiry, cap of
// maxItems) to every user's clocked actions; the maintenance job runs it.
func (s *ClockStore) CompactAllClockActions(ctx context.Context, now time.Time, maxItems int) error {
	var users []string
	if err := s.gdb(ctx).Table("clock_actions").Distinct("user_key").Pluck("user_key", &users).Error; err != nil {
		return fmt.Errorf("compact clock actions: %w", err)
	}
	for _, u := range users {
		err := s.gdb(ctx).Transaction(func(tx *gorm.DB) error {
			return compactClockActions(tx, u, clockMS(now), maxItems)
		})
		if err != nil {
			return fmt.Errorf("compact clock actions of %s: %w", u, err)
		}
	}
	return nil
}
