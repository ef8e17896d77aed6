package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// A turn's bookkeeping under DeferWrites: nothing is visible before the
// answer's outbox intent commits, then all of it at once; the sent mark
// and the agent's clock mark commit with the update's completion.
func TestDeferredWritesCommitWithTheIntent(t *testing.T) {
	bg := context.Background()
	db := storetest.MustOpenDB(t)
	log, sessions, clock := store.NewUpdateLog(db), store.NewSessionStore(db), store.NewClockStore(db)
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	if _, err := log.SaveUpdates(bg, []*kairos.RawUpdate{{UpdateID: 20, ChatID: 7, Payload: []byte(`{}`), ReceivedAt: at}}); err != nil {
		t.Fatal(err)
	}
	sess, err := sessions.OpenSession(bg, "telegram:7", "telegram:7", at)
	if err != nil {
		t.Fatal(err)
	}
	turn := func(ctx context.Context) []*kairos.Message {
		t.Helper()
		if err := clock.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: "telegram:7", UserKey: "telegram:7", At: at}); err != nil {
			t.Fatal(err)
		}
		if err := sessions.RecordUsage(ctx, &kairos.UsageRecord{SessionID: sess.ID, UserKey: "telegram:7", Model: "m", PromptTokens: 10, CompletionTokens: 5, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		msgs := []*kairos.Message{
			{SessionID: sess.ID, ThreadKey: "telegram:7", UserKey: "telegram:7", Role: kairos.RoleUser, Content: "hi", CreatedAt: at},
			{SessionID: sess.ID, ThreadKey: "telegram:7", Role: kairos.RoleAssistant, Content: "hello", CreatedAt: at},
		}
		if err := sessions.AppendMessages(ctx, msgs...); err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	visible := func() (msgs int, prompt int64, lastUser time.Time) {
		t.Helper()
		ms, err := sessions.Messages(bg, sess.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := sessions.UsageTotals(bg, "", sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		st, err := clock.LoadClockState(bg, "telegram:7", "telegram:7")
		if err != nil {
			t.Fatal(err)
		}
		return len(ms), p, st.Thread.LastUserMessage
	}

	// A first attempt that dies before its answer's intent: nothing of
	// it was written.
	turn(log.DeferWrites(bg))
	if n, p, last := visible(); n != 0 || p != 0 || !last.IsZero() {
		t.Fatalf("abandoned turn left %d messages, %d tokens, clock mark %v", n, p, last)
	}

	ctx := log.DeferWrites(bg)
	msgs := turn(ctx)
	if n, p, last := visible(); n != 0 || p != 0 || !last.IsZero() {
		t.Fatalf("deferred writes visible before the intent: %d messages, %d tokens, clock mark %v", n, p, last)
	}
	if state, _, err := log.BeginSend(ctx, "u20:0", 7); err != nil || state != kairos.OutboxNew {
		t.Fatalf("BeginSend = %q, %v", state, err)
	}
	if n, p, last := visible(); n != 2 || p != 10 || !last.Equal(at) {
		t.Fatalf("after the intent: %d messages, %d tokens, clock mark %v", n, p, last)
	}
	if msgs[0].ID == 0 || msgs[1].ID <= msgs[0].ID {
		t.Fatalf("message ids %d, %d", msgs[0].ID, msgs[1].ID)
	}

	// Sent mark and agent clock mark wait for the update's completion.
	if err := log.MarkSent(ctx, "u20:0", 99); err != nil {
		t.Fatal(err)
	}
	if err := clock.RecordAgentMessage(ctx, kairos.ClockMark{ThreadKey: "telegram:7", UserKey: "telegram:7", At: at.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if state, _, _ := log.OutboxState(bg, "u20:0"); state != kairos.OutboxSending {
		t.Fatalf("sent mark visible before the update is done: %q", state)
	}
	if err := log.MarkUpdateDone(ctx, 20); err != nil {
		t.Fatal(err)
	}
	if state, id, _ := log.OutboxState(bg, "u20:0"); state != kairos.OutboxSent || id != 99 {
		t.Fatalf("after done: outbox %q %d", state, id)
	}
	st, _ := clock.LoadClockState(bg, "telegram:7", "telegram:7")
	if !st.Thread.LastAgentMessage.Equal(at.Add(time.Second)) {
		t.Fatalf("agent clock mark = %v", st.Thread.LastAgentMessage)
	}
	if pending, _ := log.PendingUpdates(bg, 0); len(pending) != 0 {
		t.Fatalf("pending = %v", pending)
	}

	// Once the update is done, writes under its context run at once.
	if err := sessions.AppendMessages(ctx, &kairos.Message{SessionID: sess.ID, ThreadKey: "telegram:7", Role: kairos.RoleAssistant, Content: "late", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := visible(); n != 3 {
		t.Fatalf("write after done: %d messages, want 3", n)
	}
}

// The turn and its intent are one transaction: when a deferred write
// fails, the intent is not recorded either (so nothing is sent), and the
// writes stay for the next commit.
func TestDeferredWritesAreAtomicWithTheIntent(t *testing.T) {
	bg := context.Background()
	db := storetest.MustOpenDB(t)
	log, sessions := store.NewUpdateLog(db), store.NewSessionStore(db)
	ctx := log.DeferWrites(bg)
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	if err := sessions.RecordUsage(ctx, &kairos.UsageRecord{SessionID: "s", UserKey: "u", Model: "m", PromptTokens: 3, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	// No such session: the foreign key refuses the message at commit.
	if err := sessions.AppendMessages(ctx, &kairos.Message{SessionID: "no-such-session", ThreadKey: "t", Role: kairos.RoleUser, Content: "x", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := log.BeginSend(ctx, "u21:0", 7); err == nil {
		t.Fatal("BeginSend succeeded although a deferred write failed")
	}
	if state, _, _ := log.OutboxState(bg, "u21:0"); state != kairos.OutboxNew {
		t.Fatalf("intent recorded beside a failed turn: %q", state)
	}
	if p, _, _ := sessions.UsageTotals(bg, "u", ""); p != 0 {
		t.Fatalf("usage committed without the rest of the turn: %d", p)
	}
	if err := log.FlushWrites(ctx); err == nil {
		t.Fatal("FlushWrites dropped the failing write instead of keeping it")
	}
	// Without DeferWrites, FlushWrites has nothing to do.
	if err := log.FlushWrites(bg); err != nil {
		t.Fatal(err)
	}
}

// FlushWrites commits what was deferred so far (a placeholder's final
// edit delivers the answer without an intent).
func TestFlushWrites(t *testing.T) {
	bg := context.Background()
	db := storetest.MustOpenDB(t)
	log, sessions := store.NewUpdateLog(db), store.NewSessionStore(db)
	ctx := log.DeferWrites(bg)
	if err := sessions.RecordUsage(ctx, &kairos.UsageRecord{SessionID: "s", UserKey: "u", Model: "m", PromptTokens: 4}); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := sessions.UsageTotals(bg, "u", ""); p != 0 {
		t.Fatalf("usage visible before the flush: %d", p)
	}
	if err := log.FlushWrites(ctx); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := sessions.UsageTotals(bg, "u", ""); p != 4 {
		t.Fatalf("usage after the flush = %d, want 4", p)
	}
}
