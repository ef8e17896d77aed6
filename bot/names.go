package bot

import (
	"context"

	"github.com/go-telegram/bot/models"

	"github.com/kairos-agent/kairos"
)

// noteName keeps what Telegram calls the sender (their first name and
// @username) when it changed since this process last stored it, so a
// chat's messages cost no write each. A failure is logged: the message
// is still answered.
func (b *Bot) noteName(ctx context.Context, in *kairos.Inbound, from *models.User) {
	if b.cfg.Names == nil || from == nil {
		return
	}
	n := kairos.UserName{FirstName: kairos.Clip(from.FirstName, 64), Username: kairos.Clip(from.Username, 64)}
	if last, ok := b.names.Load(from.ID); ok && last.(kairos.UserName) == n {
		return
	}
	if err := b.cfg.Names.NoteUserName(ctx, in.UserKey(), n, in.Date); err != nil {
		b.log.Warn("store user name", "err", err)
		return
	}
	b.names.Store(from.ID, n)
}
