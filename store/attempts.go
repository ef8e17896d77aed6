package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
)

var _ kairos.AttemptStore = (*UpdateLog)(nil)

// CountAttempts counts one attempt per key with one upsert each: a window
// that has ended restarts at 1 (RETURNING after an upsert: SQLite 3.35+,
// PostgreSQL). Concurrent counts on one key serialise on its row.
func (l *UpdateLog) CountAttempts(ctx context.Context, keys []string, window time.Duration) ([]int, error) {
	now := l.db.Now()
	ended := ms(now.Add(-window))
	out := make([]int, len(keys))
	err := l.db.inTx(ctx, func(ctx context.Context, tx *hotTx) error {
		for i, k := range keys {
			err := tx.queryRow(ctx, `INSERT INTO attempts (key, window_start, n) VALUES (?, ?, 1)
				ON CONFLICT (key) DO UPDATE SET
					n = CASE WHEN attempts.window_start <= ? THEN 1 ELSE attempts.n + 1 END,
					window_start = CASE WHEN attempts.window_start <= ? THEN excluded.window_start ELSE attempts.window_start END
				RETURNING n`, k, ms(now), ended, ended).Scan(&out[i])
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count attempts: %w", err)
	}
	return out, nil
}

// PeekAttempts reads each key's count in its current window (0 when the
// window ended or the key is unknown).
func (l *UpdateLog) PeekAttempts(ctx context.Context, keys []string, window time.Duration) ([]int, error) {
	ended := ms(l.db.Now().Add(-window))
	out := make([]int, len(keys))
	for i, k := range keys {
		err := l.db.queryRow(ctx, `SELECT n FROM attempts WHERE key = ? AND window_start > ?`, k, ended).Scan(&out[i])
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("peek attempts: %w", err)
		}
	}
	return out, nil
}
