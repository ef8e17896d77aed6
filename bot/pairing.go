package bot

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
)

// Pairing: a stranger is told their id and a pairing code derived from it
// (a MAC under the bot's key), and an operator's /pair checks the code.
// Nothing about the stranger is stored.

// refuse answers a stranger once with their id and a pairing code; the
// message never reaches the agent or the database.
func (b *Bot) refuse(ctx context.Context, in *kairos.Inbound, out *replier) error {
	if in.ChatKind == kairos.ChatGroup {
		return nil // never pair from a group
	}
	text := fmt.Sprintf("Sorry, I only talk to people my operator has approved. Your Telegram id is `%d`.", in.UserID)
	if b.cfg.Policy().Access.Pairing {
		text += fmt.Sprintf(" To ask for access, send your operator this pairing code: `%s`", b.PairingCode(in.UserID))
	}
	return out.Final(ctx, text)
}

// PairingCode derives a user's pairing code: the user id and a MAC, so the
// operator's /pair can check and decode it without storing anything about
// the stranger.
func (b *Bot) PairingCode(userID int64) string {
	id := strconv.FormatInt(userID, 10)
	mac := hmac.New(sha256.New, b.pkey)
	mac.Write([]byte(id))
	tag := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(mac.Sum(nil)[:5])
	return id + "-" + tag
}

// ParsePairingCode checks a pairing code and returns its user id.
func (b *Bot) ParsePairingCode(code string) (int64, error) {
	id, _, ok := strings.Cut(strings.TrimSpace(code), "-")
	uid, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || !hmac.Equal([]byte(b.PairingCode(uid)), []byte(strings.ToUpper(strings.TrimSpace(code)))) {
		return 0, kairos.Errorf(kairos.EINVALID, "that pairing code is not valid")
	}
	return uid, nil
}
