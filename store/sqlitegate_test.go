package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// openSQLiteBusy opens a fresh SQLite store whose busy timeout is ms.
func openSQLiteBusy(t *testing.T, ms int) *store.DB {
	t.Helper()
	restore := store.SetSQLiteBusyTimeout(ms)
	db, err := store.Open(context.Background(), store.Config{DataDir: t.TempDir()})
	restore()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.SQL().Exec(`CREATE TABLE gate_probe (id INTEGER PRIMARY KEY AUTOINCREMENT, w INTEGER, n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// Writers of one process never see "database is locked" from each other,
// whichever path they take (gorm transactions, plain statements, prepared
// statements, INSERT … RETURNING): they queue in the write gate. With a
// 1 ms busy timeout and no gate, SQLite's busy handler fails most of them.
func TestSQLiteWritersQueueInsteadOfFailing(t *testing.T) {
	db := openSQLiteBusy(t, 1)
	ctx := context.Background()
	ins, err := db.SQL().PrepareContext(ctx, `INSERT INTO gate_probe (w, n) VALUES (?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	const workers, each = 12, 60
	testkit.Hammer(t, workers, func(w int) error {
		for i := 0; i < each; i++ {
			var err error
			switch i % 4 {
			case 0:
				err = db.Gorm().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
					for k := 0; k < 3; k++ {
						if err := tx.Exec(`INSERT INTO gate_probe (w, n) VALUES (?, ?)`, w, i).Error; err != nil {
							return err
						}
					}
					return tx.Exec(`DELETE FROM gate_probe WHERE w = ? AND n = ? AND id NOT IN (SELECT MIN(id) FROM gate_probe WHERE w = ? AND n = ?)`, w, i, w, i).Error
				})
			case 1:
				_, err = db.SQL().ExecContext(ctx, `INSERT INTO gate_probe (w, n) VALUES (?, ?)`, w, i)
			case 2:
				_, err = ins.ExecContext(ctx, w, i)
			case 3:
				var id int64
				err = db.SQL().QueryRowContext(ctx, `INSERT INTO gate_probe (w, n) VALUES (?, ?) RETURNING id`, w, i).Scan(&id)
			}
			if err != nil {
				return fmt.Errorf("write %d: %w", i, err)
			}
		}
		return nil
	})
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM gate_probe`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != workers*each {
		t.Fatalf("%d rows, want %d", n, workers*each)
	}
}

// A writer waiting behind an open transaction waits for its commit (not
// the busy timeout), reads go on beside it, and a waiter whose context
// ends, or who waited out the gate's bound, leaves the queue with an
// error that says so.
func TestSQLiteWriterWaitsForTheTransactionBeforeIt(t *testing.T) {
	db := openSQLiteBusy(t, 1)
	ctx := context.Background()
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO gate_probe (w, n) VALUES (1, 1)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM gate_probe`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a read beside the open transaction: %d rows, %v", n, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := db.SQL().ExecContext(short, `INSERT INTO gate_probe (w, n) VALUES (3, 3)`); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a waiter whose context ended: %v, want the context's error", err)
	}
	restore := store.SetGateWait(30 * time.Millisecond)
	_, err = db.SQL().ExecContext(ctx, `INSERT INTO gate_probe (w, n) VALUES (4, 4)`)
	restore()
	if err == nil || !strings.Contains(err.Error(), "database is locked: waited 30ms") {
		t.Fatalf("a writer that waited out the gate: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.SQL().ExecContext(ctx, `INSERT INTO gate_probe (w, n) VALUES (2, 2)`)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the second writer ran while the transaction was open: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the second writer after the commit: %v", err)
	}
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM gate_probe`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rows, %v; want 2", n, err)
	}
}

// BenchmarkSQLiteParallelWrites: one-row write transactions from many
// goroutines (the gate's cost and what queueing buys over busy-waiting).
func BenchmarkSQLiteParallelWrites(b *testing.B) {
	restore := store.SetSQLiteBusyTimeout(5000)
	db, err := store.Open(context.Background(), store.Config{DataDir: b.TempDir()})
	restore()
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL().Exec(`CREATE TABLE gate_probe (id INTEGER PRIMARY KEY AUTOINCREMENT, w INTEGER, n INTEGER)`); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var waits []time.Duration
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			start := time.Now()
			err := db.Gorm().Transaction(func(tx *gorm.DB) error {
				return tx.Exec(`INSERT INTO gate_probe (w, n) VALUES (1, 2)`).Error
			})
			if err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		waits = append(waits, mine...)
		mu.Unlock()
	})
	slices.Sort(waits)
	if len(waits) > 0 {
		b.ReportMetric(float64(waits[len(waits)*999/1000].Microseconds()), "p99.9-µs")
		b.ReportMetric(float64(waits[len(waits)-1].Microseconds()), "max-µs")
	}
}

// Fresh databases (cold statement caches) written from many goroutines:
// a statement prepared twice while warming was closed under the cache's
// lock, which waited for a connection queued in the write gate, whose
// holder waited for the cache's lock. The writes then hung until the
// gate's bound (before the gate: until the busy timeout, failing with
// "database is locked").
func TestColdStatementCacheUnderContention(t *testing.T) {
	defer store.SetGateWait(5 * time.Second)()
	ctx := context.Background()
	for round := 0; round < 12; round++ {
		cs := store.NewClockStore(openSQLiteBusy(t, 5000))
		testkit.Hammer(t, 8, func(w int) error {
			for i := 0; i < 4; i++ {
				at := time.Date(2026, 2, 9, 1, 0, w*4+i, 0, time.UTC)
				if err := cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: fmt.Sprint("t", w), UserKey: "telegram:1", At: at, AnyChannel: true}); err != nil {
					return fmt.Errorf("round %d: %w", round, err)
				}
			}
			return nil
		})
		if t.Failed() {
			return
		}
	}
}

// A transaction holding the gate that needs one more connection (a read
// through the pool, or gorm's statement cache waiting on a statement
// another goroutine prepares through the pool) gets one at once, even
// when queued writers hold as many connections as the old pool allowed
// (8). With a bounded pool it waited until the queued writers gave up
// ("database is locked: waited …") and freed theirs.
func TestGateHolderGetsAConnectionPastQueuedWriters(t *testing.T) {
	db := openSQLiteBusy(t, 5000)
	defer store.SetGateWait(3 * time.Second)()
	ctx := context.Background()
	tx := db.Gorm().WithContext(ctx).Begin()
	if tx.Error != nil {
		t.Fatal(tx.Error)
	}
	if err := tx.Exec(`INSERT INTO gate_probe (w, n) VALUES (0, 0)`).Error; err != nil {
		t.Fatal(err)
	}
	const writers = 10
	errs := make(chan error, writers)
	for w := 1; w <= writers; w++ {
		go func() {
			errs <- db.Gorm().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
				return tx.Exec(`INSERT INTO gate_probe (w, n) VALUES (?, 1)`, w).Error
			})
		}()
	}
	// Wait until every writer holds a connection (queued in the gate) or
	// waits for one: the transaction and the writers account for 11.
	for {
		s := db.SQL().Stats()
		if s.InUse+int(s.WaitCount) >= writers+1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var n int
	if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM gate_probe`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit().Error; err != nil {
		t.Fatal(err)
	}
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil {
			t.Errorf("a queued writer: %v", err)
		}
	}
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM gate_probe`).Scan(&n); err != nil || n != writers+1 {
		t.Fatalf("%d rows, %v; want %d", n, err, writers+1)
	}
}
