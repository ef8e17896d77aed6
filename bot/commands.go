package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-telegram/bot/models"
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
)

// Whether a group message is for the bot. Which command answers, who may
// run it and where is the desk's (package desk); the bot adds /pair.

// addressed: a group message is for the bot when it mentions the bot,
// replies to it, or is a command (bare or /cmd@thisbot).
func (b *Bot) addressed(m *models.Message) bool {
	if m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == b.me.ID {
		return true
	}
	text, entities := m.Text, m.Entities
	if text == "" { // a file's caption addresses the bot the same way
		text, entities = m.Caption, m.CaptionEntities
	}
	if b.me.Username != "" && strings.Contains(strings.ToLower(text), "@"+strings.ToLower(b.me.Username)) {
		return true
	}
	for _, e := range entities {
		if e.Type == models.MessageEntityTypeTextMention && e.User != nil && e.User.ID == b.me.ID {
			return true
		}
	}
	if strings.HasPrefix(m.Text, "/") {
		first := strings.Fields(m.Text)[0]
		at := strings.IndexByte(first, '@')
		return at < 0 || strings.EqualFold(first[at+1:], b.me.Username)
	}
	return false
}

// PairCommand is /pair CODE, for the desk's table: an operator admits the
// stranger who was given CODE. Wrong codes are rate limited per user and
// per chat.
func (b *Bot) PairCommand() desk.Command {
	return desk.Command{Name: "pair", Description: "Let a user talk to me: /pair <code>", Operators: true,
		Run: func(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
			keys := []string{"pair-user:" + strconv.FormatInt(in.UserID, 10), "pair-chat:" + strconv.FormatInt(in.ChatID, 10)}
			limits := []int{FailedPairsPerUser, FailedPairsPerChat}
			if b.attemptsBlocked(ctx, keys, limits) {
				return "Too many wrong pairing codes; try again in an hour.", nil
			}
			uid, err := b.ParsePairingCode(args)
			if err != nil {
				b.allowAttempt(ctx, keys, limits) // counts the failure
				return kairos.ErrorMessage(err) + " Usage: /pair <code>", nil
			}
			if err := b.cfg.Access.GrantAccess(ctx, uid, in.UserID); err != nil {
				return "", err
			}
			b.log.Info("access granted by pairing", "user", uid, "by", in.UserID)
			return fmt.Sprintf("User %d can now talk to me.", uid), nil
		}}
}
