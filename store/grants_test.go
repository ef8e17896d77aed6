package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// TestGrantsKeyExpiryTasksAndRevoke: a grant covers exactly its user,
// chat, tool and target while in force; a task's call needs covers_tasks;
// saving the same key renews the row; a revoke is seen by the next use.
func TestGrantsKeyExpiryTasksAndRevoke(t *testing.T) {
	ctx := context.Background()
	gs := store.NewGrantStore(storetest.MustOpenDB(t))
	now := time.Now().Truncate(time.Millisecond)
	g := &kairos.Grant{UserKey: "telegram:1", ThreadKey: "th:1", Tool: "notes__add_note", Action: kairos.ActionMCPWrite,
		Target: "notes__add_note(text=*)", Label: "add_note with any text", ExpiresAt: now.Add(time.Hour), CreatedBy: "telegram:1"}
	if err := gs.SaveGrant(ctx, g); err != nil || g.ID == "" {
		t.Fatalf("save: %v (%+v)", err, g)
	}
	key := kairos.GrantKey{UserKey: "telegram:1", ThreadKey: "th:1", Tool: "notes__add_note", Target: "notes__add_note(text=*)"}
	// Every field of the key must match: a change of any one misses.
	for i, k := range []kairos.GrantKey{
		{UserKey: "telegram:2", ThreadKey: key.ThreadKey, Tool: key.Tool, Target: key.Target},
		{UserKey: key.UserKey, ThreadKey: "th:2", Tool: key.Tool, Target: key.Target},
		{UserKey: key.UserKey, ThreadKey: key.ThreadKey, Tool: "notes__delete", Target: key.Target},
		{UserKey: key.UserKey, ThreadKey: key.ThreadKey, Tool: key.Tool, Target: "notes__add_note(text=x)"},
		{UserKey: key.UserKey, ThreadKey: key.ThreadKey, Tool: key.Tool, Target: key.Target, Task: true},
	} {
		if _, err := gs.UseGrant(ctx, k, now); kairos.ErrorCode(err) != kairos.ENOTFOUND {
			t.Errorf("key %d (%+v) was covered: %v", i, k, err)
		}
	}
	got, err := gs.UseGrant(ctx, key, now)
	if err != nil || got.ID != g.ID || got.Uses != 1 || !got.LastUsedAt.Equal(now) {
		t.Fatalf("use: %+v, %v", got, err)
	}
	if _, err := gs.UseGrant(ctx, key, now.Add(time.Hour)); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("the grant covered a call at its expiry: %v", err)
	}
	// Tasks: only once the grant says so.
	if err := gs.SetGrantTasks(ctx, g.ID, true); err != nil {
		t.Fatal(err)
	}
	tk := key
	tk.Task = true
	if _, err := gs.UseGrant(ctx, tk, now); err != nil {
		t.Errorf("a grant covering tasks did not cover a task: %v", err)
	}
	// Renewed, not doubled: always now, uses and tasks kept.
	again := &kairos.Grant{UserKey: key.UserKey, ThreadKey: key.ThreadKey, Tool: key.Tool, Action: kairos.ActionMCPWrite, Target: key.Target,
		Label: "add_note with any text", CreatedBy: "telegram:1"}
	if err := gs.SaveGrant(ctx, again); err != nil {
		t.Fatal(err)
	}
	list, err := gs.Grants(ctx, kairos.GrantFilter{UserKey: "telegram:1"}, now.Add(48*time.Hour))
	if err != nil || len(list) != 1 || list[0].ID != g.ID || !list[0].ExpiresAt.IsZero() || list[0].Uses != 2 || !list[0].CoversTasks {
		t.Fatalf("after renewal: %+v, %v", list, err)
	}
	if err := gs.RevokeGrant(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := gs.UseGrant(ctx, key, now); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("a revoked grant covered a call: %v", err)
	}
	if err := gs.RevokeGrant(ctx, g.ID); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("second revoke: %v", err)
	}
	if err := gs.SaveGrant(ctx, &kairos.Grant{UserKey: "u", ThreadKey: "t", Tool: "x"}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("a grant without a target was saved: %v", err)
	}
}

// TestGrantUsesCountedUnderContention: many calls using one grant at once
// each count once (one statement per use).
func TestGrantUsesCountedUnderContention(t *testing.T) {
	ctx := context.Background()
	gs := store.NewGrantStore(storetest.MustOpenDB(t))
	g := &kairos.Grant{UserKey: "u", ThreadKey: "t", Tool: "code", Target: "POST ha.local"}
	if err := gs.SaveGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := gs.UseGrant(ctx, kairos.GrantKey{UserKey: "u", ThreadKey: "t", Tool: "code", Target: "POST ha.local"}, time.Now()); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if f, err := gs.FindGrant(ctx, g.ID); err != nil || f.Uses != n {
		t.Fatalf("uses = %v, %v; want %d", f, err, n)
	}
	if n, err := gs.DeleteExpiredGrants(ctx, time.Now()); err != nil || n != 0 {
		t.Errorf("an unexpiring grant was deleted as expired: %d, %v", n, err)
	}
}

// TestApprovalScopeOnlyWhenOffered: a decision's grant scope is kept only
// on a request that offered a grant; an unknown scope is refused.
func TestApprovalScopeOnlyWhenOffered(t *testing.T) {
	ctx := context.Background()
	l := store.NewUpdateLog(storetest.MustOpenDB(t))
	now := time.Now()
	for i, grantable := range []bool{false, true} {
		id := fmt.Sprintf("s%d", i)
		pa := &kairos.PendingApproval{ID: id, ChatID: 9, UserID: 9, Action: "mcp.write", Tool: "notes__add_note", Grantable: grantable,
			Target: "notes__add_note(text=*)", SourceMessageID: 77, ExpiresAt: now.Add(time.Minute)}
		if err := l.CreateApproval(ctx, pa, false); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := l.PendingApprovalsInChat(ctx, 9); err != nil || len(p) != 2 || p[0].SourceMessageID != 77 || p[1].Target == "" {
		t.Fatalf("pending in chat: %+v, %v", p, err)
	}
	always := kairos.Decision{Outcome: kairos.DecisionApproved, By: "telegram:9", At: now, Scope: kairos.GrantAlways}
	if won, err := l.DecideApprovalAs(ctx, "s0", always); won || err != nil {
		t.Errorf("an always on a request that offered no grant: won %v, %v", won, err)
	}
	if _, err := l.DecideApprovalAs(ctx, "s1", kairos.Decision{Outcome: kairos.DecisionApproved, At: now, Scope: "forever"}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("unknown scope: %v", err)
	}
	if won, err := l.DecideApprovalAs(ctx, "s1", always); !won || err != nil {
		t.Fatalf("always on a grantable request: %v, %v", won, err)
	}
	if row, err := l.FindApproval(ctx, "s1"); err != nil || row.Scope != kairos.GrantAlways || row.Status != kairos.DecisionApproved {
		t.Fatalf("row %+v, %v", row, err)
	}
	if p, _ := l.PendingApprovalsInChat(ctx, 9); len(p) != 1 || p[0].ID != "s0" {
		t.Errorf("pending after the decision: %+v", p)
	}
}
