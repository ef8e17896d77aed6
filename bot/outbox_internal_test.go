package bot

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// storeBot is a bot on cfg whose update log and approvals are a fresh
// store's, with a Telegram address nothing answers on.
func storeBot(t *testing.T, cfg Config) (*Bot, *store.UpdateLog) {
	t.Helper()
	updates := store.NewUpdateLog(storetest.MustOpenDB(t))
	cfg.Token, cfg.APIURL = "1:x", "http://127.0.0.1:1"
	cfg.Updates, cfg.Approvals = updates, updates
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b, updates
}

// A scheduled message records its outbox intent only once the chat's
// rate-limit slot is held, like every other once-only send: one whose
// send ends while it waits for the slot (shutdown, a lost firing lease)
// is not marked attempted, so the next try sends it instead of skipping
// it as "outcome unknown".
func TestScheduledIntentAfterTheSlot(t *testing.T) {
	b, updates := storeBot(t, Config{})
	const chat = 42
	b.lim.backoff(chat, time.Hour) // the chat's next slot is an hour away
	b.lim.mu.Lock()
	busy := b.lim.chatNext[chat]
	b.lim.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.SendScheduled(ctx, "f1", chat, 0, "time to stretch", nil)
		done <- err
	}()
	// The send is waiting once it has reserved the slot after the busy one.
	testkit.WaitFor(t, "the send to wait for the chat's slot", func() bool {
		b.lim.mu.Lock()
		defer b.lim.mu.Unlock()
		return b.lim.chatNext[chat].After(busy)
	})
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a send cancelled while waiting succeeded")
	}
	if state, _, err := updates.OutboxState(context.Background(), "f1:0"); err != nil || state != kairos.OutboxNew {
		t.Fatalf("outbox state %q (%v) after a send that never left, want %q", state, err, kairos.OutboxNew)
	}
}
