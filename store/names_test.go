package store_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// The latest names win, a user without any is absent from Names, and the
// users' list carries them.
func TestUserNamesKeptAndListed(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	d := store.NewDirectory(db)
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, n := range []kairos.UserName{{FirstName: "Ana"}, {FirstName: "Ana", Username: "ana_l"}} {
		if err := d.NoteUserName(ctx, "telegram:2002", n, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"telegram:2002", "telegram:3003"} {
		if err := db.Gorm().Exec(`INSERT INTO clock_users (user_key) VALUES (?)`, k).Error; err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Names(ctx, []string{"telegram:2002", "telegram:3003"})
	if err != nil || len(got) != 1 || got["telegram:2002"] != (kairos.UserName{FirstName: "Ana", Username: "ana_l"}) {
		t.Fatalf("names = %v, %v", got, err)
	}
	users, _, err := d.Users(ctx, kairos.Page{})
	if err != nil || len(users) != 2 || users[0].FirstName != "Ana" || users[0].Username != "ana_l" || users[1].FirstName != "" {
		t.Fatalf("users = %+v, %v", users, err)
	}
	// Many keys at once (more than one query's worth).
	keys := make([]string, 1200)
	for i := range keys {
		keys[i] = "telegram:" + strconv.Itoa(10000+i)
		if i%300 == 0 {
			d.NoteUserName(ctx, keys[i], kairos.UserName{FirstName: fmt.Sprint("U", i)}, at)
		}
	}
	if got, err := d.Names(ctx, keys); err != nil || len(got) != 4 || got[keys[900]].FirstName != "U900" {
		t.Fatalf("names of 1200 keys = %v, %v", got, err)
	}
}

// The access log pages newest first, keeps no query, and the
// maintenance job prunes it.
func TestAccessLogPagesAndPrunes(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	s := store.NewAPIStore(db)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i := range 5 {
		e := &kairos.AccessEntry{At: t0.Add(time.Duration(i) * 24 * time.Hour), Door: "api", Actor: "token:ha", Via: "token x",
			Method: "GET", Path: "/api/v1/users", Status: 200 + i, Elapsed: 3 * time.Millisecond}
		if err := s.RecordAccess(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	page, next, err := s.AccessLog(ctx, kairos.Page{Limit: 3})
	if err != nil || len(page) != 3 || next == "" || page[0].Status != 204 || page[2].Status != 202 || page[0].Elapsed != 3*time.Millisecond {
		t.Fatalf("first page = %+v %q %v", page, next, err)
	}
	rest, next, err := s.AccessLog(ctx, kairos.Page{Limit: 3, Cursor: next})
	if err != nil || len(rest) != 2 || next != "" || rest[1].Status != 200 || !rest[1].At.Equal(t0) {
		t.Fatalf("second page = %+v %q %v", rest, next, err)
	}
	if _, _, err := s.AccessLog(ctx, kairos.Page{Cursor: "x"}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("a bad cursor: %v", err)
	}
	n, err := store.NewMaintenance(db).PruneFinished(ctx, kairos.PruneCutoffs{AccessLog: t0.Add(48 * time.Hour)})
	if err != nil || n.AccessLog != 2 {
		t.Fatalf("pruned %+v, %v; want 2 access log entries", n, err)
	}
	if left, _, _ := s.AccessLog(ctx, kairos.Page{}); len(left) != 3 {
		t.Fatalf("%d entries left, want 3", len(left))
	}
}
