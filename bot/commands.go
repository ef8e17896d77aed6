package bot

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-telegram/bot/models"
	"github.com/kairos-agent/kairos"
)

// Command routing: whether a group message is for the bot, how "/cmd@bot
// args" splits, and which command answers. Built-in commands are /start,
// /help and /pair; the rest come from Config.Commands.

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

// parseCommand splits "/cmd@bot args".
func (b *Bot) parseCommand(text string) (cmd, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	first, rest, _ := strings.Cut(text, " ")
	first = strings.TrimPrefix(first, "/")
	if at := strings.IndexByte(first, '@'); at >= 0 {
		first = first[:at]
	}
	return strings.ToLower(first), strings.TrimSpace(rest), first != ""
}

func (b *Bot) runCommand(ctx context.Context, in *kairos.Inbound, out *replier, cmd, args string) error {
	pol := b.cfg.Policy()
	switch cmd {
	case "start", "help":
		return out.Final(ctx, b.helpText(pol.IsOperator(in.UserID)))
	case "pair":
		if !pol.IsOperator(in.UserID) {
			return out.Final(ctx, "Only an operator can do that.")
		}
		keys := []string{"pair-user:" + strconv.FormatInt(in.UserID, 10), "pair-chat:" + strconv.FormatInt(in.ChatID, 10)}
		limits := []int{FailedPairsPerUser, FailedPairsPerChat}
		if b.attemptsBlocked(ctx, keys, limits) {
			return out.Final(ctx, "Too many wrong pairing codes; try again in an hour.")
		}
		uid, err := b.ParsePairingCode(args)
		if err != nil {
			b.allowAttempt(ctx, keys, limits) // counts the failure
			return out.Final(ctx, kairos.ErrorMessage(err)+" Usage: /pair <code>")
		}
		if err := b.cfg.Access.GrantAccess(ctx, uid, in.UserID); err != nil {
			return err
		}
		return out.Final(ctx, fmt.Sprintf("User %d can now talk to me.", uid))
	}
	c, ok := b.cfg.Commands[cmd]
	if !ok {
		return out.Final(ctx, fmt.Sprintf("I don't know the command /%s. Send /help for the list.", cmd))
	}
	if c.OperatorOnly && !pol.IsOperator(in.UserID) {
		return out.Final(ctx, "Only an operator can do that.")
	}
	text, err := c.Run(withCommandReplier(ctx, out), in, args)
	if err != nil {
		if kairos.ErrorCode(err) == kairos.EINTERNAL {
			b.log.Error("command failed", "command", cmd, "err", err)
		}
		text = kairos.ErrorMessage(err)
	} else if text == "" {
		return nil // the command sent its own answer (e.g. with a keyboard)
	}
	return out.Final(ctx, text)
}

func (b *Bot) helpText(operator bool) string {
	var sb strings.Builder
	sb.WriteString("I'm Kairos, your personal assistant. Just write to me. I can search the web, run code in a sandbox and remember things for you.")
	if b.cfg.Policy().Media.Enabled {
		sb.WriteString(" You can also send voice notes, photos and documents.")
	}
	sb.WriteString("\n\nCommands:\n/help: this list\n")
	for _, name := range slices.Sorted(maps.Keys(b.cfg.Commands)) {
		c := b.cfg.Commands[name]
		if c.OperatorOnly && !operator {
			continue
		}
		sb.WriteString("/" + name + ": " + c.Description + "\n")
	}
	if operator {
		sb.WriteString("/pair <code>: let a user talk to me\n")
	}
	sb.WriteString("\nSay `clock it: …` to have me remember what you're about to do.")
	return sb.String()
}
