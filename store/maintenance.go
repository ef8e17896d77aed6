package store

import (
	"context"
	"fmt"

	"github.com/kairos-agent/kairos"
)

// Maintenance implements kairos.Pruner: it deletes finished bookkeeping
// rows and rolls old token usage up per day.
type Maintenance struct{ db *DB }

var _ kairos.Pruner = (*Maintenance)(nil)

// NewMaintenance returns the pruning repository of db.
func NewMaintenance(db *DB) *Maintenance { return &Maintenance{db: db} }

// pruneBatch bounds the rows one DELETE removes, so a first run over a
// large backlog does not hold a long write lock (SQLite) or transaction.
const pruneBatch = 5000

// PruneFinished deletes, for each cut-off that is set, the rows finished
// before it; rows still in use (pending updates and approvals, unclaimed
// decisions, pending firings, the newest update) are never touched.
func (m *Maintenance) PruneFinished(ctx context.Context, c kairos.PruneCutoffs) (kairos.PruneCounts, error) {
	var out kairos.PruneCounts
	steps := []struct {
		set   bool
		n     *int64
		query string
		cut   int64
	}{
		{!c.Approvals.IsZero(), &out.Approvals, `DELETE FROM approvals WHERE id IN (SELECT id FROM approvals
			WHERE status <> 'pending' AND claimed_by <> '' AND created_at < ? LIMIT %d)`, ms(c.Approvals)},
		{!c.Updates.IsZero(), &out.Updates, `DELETE FROM updates WHERE update_id IN (SELECT update_id FROM updates
			WHERE status = 'done' AND done_at < ? AND update_id < (SELECT MAX(update_id) FROM updates) LIMIT %d)`, ms(c.Updates)},
		{!c.Outbox.IsZero(), &out.Outbox, `DELETE FROM outbox WHERE key IN (SELECT key FROM outbox WHERE created_at < ? LIMIT %d)`, ms(c.Outbox)},
		{!c.Firings.IsZero(), &out.Firings, `DELETE FROM schedule_firings WHERE id IN (SELECT id FROM schedule_firings
			WHERE status IN ('sent', 'missed', 'failed') AND claimed_at < ? LIMIT %d)`, ms(c.Firings)},
		{!c.Attempts.IsZero(), &out.Attempts, `DELETE FROM attempts WHERE key IN (SELECT key FROM attempts WHERE window_start < ? LIMIT %d)`, ms(c.Attempts)},
		{!c.AccessLog.IsZero(), &out.AccessLog, `DELETE FROM access_log WHERE id IN (SELECT id FROM access_log WHERE at < ? LIMIT %d)`, ms(c.AccessLog)},
	}
	for _, s := range steps {
		if !s.set {
			continue
		}
		n, err := m.deleteAll(ctx, fmt.Sprintf(s.query, pruneBatch), s.cut)
		*s.n = n
		if err != nil {
			return out, err
		}
	}
	if !c.TokenUsage.IsZero() {
		n, err := m.rollUpUsage(ctx, ms(c.TokenUsage))
		out.TokenUsage = n
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// deleteAll runs a batched DELETE until it removes nothing.
func (m *Maintenance) deleteAll(ctx context.Context, query string, cut int64) (int64, error) {
	var total int64
	for {
		n, err := m.db.execCount(ctx, query, cut)
		if err != nil {
			return total, fmt.Errorf("prune: %w", err)
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}

// rollUpUsage adds token_usage rows created before cut into
// token_usage_daily and deletes them, in one transaction.
func (m *Maintenance) rollUpUsage(ctx context.Context, cut int64) (int64, error) {
	var n int64
	err := m.db.inTx(ctx, func(ctx context.Context, tx *hotTx) error {
		if _, err := tx.exec(ctx, `INSERT INTO token_usage_daily (day_start, user_key, thread_key, model, kind, calls,
				prompt_tokens, cached_tokens, completion_tokens, audio_ms, images, cost_nusd, unpriced_calls, estimated_calls)
			SELECT (created_at / 86400000) * 86400000, user_key, thread_key, model, kind, COUNT(*),
				CAST(SUM(prompt_tokens) AS BIGINT), CAST(SUM(cached_tokens) AS BIGINT), CAST(SUM(completion_tokens) AS BIGINT),
				CAST(SUM(audio_ms) AS BIGINT), CAST(SUM(images) AS BIGINT), CAST(SUM(cost_nusd) AS BIGINT),
				CAST(SUM(CASE WHEN priced = 0 THEN 1 ELSE 0 END) AS BIGINT), CAST(SUM(estimated) AS BIGINT)
			FROM token_usage WHERE created_at < ?
			GROUP BY (created_at / 86400000) * 86400000, user_key, thread_key, model, kind
			ON CONFLICT (day_start, user_key, thread_key, model, kind) DO UPDATE SET
				calls = token_usage_daily.calls + excluded.calls,
				prompt_tokens = token_usage_daily.prompt_tokens + excluded.prompt_tokens,
				cached_tokens = token_usage_daily.cached_tokens + excluded.cached_tokens,
				completion_tokens = token_usage_daily.completion_tokens + excluded.completion_tokens,
				audio_ms = token_usage_daily.audio_ms + excluded.audio_ms,
				images = token_usage_daily.images + excluded.images,
				cost_nusd = token_usage_daily.cost_nusd + excluded.cost_nusd,
				unpriced_calls = token_usage_daily.unpriced_calls + excluded.unpriced_calls,
				estimated_calls = token_usage_daily.estimated_calls + excluded.estimated_calls`, cut); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `DELETE FROM token_usage WHERE created_at < ?`, cut)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("roll up token usage: %w", err)
	}
	return n, nil
}

// DailyUsage is one rolled-up row of token_usage_daily.
type DailyUsage struct {
	DayStart                                      int64 // UTC midnight, ms
	UserKey, ThreadKey, Model, Kind               string
	Calls, PromptTokens, CachedTokens, Completion int64
	AudioMS, Images, CostNUSD, UnpricedCalls      int64
}

// DailyUsageRows returns the rolled-up usage of a user ("" for all),
// oldest first.
func (m *Maintenance) DailyUsageRows(ctx context.Context, userKey string) ([]DailyUsage, error) {
	q := `SELECT day_start, user_key, thread_key, model, kind, calls, prompt_tokens, cached_tokens, completion_tokens,
		audio_ms, images, cost_nusd, unpriced_calls FROM token_usage_daily`
	var args []any
	if userKey != "" {
		q += ` WHERE user_key = ?`
		args = append(args, userKey)
	}
	rows, err := m.db.sqlDB.QueryContext(ctx, m.db.rebind(q+` ORDER BY day_start, user_key, thread_key, model, kind`), args...)
	if err != nil {
		return nil, fmt.Errorf("daily usage: %w", err)
	}
	defer rows.Close()
	var out []DailyUsage
	for rows.Next() {
		var d DailyUsage
		if err := rows.Scan(&d.DayStart, &d.UserKey, &d.ThreadKey, &d.Model, &d.Kind, &d.Calls, &d.PromptTokens, &d.CachedTokens,
			&d.Completion, &d.AudioMS, &d.Images, &d.CostNUSD, &d.UnpricedCalls); err != nil {
			return nil, fmt.Errorf("daily usage: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
