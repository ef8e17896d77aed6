package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// seedDirMemories stores n memories spread over users u0..u(users-1).
func seedDirMemories(tb testing.TB, db *store.DB, n, users int) {
	tb.Helper()
	ctx := context.Background()
	ms := store.NewMemoryStore(db)
	for i := range n {
		m := &kairos.Memory{UserKey: fmt.Sprintf("telegram:%d", i%users), Store: "user_memory", Type: "fact",
			Content: fmt.Sprintf("note number %d about the garden and the %d tomatoes", i, i*7)}
		if _, _, err := ms.StoreMemory(ctx, m); err != nil {
			tb.Fatal(err)
		}
	}
}

func TestDirectoryMemoriesPageEveryRowOnce(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	seedDirMemories(t, db, 23, 2)
	d := store.NewDirectory(db)
	seen := map[string]bool{}
	cursor, pages := "", 0
	for {
		ms, next, err := d.Memories(ctx, "", kairos.Page{Cursor: cursor, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, m := range ms {
			if seen[m.ID] {
				t.Fatalf("memory %s on two pages", m.ID)
			}
			seen[m.ID] = true
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 23 || pages != 5 {
		t.Fatalf("saw %d memories on %d pages, want 23 on 5", len(seen), pages)
	}
	one, _, err := d.Memories(ctx, "telegram:1", kairos.Page{Limit: 200})
	if err != nil || len(one) != 11 {
		t.Fatalf("user filter: %d, %v", len(one), err)
	}
	if _, _, err := d.Memories(ctx, "", kairos.Page{Cursor: "abc"}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("a forged cursor: %v", err)
	}
}

func TestDirectoryApprovalsNewestFirstByStatus(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	l := store.NewUpdateLog(db)
	base := time.Now().Add(-time.Hour)
	for i := range 7 {
		pa := &kairos.PendingApproval{ID: fmt.Sprintf("a%d", i), ChatID: 1, UserID: 1, Action: "memory.forget",
			ExpiresAt: base.Add(2 * time.Hour), CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if err := l.CreateApproval(ctx, pa, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.DecideApproval(ctx, "a3", kairos.DecisionDenied, "telegram:1", time.Now()); err != nil {
		t.Fatal(err)
	}
	d := store.NewDirectory(db)
	var ids []string
	cursor := ""
	for {
		as, next, err := d.Approvals(ctx, kairos.ApprovalPending, kairos.Page{Cursor: cursor, Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.State != nil {
				t.Fatal("the paused turn's state left the store")
			}
			ids = append(ids, a.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if fmt.Sprint(ids) != "[a6 a5 a4 a2 a1 a0]" {
		t.Fatalf("pending approvals = %v", ids)
	}
	for _, c := range []string{"a6", "x/a6", "12/"} {
		if _, _, err := d.Approvals(ctx, "", kairos.Page{Cursor: c}); kairos.ErrorCode(err) != kairos.EINVALID {
			t.Fatalf("a forged cursor %q: %v", c, err)
		}
	}
	if users, pending, err := d.Counts(ctx); err != nil || users != 0 || pending != 6 {
		t.Fatalf("counts = %d users, %d pending, %v; want 0, 6", users, pending, err)
	}
}

// TestDirectorySchedulesPageByNextRun: the schedules list pages by next
// run, then id (several share a next run), every active schedule once,
// with a user filter and a forged cursor refused.
func TestDirectorySchedulesPageByNextRun(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	st := store.NewScheduleStore(db)
	base := time.Now().Add(time.Hour).Truncate(time.Minute)
	var want []int64
	for i := range 11 {
		s := &kairos.Schedule{UserID: int64(1 + i%2), ChatID: int64(1 + i%2), ThreadKey: fmt.Sprintf("agent:main:telegram:dm:%d", 1+i%2),
			Kind: kairos.ScheduleReminder, Text: fmt.Sprintf("r%d", i), TZ: "UTC",
			Start: base.Format("2006-01-02T15:04:05"), NextRun: base.Add(time.Duration(i/3) * time.Minute)}
		if err := st.CreateSchedule(ctx, s, 0); err != nil {
			t.Fatal(err)
		}
		want = append(want, s.ID)
	}
	if err := st.CancelSchedule(ctx, want[4], 0); err != nil {
		t.Fatal(err)
	}
	want = append(want[:4], want[5:]...)
	d := store.NewDirectory(db)
	walk := func(user int64) (ids []int64, pages int) {
		cursor := ""
		for {
			ss, next, err := d.SchedulePage(ctx, user, kairos.Page{Cursor: cursor, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, s := range ss {
				ids = append(ids, s.ID)
			}
			if next == "" {
				return ids, pages
			}
			cursor = next
		}
	}
	if ids, pages := walk(0); fmt.Sprint(ids) != fmt.Sprint(want) || pages != 4 {
		t.Fatalf("walked %v on %d pages, want %v on 4", ids, pages, want)
	}
	if ids, _ := walk(2); len(ids) != 5 {
		t.Fatalf("user 2's schedules: %v", ids)
	}
	if _, _, err := d.SchedulePage(ctx, 0, kairos.Page{Cursor: "12"}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("a forged cursor: %v", err)
	}
	if _, _, err := d.SchedulePage(ctx, 0, kairos.Page{Cursor: "12/x"}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("a forged cursor id: %v", err)
	}
}

// BenchmarkDirectoryMemoriesPage is the API's first page of memories
// (GET /api/v1/memories) at 100,000 memories.
func BenchmarkDirectoryMemoriesPage(b *testing.B) {
	db := storetest.MustOpenDB(b)
	seedDirMemories(b, db, 100_000, 500)
	d := store.NewDirectory(db)
	ctx := context.Background()
	_, next, _ := d.Memories(ctx, "", kairos.Page{Limit: 50})
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		cur := ""
		if i%2 == 1 {
			cur = next
		}
		if _, _, err := d.Memories(ctx, "", kairos.Page{Cursor: cur, Limit: 50}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSchedulesFirstPage is GET /api/v1/schedules at 10,000 active
// schedules: the first 50 by next run, and every other time the next 50.
func BenchmarkSchedulesFirstPage(b *testing.B) {
	db := storetest.MustOpenDB(b)
	st := store.NewScheduleStore(db)
	ctx := context.Background()
	now := time.Now()
	for i := range 10_000 {
		s := &kairos.Schedule{UserID: int64(1 + i%300), ChatID: int64(1 + i%300), ThreadKey: fmt.Sprintf("agent:main:telegram:dm:%d", 1+i%300),
			Kind: kairos.ScheduleReminder, Text: fmt.Sprintf("reminder %d", i), TZ: "Europe/Lisbon",
			Start: now.Add(time.Duration(i) * time.Minute).Format("2006-01-02T15:04:05"), NextRun: now.Add(time.Duration(i) * time.Minute)}
		if err := st.CreateSchedule(ctx, s, 0); err != nil {
			b.Fatal(err)
		}
	}
	d := store.NewDirectory(db)
	_, next, _ := d.SchedulePage(ctx, 0, kairos.Page{Limit: 50})
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		cur := ""
		if i%2 == 1 {
			cur = next
		}
		if list, _, err := d.SchedulePage(ctx, 0, kairos.Page{Cursor: cur, Limit: 50}); err != nil || len(list) != 50 {
			b.Fatal(len(list), err)
		}
	}
}
