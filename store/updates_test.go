package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

func TestUpdateLog(t *testing.T) {
	ctx := context.Background()
	l := store.NewUpdateLog(storetest.MustOpenDB(t))
	now := time.Unix(1_800_000_000, 0)
	batch := []*kairos.RawUpdate{
		{UpdateID: 10, ChatID: 1, Payload: []byte(`{"update_id":10}`), ReceivedAt: now},
		{UpdateID: 11, ChatID: 2, Payload: []byte(`{"update_id":11}`), ReceivedAt: now},
	}
	fresh, err := l.SaveUpdates(ctx, batch)
	if err != nil || len(fresh) != 2 {
		t.Fatalf("SaveUpdates = %d, %v", len(fresh), err)
	}
	// Telegram re-delivers unconfirmed updates after a restart.
	fresh, err = l.SaveUpdates(ctx, append(batch, &kairos.RawUpdate{UpdateID: 12, ChatID: 1, Payload: []byte(`{}`), ReceivedAt: now}))
	if err != nil || len(fresh) != 1 || fresh[0].UpdateID != 12 {
		t.Fatalf("SaveUpdates(again) = %v, %v", fresh, err)
	}
	if max, _ := l.MaxUpdateID(ctx); max != 12 {
		t.Fatalf("MaxUpdateID = %d", max)
	}
	if n, err := l.BumpAttempts(ctx, 10); err != nil || n != 1 {
		t.Fatalf("BumpAttempts = %d, %v", n, err)
	}
	if err := l.MarkUpdateDone(ctx, 10); err != nil {
		t.Fatal(err)
	}
	pending, _ := l.PendingUpdates(ctx, 0)
	if len(pending) != 2 || pending[0].UpdateID != 11 || string(pending[0].Payload) != `{"update_id":11}` {
		t.Fatalf("PendingUpdates = %+v", pending)
	}
}

func TestOutboxSendsOnce(t *testing.T) {
	ctx := context.Background()
	l := store.NewUpdateLog(storetest.MustOpenDB(t))
	state, _, err := l.BeginSend(ctx, "u1:0", 5)
	if err != nil || state != kairos.OutboxNew {
		t.Fatalf("first BeginSend = %q, %v", state, err)
	}
	// A crash here: the intent exists, the send may have happened.
	state, _, _ = l.BeginSend(ctx, "u1:0", 5)
	if state != kairos.OutboxSending {
		t.Fatalf("BeginSend after crash = %q, want sending", state)
	}
	if err := l.MarkSent(ctx, "u1:0", 77); err != nil {
		t.Fatal(err)
	}
	state, id, _ := l.BeginSend(ctx, "u1:0", 5)
	if state != kairos.OutboxSent || id != 77 {
		t.Fatalf("BeginSend after send = %q %d", state, id)
	}
}

func TestAccessAndSettings(t *testing.T) {
	ctx := context.Background()
	l := store.NewUpdateLog(storetest.MustOpenDB(t))
	if ok, _ := l.HasAccess(ctx, 42); ok {
		t.Fatal("stranger has access")
	}
	if err := l.GrantAccess(ctx, 42, 1); err != nil {
		t.Fatal(err)
	}
	if err := l.GrantAccess(ctx, 42, 1); err != nil {
		t.Fatal("granting twice:", err)
	}
	if ok, _ := l.HasAccess(ctx, 42); !ok {
		t.Fatal("granted user has no access")
	}
	ids, _ := l.ListAccess(ctx)
	if len(ids) != 1 || ids[0] != 42 {
		t.Fatalf("ListAccess = %v", ids)
	}
	if err := l.RevokeAccess(ctx, 42); err != nil {
		t.Fatal(err)
	}
	if ok, _ := l.HasAccess(ctx, 42); ok {
		t.Fatal("revoked user has access")
	}
	v, _ := l.SetSettingIfAbsent(ctx, "k", "first")
	v2, _ := l.SetSettingIfAbsent(ctx, "k", "second")
	if v != "first" || v2 != "first" {
		t.Fatalf("settings = %q %q", v, v2)
	}
}
