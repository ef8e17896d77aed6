package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

func TestAPITokensCreateFindRevoke(t *testing.T) {
	ctx := context.Background()
	s := store.NewAPIStore(storetest.MustOpenDB(t))
	secret := kairos.NewSecret("kat_")
	tok := &kairos.APIToken{ID: kairos.NewID(), Name: "home", Scope: kairos.ScopeRead}
	if err := s.CreateAPIToken(ctx, tok, kairos.HashSecret(secret)); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	got, err := s.APITokenByHash(ctx, kairos.HashSecret(secret), now)
	if err != nil || got.Name != "home" || got.Scope != kairos.ScopeRead || got.LastUsedAt.IsZero() {
		t.Fatalf("find = %+v, %v", got, err)
	}
	if _, err := s.APITokenByHash(ctx, kairos.HashSecret(secret+"x"), now); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("a wrong secret: %v, want ENOTFOUND", err)
	}
	if err := s.RevokeAPIToken(ctx, tok.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAPIToken(ctx, tok.ID, now); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("second revoke: %v, want ENOTFOUND", err)
	}
	if _, err := s.APITokenByHash(ctx, kairos.HashSecret(secret), now); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("a revoked token still works: %v", err)
	}
	all, err := s.APITokens(ctx)
	if err != nil || len(all) != 1 || all[0].RevokedAt.IsZero() {
		t.Fatalf("list = %+v, %v", all, err)
	}
}

func TestConsoleLinkIsSingleUseUnderRace(t *testing.T) {
	ctx := context.Background()
	s := store.NewAPIStore(storetest.MustOpenDB(t))
	now := time.Now()
	if err := s.CreateConsoleLink(ctx, "h1", 42, now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateConsoleLink(ctx, "old", 42, now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if uid, err := s.UseConsoleLink(ctx, "h1", now); err == nil && uid == 42 {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("the link signed in %d browsers, want 1", wins.Load())
	}
	if _, err := s.UseConsoleLink(ctx, "old", now); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("an expired link: %v, want ENOTFOUND", err)
	}
}

func TestConsoleSessionExpiresAndEnds(t *testing.T) {
	ctx := context.Background()
	s := store.NewAPIStore(storetest.MustOpenDB(t))
	now := time.Now()
	cs := &kairos.ConsoleSession{UserID: 7, CSRF: "c", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := s.CreateConsoleSession(ctx, "s1", cs); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ConsoleSession(ctx, "s1", now); err != nil || got.UserID != 7 || got.CSRF != "c" {
		t.Fatalf("session = %+v, %v", got, err)
	}
	if _, err := s.ConsoleSession(ctx, "s1", now.Add(2*time.Hour)); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("an expired session: %v", err)
	}
	if err := s.EndConsoleSession(ctx, "s1", now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsoleSession(ctx, "s1", now); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("an ended session: %v", err)
	}
}

// Every scope of kairos.Scopes is stored and found as made, admin
// included; any other is refused before it is stored.
func TestAPITokenScopes(t *testing.T) {
	ctx := context.Background()
	s := store.NewAPIStore(storetest.MustOpenDB(t))
	for _, scope := range kairos.Scopes {
		secret := kairos.NewSecret("kat_")
		if err := s.CreateAPIToken(ctx, &kairos.APIToken{ID: kairos.NewID(), Name: scope, Scope: scope}, kairos.HashSecret(secret)); err != nil {
			t.Fatalf("create a %s token: %v", scope, err)
		}
		got, err := s.APITokenByHash(ctx, kairos.HashSecret(secret), time.Now())
		if err != nil || got.Scope != scope {
			t.Fatalf("a %s token found as %+v, %v", scope, got, err)
		}
	}
	for _, bad := range []string{"", "root", "Admin", "write "} {
		err := s.CreateAPIToken(ctx, &kairos.APIToken{ID: kairos.NewID(), Name: "x", Scope: bad}, kairos.HashSecret(kairos.NewSecret("kat_")))
		if kairos.ErrorCode(err) != kairos.EINVALID {
			t.Fatalf("scope %q: %v, want EINVALID", bad, err)
		}
	}
	if all, _ := s.APITokens(ctx); len(all) != len(kairos.Scopes) {
		t.Fatalf("%d tokens stored, want %d", len(all), len(kairos.Scopes))
	}
}
