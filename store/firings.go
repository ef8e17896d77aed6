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
