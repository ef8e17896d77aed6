package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/retry"
)

// A message that depends on a pending approval of its chat waits for the
// decision (park.go): a reply to the request's keyboard or to the message
// whose turn asked, or a bare yes or no (someone answering the question
// in words). It gets one line at once, and runs after the paused turn
// has finished (resumed, or told it expired). Everything else, commands
// first of all, is answered as usual.

// WaitingNote is the line a dependent message gets at once.
const WaitingNote = "⏳ Waiting for your answer above: this message runs once it is decided."

// heldPoll is how often a held message looks at its request.
const heldPoll = 250 * time.Millisecond

// answerWords are messages that only answer the pending question.
var answerWords = map[string]bool{"yes": true, "y": true, "yeah": true, "yep": true, "ok": true, "okay": true, "sure": true,
	"go ahead": true, "do it": true, "approve": true, "approved": true, "no": true, "n": true, "nope": true, "deny": true,
	"don't": true, "dont": true}

// holds are this process's held messages: update id → struct{}.
type holds struct{ m sync.Map }

// mayDepend reports whether m could depend on a pending request at all:
// a reply to some message, or a bare answer word. Any other message
// (most of them) is answered without looking at the chat's requests.
func mayDepend(m *models.Message) bool {
	if m == nil || m.From == nil || strings.HasPrefix(strings.TrimSpace(m.Text), "/") {
		return false // commands always answer
	}
	return (m.ReplyToMessage != nil && m.ReplyToMessage.ID != 0) || answerWords[answerWord(m.Text)]
}

func answerWord(text string) string {
	return strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!"))
}

// dependsOn returns the pending request m depends on, or nil.
func dependsOn(m *models.Message, rows []*kairos.PendingApproval) *kairos.PendingApproval {
	if !mayDepend(m) {
		return nil
	}
	for _, row := range rows {
		if r := m.ReplyToMessage; r != nil && (int64(r.ID) == row.MessageID || int64(r.ID) == row.SourceMessageID) && r.ID != 0 {
			return row
		}
	}
	word := answerWord(m.Text)
	for i := len(rows) - 1; i >= 0; i-- {
		if answerWords[word] && rows[i].UserID == m.From.ID {
			return rows[i]
		}
	}
	return nil
}

// holdIfDepends holds u when it depends on a pending request of its chat
// and reports whether it did (or holds it already); the update stays
// pending in the store meanwhile, so a restart holds it again.
func (b *Bot) holdIfDepends(ctx context.Context, u *kairos.RawUpdate, m *models.Message) bool {
	if !b.cfg.ParkApprovals || b.cfg.Approvals == nil {
		return false
	}
	if _, held := b.held.m.Load(u.UpdateID); held {
		return true
	}
	if !mayDepend(m) {
		return false
	}
	rows, err := b.cfg.Approvals.PendingApprovalsInChat(ctx, m.Chat.ID)
	if err != nil || len(rows) == 0 {
		return false
	}
	row := dependsOn(m, rows)
	if row == nil {
		return false
	}
	if _, loaded := b.held.m.LoadOrStore(u.UpdateID, struct{}{}); loaded {
		return true
	}
	in := b.inbound(u, m)
	if _, err := b.outboxSend(ctx, in, fmt.Sprintf("u%d:w", u.UpdateID), func(ctx context.Context) (int64, error) {
		return b.sendReserved(ctx, in, escape(WaitingNote), nil)
	}); err != nil {
		b.log.Warn("tell a held message it waits", "err", err)
	}
	b.log.Info("message waits for a pending approval", "update_id", u.UpdateID, "approval", row.ID)
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		b.releaseWhenDone(b.work, u, row.ID)
	}()
	return true
}

// releaseWhenDone waits until the request is decided and its turn has
// finished (or it expired and the chat was told), then queues u again in
// its chat. At shutdown u stays pending and held again at the next start.
func (b *Bot) releaseWhenDone(ctx context.Context, u *kairos.RawUpdate, id string) {
	defer b.held.m.Delete(u.UpdateID)
	for ctx.Err() == nil {
		row, err := b.cfg.Approvals.FindApproval(ctx, id)
		if err != nil && kairos.ErrorCode(err) != kairos.ENOTFOUND {
			b.log.Warn("held message", "err", err)
		} else if err != nil || (row.Status != kairos.ApprovalPending && row.ClaimedBy != "") {
			if done, ok := b.resuming.Load(id); ok {
				select { // the turn resumed here: after it, not beside it
				case <-done.(chan struct{}):
				case <-ctx.Done():
					return
				}
			}
			b.held.m.Delete(u.UpdateID)
			b.enqueue(u.ChatID, queued{u: u})
			return
		}
		_ = retry.Sleep(ctx, heldPoll)
	}
}
