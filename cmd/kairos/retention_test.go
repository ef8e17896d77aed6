package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/jobs"
	"github.com/kairos-agent/kairos/store"
)

// runFor runs `kairos run` until stop is called.
func runFor(t *testing.T, e *env) (stop func()) {
	t.Helper()
	m := e.main()
	started := make(chan struct{}, 1)
	m.Started = func(string) { started <- struct{}{} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- m.Main(ctx, []string{"run"}) }()
	select {
	case <-started:
	case code := <-done:
		t.Fatalf("kairos run exited with %d:\n%s", code, e.logs.String())
	case <-testCtx(t).Done():
		t.Fatalf("kairos run did not start:\n%s", e.logs.String())
	}
	return func() {
		cancel()
		select {
		case <-done:
		case <-testCtx(t).Done():
			t.Fatal("kairos run did not stop")
		}
	}
}

type footprint struct {
	rows      map[string]int64
	liveBytes int64 // SQLite pages in use (page_count - freelist_count) × page_size
	newest    int64 // the latest done_at or outbox created_at (ms)
}

func measure(t *testing.T, dataDir string) footprint {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := footprint{rows: map[string]int64{}}
	for _, table := range []string{"updates", "outbox", "approvals", "token_usage", "token_usage_daily"} {
		f.rows[table] = count(t, db, table, "")
	}
	db.SQL().QueryRow("SELECT MAX(x) FROM (SELECT MAX(done_at) AS x FROM updates UNION ALL SELECT MAX(created_at) FROM outbox) AS t").Scan(&f.newest)
	var pages, free, size int64
	db.SQL().QueryRow("PRAGMA page_count").Scan(&pages)
	db.SQL().QueryRow("PRAGMA freelist_count").Scan(&free)
	db.SQL().QueryRow("PRAGMA page_size").Scan(&size)
	f.liveBytes = (pages - free) * size
	return f
}

// TestMaintenancePrunesBookkeeping is the retention soak (issue 20): N
// messages through `kairos run` leave one updates, one outbox and one
// token_usage row each; after a restart the bookkeeping.prune job (run at
// start) has deleted the processed updates (all but the newest) and the
// sent outbox rows, and rolling the day's token usage up leaves one row
// per user, thread, model and day. It logs rows and live database bytes
// per 1,000 messages before and after.
func TestMaintenancePrunesBookkeeping(t *testing.T) {
	if os.Getenv("KAIROS_TEST_DATABASE_URL") != "" {
		t.Skip("the footprint is measured on SQLite")
	}
	const chats, perChat = 10, 30
	e := newEnv(t)
	var users []string
	for c := 0; c < chats; c++ {
		users = append(users, fmt.Sprint(6001+c))
	}
	policy := "access:\n  allowed_users: [" + strings.Join(users, ", ") + "]\n" +
		"sessions:\n  updates_retention: PT1S\n  outbox_retention: PT1S\n  approvals_retention: PT1S\n  firings_retention: PT1S\n  token_usage_retention: P1D\n"
	if err := os.WriteFile(e.vars["KAIROS_POLICY"], []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars["KAIROS_SEND_LIMITS"] = "off"
	dataDir := e.vars["KAIROS_DATA_DIR"]

	stop := runFor(t, e)
	for i := 0; i < perChat; i++ {
		for c := 0; c < chats; c++ {
			chat := int64(6001 + c)
			e.tg.PushText(chat, chat, fmt.Sprintf("soak %d message %d", chat, i), time.Now())
		}
	}
	for c := 0; c < chats; c++ {
		e.tg.MustWaitSentTo(int64(6001+c), perChat)
	}
	stop()
	const n = chats * perChat
	before := measure(t, dataDir)
	if before.rows["updates"] < n || before.rows["outbox"] < n || before.rows["token_usage"] < n {
		t.Fatalf("the soak left fewer rows than messages: %v", before.rows)
	}

	// Every row is past its 1 s retention before the restart.
	newest := time.UnixMilli(before.newest)
	waitFor(t, "the rows to age past the retention", func() bool { return time.Since(newest) > 1100*time.Millisecond })
	stop = runFor(t, e) // bookkeeping.prune runs at start
	waitFor(t, "the prune job", func() bool {
		db, err := store.Open(context.Background(), store.Config{DataDir: dataDir})
		if err != nil {
			return false
		}
		defer db.Close()
		runs, err := store.NewJobStore(db).JobRuns(context.Background(), jobs.JobPrune, 2)
		return err == nil && len(runs) == 2 && runs[0].Outcome == kairos.JobOK // the first ran at the first start
	})
	stop()
	pruned := measure(t, dataDir)
	if pruned.rows["updates"] != 1 || pruned.rows["outbox"] != 0 {
		t.Fatalf("after the prune job: %v", pruned.rows)
	}

	// The day's usage, a day later: rolled up.
	db, err := store.Open(context.Background(), store.Config{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	pol := kairos.DefaultPolicy()
	pol.Sessions.TokenUsageRetention = kairos.MustDuration("P1D")
	if _, err := store.NewMaintenance(db).PruneFinished(context.Background(), jobs.Cutoffs(pol.Sessions, time.Now().Add(48*time.Hour))); err != nil {
		t.Fatal(err)
	}
	db.Close()
	after := measure(t, dataDir)
	if after.rows["token_usage"] != 0 || after.rows["token_usage_daily"] == 0 || after.rows["token_usage_daily"] > chats {
		t.Fatalf("after the roll-up: %v", after.rows)
	}
	per := func(v int64) float64 { return float64(v) * 1000 / n }
	for _, f := range []struct {
		name string
		fp   footprint
	}{{"before", before}, {"after prune job", pruned}, {"after roll-up", after}} {
		t.Logf("%-16s per 1,000 messages: updates %.0f, outbox %.0f, token_usage %.0f, token_usage_daily %.0f; live bytes %.0f KB",
			f.name, per(f.fp.rows["updates"]), per(f.fp.rows["outbox"]), per(f.fp.rows["token_usage"]), per(f.fp.rows["token_usage_daily"]),
			per(f.fp.liveBytes)/1024)
	}
}
