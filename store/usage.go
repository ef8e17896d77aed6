package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/kairos-agent/kairos"
)

// UsageStore implements kairos.UsageStore on token_usage (written by
// SessionStore.RecordUsage), spend_notices and spend_lifts.
type UsageStore struct{ db *DB }

var _ kairos.UsageStore = (*UsageStore)(nil)

// NewUsageStore returns the usage repository of db.
func NewUsageStore(db *DB) *UsageStore { return &UsageStore{db: db} }

// bucketMS is the quarter hour of UsageBuckets.
const bucketMS = 15 * 60 * 1000

// nusd turns dollars into billionths (what cost_nusd holds).
func nusd(usd float64) int64 {
	if math.IsNaN(usd) || usd <= 0 {
		return 0
	}
	return int64(math.Round(usd * 1e9))
}

func spendKind(k string) string {
	if k == "" {
		return kairos.SpendChat
	}
	return k
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SpendSince sums tokens and cost from since on, and from split on.
func (s *UsageStore) SpendSince(ctx context.Context, userKey string, since, split time.Time) (all, fromSplit kairos.SpendAmount, err error) {
	q := `SELECT CAST(COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(cost_nusd), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN created_at >= ? THEN prompt_tokens + completion_tokens ELSE 0 END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN created_at >= ? THEN cost_nusd ELSE 0 END), 0) AS BIGINT)
		FROM token_usage WHERE created_at >= ?`
	args := []any{ms(split), ms(split), ms(since)}
	if userKey != "" {
		q += ` AND user_key = ?`
		args = append(args, userKey)
	}
	var at, an, st, sn int64
	if err := s.db.queryRow(ctx, q, args...).Scan(&at, &an, &st, &sn); err != nil {
		return all, fromSplit, fmt.Errorf("sum usage: %w", err)
	}
	// Days rolled up by the maintenance job (token_usage_daily) count
	// from their UTC noon: whole UTC days, placed on the calendar day they
	// share with every zone within twelve hours of UTC.
	d := `SELECT CAST(COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(cost_nusd), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN day_start >= ? THEN prompt_tokens + completion_tokens ELSE 0 END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN day_start >= ? THEN cost_nusd ELSE 0 END), 0) AS BIGINT)
		FROM token_usage_daily WHERE day_start >= ?`
	dargs := []any{ms(split) - noonMS, ms(split) - noonMS, ms(since) - noonMS}
	if userKey != "" {
		d += ` AND user_key = ?`
		dargs = append(dargs, userKey)
	}
	var dt, dn, dst, dsn int64
	if err := s.db.queryRow(ctx, d, dargs...).Scan(&dt, &dn, &dst, &dsn); err != nil {
		return all, fromSplit, fmt.Errorf("sum rolled-up usage: %w", err)
	}
	at, an, st, sn = at+dt, an+dn, st+dst, sn+dsn
	return kairos.SpendAmount{Tokens: at, CostUSD: float64(an) / 1e9}, kairos.SpendAmount{Tokens: st, CostUSD: float64(sn) / 1e9}, nil
}

// UsageBuckets sums usage by user, model and quarter hour.
func (s *UsageStore) UsageBuckets(ctx context.Context, userKey string, from, to time.Time) ([]kairos.UsageBucket, error) {
	where, args := "created_at >= ? AND created_at < ?", []any{ms(from), ms(to)}
	if userKey != "" {
		where, args = "user_key = ? AND "+where, append([]any{userKey}, args...)
	}
	q := fmt.Sprintf(`SELECT user_key, model, created_at / %d AS b, COUNT(*),
		CAST(SUM(prompt_tokens) AS BIGINT), CAST(SUM(cached_tokens) AS BIGINT), CAST(SUM(completion_tokens) AS BIGINT),
		CAST(SUM(audio_ms) AS BIGINT), CAST(SUM(images) AS BIGINT), CAST(SUM(cost_nusd) AS BIGINT),
		CAST(SUM(CASE WHEN priced = 0 THEN 1 ELSE 0 END) AS BIGINT), CAST(SUM(estimated) AS BIGINT)
		FROM token_usage WHERE %s GROUP BY user_key, model, b ORDER BY user_key, model, b`, bucketMS, where)
	rows, err := s.db.sqlDB.QueryContext(ctx, s.db.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("usage by quarter hour: %w", err)
	}
	out, err := scanBuckets(rows, "usage by quarter hour", func(b int64) int64 { return b * bucketMS })
	if err != nil {
		return nil, err
	}
	daily, err := s.dailyBuckets(ctx, userKey, from, to)
	if err != nil {
		return nil, err
	}
	return append(out, daily...), nil
}

// noonMS places a rolled-up UTC day at its noon.
const noonMS = 12 * 60 * 60 * 1000

// dailyBuckets reads the days the maintenance job rolled up
// (token_usage_daily), each as one bucket at its UTC noon.
func (s *UsageStore) dailyBuckets(ctx context.Context, userKey string, from, to time.Time) ([]kairos.UsageBucket, error) {
	q := `SELECT user_key, model, day_start, CAST(SUM(calls) AS BIGINT), CAST(SUM(prompt_tokens) AS BIGINT),
		CAST(SUM(cached_tokens) AS BIGINT), CAST(SUM(completion_tokens) AS BIGINT), CAST(SUM(audio_ms) AS BIGINT),
		CAST(SUM(images) AS BIGINT), CAST(SUM(cost_nusd) AS BIGINT), CAST(SUM(unpriced_calls) AS BIGINT),
		CAST(SUM(estimated_calls) AS BIGINT)
		FROM token_usage_daily WHERE day_start >= ? AND day_start < ?`
	args := []any{ms(from) - noonMS, ms(to) - noonMS}
	if userKey != "" {
		q += ` AND user_key = ?`
		args = append(args, userKey)
	}
	rows, err := s.db.sqlDB.QueryContext(ctx, s.db.rebind(q+` GROUP BY user_key, model, day_start ORDER BY user_key, model, day_start`), args...)
	if err != nil {
		return nil, fmt.Errorf("rolled-up usage: %w", err)
	}
	return scanBuckets(rows, "rolled-up usage", func(day int64) int64 { return day + noonMS })
}

// scanBuckets reads rows of (user, model, bucket, calls, prompt, cached,
// completion, audio ms, images, cost in nano-USD, unpriced, estimated) and
// closes them; startMS turns a row's bucket into its start in ms.
func scanBuckets(rows *sql.Rows, what string, startMS func(int64) int64) ([]kairos.UsageBucket, error) {
	defer rows.Close()
	var out []kairos.UsageBucket
	for rows.Next() {
		var b kairos.UsageBucket
		var bucket, audioMS, cost int64
		if err := rows.Scan(&b.UserKey, &b.Model, &bucket, &b.Calls, &b.PromptTokens, &b.CachedTokens, &b.CompletionTokens,
			&audioMS, &b.Images, &cost, &b.UnpricedCalls, &b.EstimatedCalls); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		b.Start = fromMS(startMS(bucket))
		b.AudioSeconds = float64(audioMS) / 1000
		b.CostUSD = float64(cost) / 1e9
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// MarkSpendNotice records a notice once; false when it was already given.
// It is written at once, also inside a turn's deferred writes, so that two
// turns cannot both give it.
func (s *UsageStore) MarkSpendNotice(ctx context.Context, userKey, key string, at time.Time) (bool, error) {
	n, err := s.db.execCount(ctx, `INSERT INTO spend_notices (user_key, notice, created_at) VALUES (?, ?, ?)
		ON CONFLICT (user_key, notice) DO NOTHING`, userKey, key, ms(at))
	if err != nil {
		return false, fmt.Errorf("record spending notice: %w", err)
	}
	return n > 0, nil
}

// LiftSpendCap lifts a user's caps of one period.
func (s *UsageStore) LiftSpendCap(ctx context.Context, userKey, period, by string, at time.Time) error {
	_, err := s.db.execCount(ctx, `INSERT INTO spend_lifts (user_key, period, lifted_by, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (user_key, period) DO NOTHING`, userKey, period, by, ms(at))
	if err != nil {
		return fmt.Errorf("lift spending cap: %w", err)
	}
	return nil
}

// SpendLifts says which of periods are lifted for userKey.
func (s *UsageStore) SpendLifts(ctx context.Context, userKey string, periods ...string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, p := range periods {
		var n int64
		err := s.db.queryRow(ctx, `SELECT COUNT(*) FROM spend_lifts WHERE user_key = ? AND period = ?`, userKey, p).Scan(&n)
		if err != nil {
			return nil, fmt.Errorf("read spending lifts: %w", err)
		}
		out[p] = n > 0
	}
	return out, nil
}
