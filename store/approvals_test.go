package store_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

func TestApprovalsDecideAndClaimOnce(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	// The store stamps the heartbeat with its own clock: pinned to now, so
	// that a stall before CreateApproval cannot move the heartbeat past the
	// one-second cut below (it read the wall clock; a 1 s stall failed it).
	now := time.Now()
	db.Now = func() time.Time { return now }
	l := store.NewUpdateLog(db)
	if _, err := l.SaveUpdates(ctx, []*kairos.RawUpdate{{UpdateID: 7, ChatID: 1, Payload: []byte(`{}`), ReceivedAt: now}}); err != nil {
		t.Fatal(err)
	}
	pa := &kairos.PendingApproval{ID: "a1", UpdateID: 7, ChatID: 1, UserID: 1, Action: "memory.forget", Text: "<b>Approval</b>",
		MessageID: 42, State: []byte(`{"v":1}`), ExpiresAt: now.Add(time.Minute)}
	if err := l.CreateApproval(ctx, pa, true); err != nil {
		t.Fatal(err)
	}
	if p, _ := l.PendingUpdates(ctx, 0); len(p) != 0 {
		t.Fatalf("the paused turn's update is still pending: %v", p)
	}
	if _, err := l.FindApproval(ctx, "nope"); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("FindApproval(unknown) = %v", err)
	}
	// Nobody waits (heartbeat older than the cut): listed as stale.
	if rows, err := l.StaleApprovals(ctx, now.Add(time.Second)); err != nil || len(rows) != 1 || string(rows[0].State) != `{"v":1}` {
		t.Fatalf("StaleApprovals = %v, %v", rows, err)
	}
	if rows, _ := l.StaleApprovals(ctx, now.Add(-time.Second)); len(rows) != 0 {
		t.Fatalf("a fresh heartbeat is listed as stale: %v", rows)
	}

	// Many concurrent decisions: exactly one wins.
	var wins atomic.Int32
	testkit.Hammer(t, 8, func(i int) error {
		outcome := []string{kairos.DecisionApproved, kairos.DecisionDenied}[i%2]
		ok, err := l.DecideApproval(ctx, "a1", outcome, "telegram:1", now)
		if ok {
			wins.Add(1)
		}
		return err
	})
	if wins.Load() != 1 {
		t.Fatalf("%d decisions won, want 1", wins.Load())
	}
	if ok, _ := l.DecideApproval(ctx, "a1", kairos.DecisionExpired, "", now); ok {
		t.Fatal("a decided request expired")
	}
	row, err := l.HeartbeatApproval(ctx, "a1", now.Add(time.Second))
	if err != nil || row.Status == kairos.ApprovalPending || row.DecidedBy != "telegram:1" || row.MessageID != 42 {
		t.Fatalf("HeartbeatApproval = %+v, %v", row, err)
	}
	if ok, err := l.ClaimApproval(ctx, "a1", "waiter"); err != nil || !ok {
		t.Fatalf("ClaimApproval = %v, %v", ok, err)
	}
	if ok, _ := l.ClaimApproval(ctx, "a1", "resumer"); ok {
		t.Fatal("claimed twice")
	}
	row, _ = l.FindApproval(ctx, "a1")
	if row.ClaimedBy != "waiter" || len(row.State) != 0 {
		t.Fatalf("after the claim: claimed_by %q, state %q", row.ClaimedBy, row.State)
	}
	if rows, _ := l.StaleApprovals(ctx, now.Add(time.Hour)); len(rows) != 0 {
		t.Fatalf("a claimed request is listed as stale: %v", rows)
	}

	// An expired request cannot be approved; it can be expired once.
	pb := &kairos.PendingApproval{ID: "b1", ChatID: 1, UserID: 1, ExpiresAt: now.Add(-time.Second), State: []byte(`{}`)}
	if err := l.CreateApproval(ctx, pb, false); err != nil {
		t.Fatal(err)
	}
	if ok, _ := l.DecideApproval(ctx, "b1", kairos.DecisionApproved, "telegram:1", now); ok {
		t.Fatal("approved after expiry")
	}
	if ok, _ := l.DecideApproval(ctx, "b1", kairos.DecisionExpired, "", now); !ok {
		t.Fatal("could not expire")
	}
	if ok, _ := l.ClaimApproval(ctx, "b1", "waiter"); !ok {
		t.Fatal("could not claim the expired request")
	}
}
