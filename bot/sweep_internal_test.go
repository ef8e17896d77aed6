package bot

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// TestSweeperLeavesALiveWaiterAlone: on a loaded machine a waiter in this
// process can beat late; the sweeper must not take its request as an
// orphan (expiring it with a notice and no continuation, so the turn never
// answers). A request with no waiter here is still expired.
func TestSweeperLeavesALiveWaiterAlone(t *testing.T) {
	now := time.Now()
	clock := now
	b, updates := storeBot(t, Config{Now: func() time.Time { return clock }})
	ctx := context.Background()
	for _, id := range []string{"live", "orphan"} {
		row := &kairos.PendingApproval{ID: id, ChatID: 7, UserID: 7, Action: "memory.forget", ExpiresAt: now.Add(time.Second)}
		if err := updates.CreateApproval(ctx, row, false); err != nil {
			t.Fatal(err)
		}
	}
	b.approvals.Store("live", &pendingApproval{ch: make(chan kairos.Decision, 1), userID: 7})
	clock = now.Add(time.Minute) // both expired, both heartbeats long stale
	b.sweepApprovals(ctx)

	live, err := updates.FindApproval(ctx, "live")
	if err != nil || live.Status != kairos.ApprovalPending {
		t.Fatalf("the sweeper took a request whose waiter is alive here: %+v %v", live, err)
	}
	orphan, err := updates.FindApproval(ctx, "orphan")
	if err != nil || orphan.Status != kairos.DecisionExpired {
		t.Fatalf("a request nobody waits for was not expired: %+v %v", orphan, err)
	}
}
