package store

import (
	"context"
	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
)

// RenewFiringLease extends the lease of a firing still being delivered
// (schedules.LeaseRenewer); false when it is no longer pending.
func (s *ScheduleStore) RenewFiringLease(ctx context.Context, id int64, until time.Time) (bool, error) {
	res := s.db.gdb.WithContext(ctx).Model(&firingRow{}).Where("id = ? AND status = ?", id, kairos.FiringPending).
		Update("lease_until", ms(until))
	if res.Error != nil {
		return false, fmt.Errorf("renew firing lease: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ReturnFiring hands back firing id, leased as try number attempts and
// never tried (schedules.LeaseRenewer): the try is uncounted and the lease
// ends now. Nothing happens when the firing is no longer pending or was
// leased again since (its count moved on); a count below 1 (never
// leased) changes nothing, so no count goes below zero.
func (s *ScheduleStore) ReturnFiring(ctx context.Context, id int64, attempts int, now time.Time) error {
	if attempts < 1 {
		return nil
	}
	err := s.db.gdb.WithContext(ctx).Model(&firingRow{}).
		Where("id = ? AND status = ? AND attempts = ?", id, kairos.FiringPending, attempts).
		Updates(map[string]any{"lease_until": ms(now), "attempts": attempts - 1}).Error
	if err != nil {
		return fmt.Errorf("return firing: %w", err)
	}
	return nil
}
