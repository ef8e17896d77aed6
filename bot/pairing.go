package bot

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
)

// Pairing: a stranger is told their id and a pairing code derived from it
// (a MAC under the bot's key), and an operator's /pair checks the code.
// Nothing about the stranger is stored but keyed digests in the attempt counters.

// refuse answers a stranger with their id and a pairing code (a few
// times an hour at most, see AttemptWindow); the message never reaches
// the agent or the database.
func (b *Bot) refuse(ctx context.Context, in *kairos.Inbound, out *replier) error {
	if in.ChatKind == kairos.ChatGroup {
		return nil // never pair from a group
	}
	if !b.allowAttempt(ctx, []string{"refuse-user:" + strconv.FormatInt(in.UserID, 10), "refuse-chat:" + strconv.FormatInt(in.ChatID, 10)},
		[]int{RefusalsPerUser, RefusalsPerChat}) {
		b.log.Debug("stranger not answered (pairing attempts limited)")
		return nil
	}
	b.log.Info("stranger refused", "user_id", in.UserID, "chat_id", in.ChatID, "pairing", b.cfg.Policy().Access.Pairing)
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

// Pairing attempts are rate-limited, so that nobody can make the bot send
// messages (and spend its Telegram quota) by writing to it, nor try codes
// without end: a stranger hears the refusal at most RefusalsPerUser times
// per AttemptWindow (a chat at most RefusalsPerChat times); further
// messages get no answer. A failed /pair counts against the operator and
// the chat the same way (FailedPairsPerUser, FailedPairsPerChat). The
// counters live in the database when the update store keeps them
// (kairos.AttemptStore), so replicas share them, under a keyed digest of
// their name (no user id in the clear); in memory otherwise, or while the
// database fails.
const (
	AttemptWindow      = time.Hour
	RefusalsPerUser    = 3
	RefusalsPerChat    = 10
	FailedPairsPerUser = 10
	FailedPairsPerChat = 20
	// maxAttemptKeys bounds the counters' memory: past it (after dropping
	// expired windows) new keys are refused.
	maxAttemptKeys = 10000
)

// allowAttempt counts an attempt under every key and reports whether each
// is within its limit (limits[i] for keys[i]).
func (b *Bot) allowAttempt(ctx context.Context, keys []string, limits []int) bool {
	if st, ok := b.cfg.Updates.(kairos.AttemptStore); ok {
		counts, err := st.CountAttempts(ctx, b.attemptKeys(keys), AttemptWindow)
		if err == nil {
			for i, n := range counts {
				if n > limits[i] {
					return false
				}
			}
			return true
		}
		b.log.Warn("count attempts", "err", err)
	}
	return b.attempts.allow(b.cfg.Now(), keys, limits)
}

// attemptsBlocked reports whether any key has used up its limit, without
// counting an attempt.
func (b *Bot) attemptsBlocked(ctx context.Context, keys []string, limits []int) bool {
	if st, ok := b.cfg.Updates.(kairos.AttemptStore); ok {
		counts, err := st.PeekAttempts(ctx, b.attemptKeys(keys), AttemptWindow)
		if err == nil {
			for i, n := range counts {
				if n >= limits[i] {
					return true
				}
			}
			return false
		}
		b.log.Warn("read attempts", "err", err)
	}
	return b.attempts.blocked(b.cfg.Now(), keys, limits)
}

// attemptKeys are the stored names of counters: a MAC under the pairing
// key, which every replica shares.
func (b *Bot) attemptKeys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		mac := hmac.New(sha256.New, b.pkey)
		mac.Write([]byte("attempts:" + k))
		out[i] = hex.EncodeToString(mac.Sum(nil)[:16])
	}
	return out
}

// attemptLimiter counts attempts per key in fixed windows.
type attemptLimiter struct {
	mu     sync.Mutex
	window time.Duration
	seen   map[string]*attemptWindow
}

type attemptWindow struct {
	start time.Time
	n     int
}

func newAttemptLimiter(window time.Duration) *attemptLimiter {
	return &attemptLimiter{window: window, seen: map[string]*attemptWindow{}}
}

// blocked reports whether any key has used up its limit in its current
// window, without recording an attempt.
func (l *attemptLimiter) blocked(now time.Time, keys []string, limits []int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, k := range keys {
		if w := l.seen[k]; w != nil && now.Sub(w.start) < l.window && w.n >= limits[i] {
			return true
		}
	}
	return false
}

// allow records an attempt for every key and reports whether each key is
// within its limit (limits[i] for keys[i]). A refused attempt still
// counts, so hammering does not reopen the window early.
func (l *attemptLimiter) allow(now time.Time, keys []string, limits []int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) >= maxAttemptKeys {
		for k, w := range l.seen {
			if now.Sub(w.start) >= l.window {
				delete(l.seen, k)
			}
		}
	}
	ok := true
	for i, k := range keys {
		w := l.seen[k]
		if w == nil || now.Sub(w.start) >= l.window {
			if w == nil && len(l.seen) >= maxAttemptKeys {
				ok = false
				continue
			}
			w = &attemptWindow{start: now}
			l.seen[k] = w
		}
		w.n++
		if w.n > limits[i] {
			ok = false
		}
	}
	return ok
}
