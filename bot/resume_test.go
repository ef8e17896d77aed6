package bot_test

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// TestResumedUpdateSendsNoPartTwice: an update whose earlier attempt
// recorded parts of its answer in the outbox before the process died is
// not fresh (its attempt counter says so): the resumed turn finishes in
// the placeholder that went out and does not send a recorded part again,
// whether the part was sent or its outcome is unknown.
func TestResumedUpdateSendsNoPartTwice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record func(ctx context.Context, ul *store.UpdateLog) error
		sends  int
		edits  bool // finishes in the recorded placeholder
	}{
		{"placeholder sent", func(ctx context.Context, ul *store.UpdateLog) error {
			if _, _, err := ul.BeginSend(ctx, "u500:p", 1); err != nil {
				return err
			}
			return ul.MarkSent(ctx, "u500:p", 4242)
		}, 0, true},
		{"answer sent", func(ctx context.Context, ul *store.UpdateLog) error {
			if _, _, err := ul.BeginSend(ctx, "u500:0", 1); err != nil {
				return err
			}
			return ul.MarkSent(ctx, "u500:0", 4243)
		}, 0, false},
		{"answer outcome unknown", func(ctx context.Context, ul *store.UpdateLog) error {
			_, _, err := ul.BeginSend(ctx, "u500:0", 1)
			return err
		}, 0, false},
		{"nothing recorded", func(context.Context, *store.UpdateLog) error { return nil }, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ul := store.NewUpdateLog(storetest.MustOpenDB(t))
			tg := testkit.NewFakeTelegram(t, "")
			raw := []byte(`{"update_id":500,"message":{"message_id":1,"date":1800000000,"chat":{"id":1,"type":"private"},"from":{"id":1,"is_bot":false,"first_name":"A"},"text":"left behind"}}`)
			if _, err := ul.SaveUpdates(ctx, []*kairos.RawUpdate{{UpdateID: 500, ChatID: 1, Payload: raw, ReceivedAt: time.Now()}}); err != nil {
				t.Fatal(err)
			}
			if _, err := ul.BumpAttempts(ctx, 500); err != nil { // the attempt that died
				t.Fatal(err)
			}
			if err := tc.record(ctx, ul); err != nil {
				t.Fatal(err)
			}
			pol := kairos.DefaultPolicy()
			pol.Access.AllowedUsers = []int64{1}
			b, err := bot.New(bot.Config{Token: tg.Token(), APIURL: tg.URL(), Handler: echo(), Policy: func() *kairos.Policy { return pol },
				Access: ul, Updates: ul, Settings: ul, PollTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); b.Run(rctx, time.Second) }()
			defer func() { cancel(); <-done }()
			if err := tg.WaitUntil(testkit.Deadline(t), func() bool {
				pending, err := ul.PendingUpdates(ctx, 10)
				return err == nil && len(pending) == 0
			}); err != nil {
				t.Fatal("the update was not finished")
			}
			if n := len(tg.Calls("sendMessage")); n != tc.sends {
				t.Errorf("%d sendMessage, want %d", n, tc.sends)
			}
			// The fake knows no message 4242, so the edit may be retried:
			// what counts is that it was tried and nothing was sent.
			if n := len(tg.Calls("editMessageText")); (n > 0) != tc.edits {
				t.Errorf("%d editMessageText, want edits %v", n, tc.edits)
			}
		})
	}
}
