package bot_test

import (
	"context"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/testkit"
)

func actionsTo(f *fixture, chat string) int {
	n := 0
	for _, c := range f.tg.Calls("sendChatAction") {
		if c.Params["chat_id"] == chat {
			n++
		}
	}
	return n
}

// TestQuickAnswerShowsNoChatAction: an answer that comes before
// ActionDelay goes out without a "typing…" first (one Bot API call per
// turn instead of two), whatever the number of chats and messages.
func TestQuickAnswerShowsNoChatAction(t *testing.T) {
	quick := handler{func(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
		time.Sleep(100 * time.Millisecond) // the turn's work: quick, but not instant
		return out.Final(ctx, "echo: "+in.Text)
	}}
	f := start(t, quick, func(c *bot.Config) { c.ActionDelay = time.Hour })
	for chat := int64(1); chat <= 3; chat++ {
		for i := range 3 {
			f.tg.PushText(chat, chat, "hi "+string(rune('a'+i)), time.Now())
		}
	}
	for chat := int64(1); chat <= 3; chat++ {
		f.tg.MustWaitSentTo(chat, 3)
	}
	if n := len(f.tg.Calls("sendChatAction")); n != 0 {
		t.Fatalf("%d chat actions for 9 quick answers", n)
	}
}

// TestSlowAnswerShowsTyping: a turn still working after ActionDelay shows
// "typing…" before its answer, and nothing after it.
func TestSlowAnswerShowsTyping(t *testing.T) {
	var f *fixture
	deadline, _ := testkit.Deadline(t).Deadline()
	slow := handler{func(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
		wctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		if err := f.tg.WaitUntil(wctx, func() bool { return actionsTo(f, "1") > 0 }); err != nil {
			return err
		}
		return out.Final(ctx, "done")
	}}
	f = start(t, slow, func(c *bot.Config) { c.ActionDelay = 20 * time.Millisecond })
	f.tg.PushText(1, 1, "think hard", time.Now())
	sent := f.tg.MustWaitSentTo(1, 1)
	if sent[0].LastText() != "done" {
		t.Fatalf("sent %+v", sent[0])
	}
	calls := f.tg.Calls("sendChatAction")
	if len(calls) == 0 || calls[0].Params["action"] != kairos.ActionTyping {
		t.Fatalf("chat actions %+v", calls)
	}
	if last := calls[len(calls)-1]; last.Time.After(sent[0].Time) {
		t.Errorf("a chat action after the answer: %+v", last)
	}
}
