package bot

import (
	"context"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
)

// Button is one inline keyboard button: a label and its callback data.
type Button = kairos.Button

// ScheduleButtonPrefix starts the callback data of schedule buttons
// (Done, Snooze, Skip next, Cancel); Config.ScheduleButton handles them.
const ScheduleButtonPrefix = desk.ButtonPrefix

func keyboard(rows [][]Button) any {
	if len(rows) == 0 {
		return nil
	}
	kb := inlineKeyboard{InlineKeyboard: make([][]inlineButton, 0, len(rows))}
	for _, r := range rows {
		row := make([]inlineButton, 0, len(r))
		for _, b := range r {
			row = append(row, inlineButton{Text: b.Text, CallbackData: b.Data})
		}
		kb.InlineKeyboard = append(kb.InlineKeyboard, row)
	}
	return kb
}

// SendScheduled sends a scheduled message (a reminder, a task's answer,
// a cell's notification) to a thread, once: the reply outbox records the
// intent under key before sending, so a retry after a crash or by
// another replica never sends it twice. The keyboard goes on the last
// part. It returns the message id (0 when an earlier attempt's outcome
// is unknown).
func (b *Bot) SendScheduled(ctx context.Context, key string, chatID, topicID int64, markdown string, rows [][]Button) (int64, error) {
	in := &kairos.Inbound{Channel: kairos.ChannelTelegram, ChatID: chatID, UserID: chatID, ChatKind: kairos.ChatDM, TopicID: topicID}
	if chatID < 0 {
		in.ChatKind = kairos.ChatGroup
	}
	parts := SplitMarkdown(markdown, MaxMessageUnits)
	var last int64
	for i, part := range parts {
		var markup any
		if i == len(parts)-1 {
			markup = keyboard(rows)
		}
		id, err := b.outboxSend(ctx, in, key+":"+strconv.Itoa(i), func(ctx context.Context) (int64, error) {
			return b.sendReserved(ctx, in, part, markup)
		})
		if err != nil {
			return 0, err
		}
		last = id
	}
	return last, nil
}

// SendWithButtons sends markdown with an inline keyboard to in's chat
// (a command's answer such as /reminders with a Cancel button each).
func (b *Bot) SendWithButtons(ctx context.Context, in *kairos.Inbound, markdown string, rows [][]Button) (int64, error) {
	parts := SplitMarkdown(markdown, MaxMessageUnits)
	var id int64
	for i, part := range parts {
		var markup any
		if i == len(parts)-1 {
			markup = keyboard(rows)
		}
		var err error
		if id, err = b.send(ctx, in, part, markup); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// scheduleCallback handles a schedule button: the handler's answer is
// shown as the callback's toast and, when it says so, the keyboard is
// removed from the message.
func (b *Bot) scheduleCallback(ctx context.Context, fromID, chatID, msgID int64, data string, answer func(string)) {
	text, closeKB, err := b.cfg.ScheduleButton(ctx, fromID, chatID, msgID, strings.TrimPrefix(data, ScheduleButtonPrefix))
	if err != nil {
		if desk.Fault(err) {
			b.log.Error("schedule button", "err", err)
		}
		answer(desk.Reply(err))
		return
	}
	answer(text)
	if closeKB && msgID != 0 {
		if err := b.api.call(ctx, "editMessageReplyMarkup", map[string]any{"chat_id": chatID, "message_id": msgID, "reply_markup": noButtons}, nil); err != nil {
			b.log.Debug("remove schedule keyboard", "err", err)
		}
	}
}

var _ desk.Door = (*Bot)(nil)

// InTurn runs fn in the chat's turn order (desk.Door: a scheduled task is
// a turn of its chat).
func (b *Bot) InTurn(ctx context.Context, addr *kairos.Inbound, fn func(ctx context.Context)) error {
	return b.InChat(ctx, addr.ChatID, fn)
}

// Sent reports whether the message recorded under key went out (desk.Door).
func (b *Bot) Sent(ctx context.Context, key string) (int64, bool) {
	if b.cfg.Updates == nil {
		return 0, false
	}
	st, id, err := b.cfg.Updates.OutboxState(ctx, key+":0")
	return id, err == nil && st != kairos.OutboxNew
}

// Send delivers a firing's message once under key (desk.Door).
func (b *Bot) Send(ctx context.Context, key string, addr *kairos.Inbound, out *kairos.Outgoing) (int64, error) {
	if addr.Channel != kairos.ChannelTelegram {
		return 0, kairos.Errorf(kairos.EINVALID, "a %s thread cannot get a Telegram message", addr.Channel)
	}
	return b.SendScheduled(ctx, key, addr.ChatID, addr.TopicID, out.Text, out.Buttons)
}
