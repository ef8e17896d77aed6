package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/kairos-agent/kairos"
)

var _ kairos.LeaseStore = (*UpdateLog)(nil)

// AcquireLease takes or renews a lease in one statement: an upsert whose
// update applies only when the caller holds the lease or it has expired
// (ON CONFLICT … DO UPDATE … WHERE: SQLite 3.24+, PostgreSQL 9.5+). Its
// times come from the database's clock (DB.Now) of each replica, so the
// replicas' clocks must agree to well within the lease's TTL.
func (l *UpdateLog) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	now := l.db.Now()
	n, err := l.db.execCount(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE leases.holder = excluded.holder OR leases.expires_at <= ?`, name, holder, ms(now.Add(ttl)), ms(now))
	if err != nil {
		return false, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	return n == 1, nil
}

// ReleaseLease frees a lease its holder no longer needs (a clean stop),
// so that another replica need not wait for it to expire.
func (l *UpdateLog) ReleaseLease(ctx context.Context, name, holder string) error {
	if _, err := l.db.execCount(ctx, `DELETE FROM leases WHERE name = ? AND holder = ?`, name, holder); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// ClaimUpdates finds (the lease names are kairos.ReplicaLease's) the owners of pending updates whose replica lease is
// not live, then moves each one's updates to holder with UPDATE … WHERE
// owner = <that owner>: a concurrent claimer's update changes the owner
// first, so on PostgreSQL the re-checked condition fails for the loser and
// on SQLite the writes are serial anyway. Nothing is claimed twice.
func (l *UpdateLog) ClaimUpdates(ctx context.Context, holder string, own bool) ([]*kairos.RawUpdate, error) {
	var owners []string
	err := l.db.gdb.WithContext(ctx).Raw(`SELECT DISTINCT owner FROM updates WHERE status = 'pending' AND owner <> ?
		AND NOT EXISTS (SELECT 1 FROM leases WHERE leases.name = 'replica:' || updates.owner AND leases.expires_at > ?)`,
		holder, ms(l.db.Now())).Scan(&owners).Error
	if err != nil {
		return nil, fmt.Errorf("claim updates: %w", err)
	}
	if own {
		owners = append(owners, holder)
	}
	var out []*kairos.RawUpdate
	for _, from := range owners {
		err := l.db.inTx(ctx, func(ctx context.Context, tx *hotTx) error {
			rows, err := tx.tx.QueryContext(ctx, l.db.rebind(`UPDATE updates SET owner = ? WHERE status = 'pending' AND owner = ?
				RETURNING update_id, chat_id, payload, received_at, attempts`), holder, from)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				u := &kairos.RawUpdate{Owner: holder}
				var payload string
				var received int64
				if err := rows.Scan(&u.UpdateID, &u.ChatID, &payload, &received, &u.Attempts); err != nil {
					return err
				}
				u.Payload, u.ReceivedAt = []byte(payload), fromMS(received)
				out = append(out, u)
			}
			return rows.Err()
		})
		if err != nil {
			return nil, fmt.Errorf("claim updates: %w", err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpdateID < out[j].UpdateID })
	return out, nil
}
