package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// TestClaimOperatorIsSingleUse: a wrong hash claims nothing; the right
// one makes exactly one of many concurrent claimants an operator, stored
// with its role; afterwards the claim is gone. A user already allowed
// (70, outside the claimants so that a winner cannot be them by chance)
// keeps their role until they claim a code themselves.
func TestClaimOperatorIsSingleUse(t *testing.T) {
	ctx := context.Background()
	l := store.NewUpdateLog(storetest.MustOpenDB(t))
	if err := l.GrantAccess(ctx, 70, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.SetOperatorClaim(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.ClaimOperator(ctx, 5, "wrong"); ok || err != nil {
		t.Fatalf("wrong hash claimed: %v %v", ok, err)
	}
	var wg sync.WaitGroup
	wins := make(chan int64, 10)
	for id := int64(1); id <= 10; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := l.ClaimOperator(ctx, id, "h1")
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins <- id
			}
		}()
	}
	wg.Wait()
	close(wins)
	var winners []int64
	for id := range wins {
		winners = append(winners, id)
	}
	if len(winners) != 1 {
		t.Fatalf("%d claimants won: %v", len(winners), winners)
	}
	ops, err := l.Operators(ctx)
	if err != nil || !slices.Equal(ops, winners) {
		t.Fatalf("operators %v, %v; want %v", ops, err, winners)
	}
	if h, _ := l.OperatorClaim(ctx); h != "" {
		t.Fatalf("claim still pending: %q", h)
	}
	grants, _ := l.AccessGrants(ctx)
	roles := map[int64]string{}
	for _, g := range grants {
		roles[g.UserID] = g.Role
	}
	if roles[70] != store.RoleAllowed || roles[winners[0]] != store.RoleOperator {
		t.Fatalf("roles %v", roles)
	}
	if err := l.SetOperatorClaim(ctx, "h2"); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.ClaimOperator(ctx, 70, "h2"); !ok || err != nil {
		t.Fatalf("allowed user's claim: %v %v", ok, err)
	}
	if ops, _ := l.Operators(ctx); !slices.Equal(ops, []int64{winners[0], 70}) {
		t.Fatalf("operators after the allowed user's claim: %v", ops)
	}
}
