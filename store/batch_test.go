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
	r := newTurnRig(t)
	log, at := r.log, r.at

	// A first attempt that dies before its answer's intent: nothing of
	// it was written.
	r.turn(log.DeferWrites(bg))
	if n, p, last := r.visible(); n != 0 || p != 0 || !last.IsZero() {
		t.Fatalf("abandoned turn left %d messages, %d tokens, clock mark %v", n, p, last)
	}

	ctx := log.DeferWrites(bg)
	msgs := r.turn(ctx)
	if n, p, last := r.visible(); n != 0 || p != 0 || !last.IsZero() {
		t.Fatalf("deferred writes visible before the intent: %d messages, %d tokens, clock mark %v", n, p, last)
	}
	if state, _, err := log.BeginSend(ctx, "u20:0", 7); err != nil || state != kairos.OutboxNew {
		t.Fatalf("BeginSend = %q, %v", state, err)
	}
	if n, p, last := r.visible(); n != 2 || p != 10 || !last.Equal(at) {
		t.Fatalf("after the intent: %d messages, %d tokens, clock mark %v", n, p, last)
	}
	if msgs[0].ID == 0 || msgs[1].ID <= msgs[0].ID {
		t.Fatalf("message ids %d, %d", msgs[0].ID, msgs[1].ID)
	}
	r.checkMarksWaitForDone(ctx)

	// Once the update is done, writes under its context run at once.
	if err := r.sessions.AppendMessages(ctx, &kairos.Message{SessionID: r.sess.ID, ThreadKey: "telegram:7", Role: kairos.RoleAssistant, Content: "late", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := r.visible(); n != 3 {
		t.Fatalf("write after done: %d messages, want 3", n)
	}
}

// turnRig is one stored update (20, chat 7) and its session, for a turn's
// bookkeeping under DeferWrites.
type turnRig struct {
	t        *testing.T
	log      *store.UpdateLog
	sessions *store.SessionStore
	clock    *store.ClockStore
	sess     *kairos.Session
	at       time.Time
}

func newTurnRig(t *testing.T) *turnRig {
	bg := context.Background()
	db := storetest.MustOpenDB(t)
	r := &turnRig{t: t, log: store.NewUpdateLog(db), sessions: store.NewSessionStore(db), clock: store.NewClockStore(db),
		at: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	if _, err := r.log.SaveUpdates(bg, []*kairos.RawUpdate{{UpdateID: 20, ChatID: 7, Payload: []byte(`{}`), ReceivedAt: r.at}}); err != nil {
		t.Fatal(err)
	}
	sess, err := r.sessions.OpenSession(bg, "telegram:7", "telegram:7", r.at)
	if err != nil {
		t.Fatal(err)
	}
	r.sess = sess
	return r
}

// turn writes a turn's bookkeeping under ctx: the user's clock mark, the
// usage and the two messages.
func (r *turnRig) turn(ctx context.Context) []*kairos.Message {
	t := r.t
	t.Helper()
	if err := r.clock.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: "telegram:7", UserKey: "telegram:7", At: r.at}); err != nil {
		t.Fatal(err)
	}
	if err := r.sessions.RecordUsage(ctx, &kairos.UsageRecord{SessionID: r.sess.ID, UserKey: "telegram:7", Model: "m", PromptTokens: 10, CompletionTokens: 5, CreatedAt: r.at}); err != nil {
		t.Fatal(err)
	}
	msgs := []*kairos.Message{
		{SessionID: r.sess.ID, ThreadKey: "telegram:7", UserKey: "telegram:7", Role: kairos.RoleUser, Content: "hi", CreatedAt: r.at},
		{SessionID: r.sess.ID, ThreadKey: "telegram:7", Role: kairos.RoleAssistant, Content: "hello", CreatedAt: r.at},
	}
	if err := r.sessions.AppendMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// visible is what another reader sees: the session's messages, its prompt
// tokens and the thread's last user message.
func (r *turnRig) visible() (msgs int, prompt int64, lastUser time.Time) {
	t, bg := r.t, context.Background()
	t.Helper()
	ms, err := r.sessions.Messages(bg, r.sess.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := r.sessions.UsageTotals(bg, "", r.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.clock.LoadClockState(bg, "telegram:7", "telegram:7")
	if err != nil {
		t.Fatal(err)
	}
	return len(ms), p, st.Thread.LastUserMessage
}

// checkMarksWaitForDone checks that the sent mark and the agent's clock
// mark written under ctx wait for the update's completion.
func (r *turnRig) checkMarksWaitForDone(ctx context.Context) {
	t, log, bg := r.t, r.log, context.Background()
	t.Helper()
	if err := log.MarkSent(ctx, "u20:0", 99); err != nil {
		t.Fatal(err)
	}
	if err := r.clock.RecordAgentMessage(ctx, kairos.ClockMark{ThreadKey: "telegram:7", UserKey: "telegram:7", At: r.at.Add(time.Second)}); err != nil {
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
	st, _ := r.clock.LoadClockState(bg, "telegram:7", "telegram:7")
	if !st.Thread.LastAgentMessage.Equal(r.at.Add(time.Second)) {
		t.Fatalf("agent clock mark = %v", st.Thread.LastAgentMessage)
	}
	if pending, _ := log.PendingUpdates(bg, 0); len(pending) != 0 {
		t.Fatalf("pending = %v", pending)
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
