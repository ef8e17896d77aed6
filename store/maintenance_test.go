package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

func count(t *testing.T, db *store.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.SQL().QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPruneFinished: finished rows older than their cut-off go; rows in
// use (pending, undecided, unclaimed, the newest update) and newer rows
// stay; token usage is rolled up per UTC day, user, thread, model and
// kind with exact sums, also when a later run adds to a rolled-up day.
func TestPruneFinished(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ul := store.NewUpdateLog(db)
	sess := store.NewSessionStore(db)
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	old, fresh := day.Add(2*time.Hour), day.Add(50*time.Hour)
	cut := day.Add(48 * time.Hour)
	at := func(t0 time.Time) { db.Now = func() time.Time { return t0 } }

	at(old)
	seedFinishedRows(t, db, ul, old)
	recordUsageAt(t, sess, "telegram:1", old, 100, 40, 10, 0.5)
	recordUsageAt(t, sess, "telegram:1", old.Add(time.Hour), 200, 0, 20, 0.25)
	recordUsageAt(t, sess, "telegram:2", old, 7, 0, 3, 0)
	recordUsageAt(t, sess, "telegram:1", fresh, 1, 0, 1, 0.1)

	at(fresh)
	ul.BeginSend(ctx, "u2:0", 1) // after the cut: stays
	m := store.NewMaintenance(db)
	got, err := m.PruneFinished(ctx, kairos.PruneCutoffs{Approvals: cut, Updates: cut, Outbox: cut, Firings: cut, Attempts: cut, TokenUsage: cut})
	if err != nil {
		t.Fatal(err)
	}
	want := kairos.PruneCounts{Approvals: 1, Updates: 1, Outbox: 1, Firings: 1, Attempts: 1, TokenUsage: 3}
	if got != want {
		t.Fatalf("pruned %+v, want %+v", got, want)
	}
	for table, n := range map[string]int64{"updates": 2, "outbox": 1, "approvals": 2, "schedule_firings": 1, "attempts": 0, "token_usage": 1} {
		if c := count(t, db, table); c != n {
			t.Errorf("%s: %d rows left, want %d", table, c, n)
		}
	}
	// A late row for the rolled-up day adds to its totals.
	recordUsageAt(t, sess, "telegram:1", old.Add(3*time.Hour), 1000, 0, 100, 1)
	if _, err := m.PruneFinished(ctx, kairos.PruneCutoffs{TokenUsage: cut}); err != nil {
		t.Fatal(err)
	}
	checkRolledUpDays(t, m, day)
}

// seedFinishedRows writes, at old, rows of every hot table: done and
// pending updates, a sent message, decided/pending/unclaimed approvals,
// an attempt and sent/pending schedule firings.
func seedFinishedRows(t *testing.T, db *store.DB, ul *store.UpdateLog, old time.Time) {
	t.Helper()
	ctx := context.Background()
	raw := []byte(`{}`)
	ul.SaveUpdates(ctx, []*kairos.RawUpdate{{UpdateID: 1, Payload: raw, ReceivedAt: old}, {UpdateID: 2, Payload: raw, ReceivedAt: old},
		{UpdateID: 3, Payload: raw, ReceivedAt: old}})
	ul.MarkUpdateDone(ctx, 1)
	ul.MarkUpdateDone(ctx, 3) // the newest: kept for the poll offset
	ul.BeginSend(ctx, "u1:0", 1)
	ul.MarkSent(ctx, "u1:0", 10)
	for _, id := range []string{"decided", "pending", "unclaimed"} {
		if err := ul.CreateApproval(ctx, &kairos.PendingApproval{ID: id, UserID: 1, ExpiresAt: old.Add(time.Hour), State: []byte("{}")}, false); err != nil {
			t.Fatal(err)
		}
	}
	ul.DecideApproval(ctx, "decided", kairos.DecisionApproved, "telegram:1", old)
	ul.ClaimApproval(ctx, "decided", "waiter")
	ul.DecideApproval(ctx, "unclaimed", kairos.DecisionApproved, "telegram:1", old)
	ul.CountAttempts(ctx, []string{"k"}, time.Hour)
	for _, s := range []struct {
		id     int64
		status string
	}{{1, kairos.FiringSent}, {2, kairos.FiringPending}} {
		if err := db.Gorm().Exec(`INSERT INTO schedule_firings (schedule_id, due_at, claimed_at, status) VALUES (?, ?, ?, ?)`,
			s.id, old.UnixMilli(), old.UnixMilli(), s.status).Error; err != nil {
			t.Fatal(err)
		}
	}
}

// recordUsageAt records one call of model "m" by user at when (priced when
// cost > 0).
func recordUsageAt(t *testing.T, sess *store.SessionStore, user string, when time.Time, prompt, cached, completion int, cost float64) {
	t.Helper()
	if err := sess.RecordUsage(context.Background(), &kairos.UsageRecord{SessionID: "s", UserKey: user, ThreadKey: "main:" + user, Model: "m",
		PromptTokens: prompt, CachedTokens: cached, CompletionTokens: completion, CostUSD: cost, Priced: cost > 0, CreatedAt: when}); err != nil {
		t.Fatal(err)
	}
}

// checkRolledUpDays checks the two users' rolled-up day: user 1's three
// priced calls (one of them late), user 2's one unpriced call.
func checkRolledUpDays(t *testing.T, m *store.Maintenance, day time.Time) {
	t.Helper()
	rows, err := m.DailyUsageRows(context.Background(), "")
	if err != nil || len(rows) != 2 {
		t.Fatalf("daily rows %+v %v", rows, err)
	}
	r := rows[0]
	if r.UserKey != "telegram:1" || r.ThreadKey != "main:telegram:1" || r.DayStart != day.UnixMilli() || r.Calls != 3 || r.PromptTokens != 1300 ||
		r.CachedTokens != 40 || r.Completion != 130 || r.CostNUSD != 1_750_000_000 || r.UnpricedCalls != 0 {
		t.Fatalf("user 1's day %+v", r)
	}
	if r := rows[1]; r.UserKey != "telegram:2" || r.Calls != 1 || r.PromptTokens != 7 || r.UnpricedCalls != 1 {
		t.Fatalf("user 2's day %+v", r)
	}
}
