package bot

import (
	"context"
	"strings"

	"github.com/go-telegram/bot/models"
	"github.com/kairos-agent/kairos/desk"
)

// SkillButtonPrefix starts the callback data of the /skills buttons
// (Disable, Enable, Rollback, Share); Config.SkillButton handles them.
// The keyboards go out through SendWithButtons, as our own JSON (see
// inlineKeyboard: go-telegram/bot's button type always serialises
// copy_text, which the real API rejects).
const SkillButtonPrefix = "sk:"

// skillCallback handles a /skills button: the handler's answer is the
// callback's toast and, when it says so, the keyboard is removed.
func (b *Bot) skillCallback(ctx context.Context, cq *models.CallbackQuery, answer func(string)) {
	text, closeKB, err := b.cfg.SkillButton(ctx, cq.From.ID, strings.TrimPrefix(cq.Data, SkillButtonPrefix))
	if err != nil {
		if desk.Fault(err) {
			b.log.Error("skill button", "err", err)
		}
		answer(desk.Reply(err))
		return
	}
	answer(text)
	m := cq.Message.Message
	if closeKB && m != nil {
		if err := b.api.call(ctx, "editMessageReplyMarkup", map[string]any{"chat_id": m.Chat.ID, "message_id": m.ID, "reply_markup": noButtons}, nil); err != nil {
			b.log.Debug("remove skill keyboard", "err", err)
		}
	}
}
