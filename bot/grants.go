package bot

import (
	"context"
	"strings"

	"github.com/go-telegram/bot/models"
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
)

// GrantButtonPrefix starts the callback data of the /grants buttons
// (Revoke, tasks on/off); Config.GrantButton handles them. The keyboards
// go out through SendWithButtons, as our own JSON.
const GrantButtonPrefix = desk.GrantButtonPrefix

// grantCallback handles a /grants button: the handler's answer is the
// toast and, when it says so, the pressed message loses its keyboard.
func (b *Bot) grantCallback(ctx context.Context, cq *models.CallbackQuery, answer func(string)) {
	text, closeKB, err := b.cfg.GrantButton(ctx, cq.From.ID, strings.TrimPrefix(cq.Data, GrantButtonPrefix))
	if err != nil {
		if kairos.ErrorCode(err) == kairos.EINTERNAL {
			b.log.Error("grant button", "err", err)
		}
		answer(kairos.ErrorMessage(err))
		return
	}
	answer(text)
	if m := cq.Message.Message; closeKB && m != nil {
		if err := b.api.call(ctx, "editMessageReplyMarkup", map[string]any{"chat_id": m.Chat.ID, "message_id": m.ID, "reply_markup": noButtons}, nil); err != nil {
			b.log.Debug("remove grant keyboard", "err", err)
		}
	}
}
