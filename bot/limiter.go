package bot

import (
	"context"
	"sync"
	"time"

	"github.com/kairos-agent/kairos/internal/retry"
)

// Limits are Telegram's outbound limits. Zero values switch a limit off
// (for load benchmarks).
type Limits struct {
	PerChat  time.Duration // minimum gap between sends to one private chat (1 s)
	PerGroup int           // messages per minute to one group (20)
	Global   int           // messages per second in all (30)
}

// DefaultLimits are Telegram's documented limits.
var DefaultLimits = Limits{PerChat: time.Second, PerGroup: 20, Global: 30}

// limiter spaces outbound calls: a token bucket for the global rate, and
// per-chat next-allowed times (a private chat one message per PerChat, a
// group PerGroup a minute). A 429 pushes the chat's (and, for a global
// flood, everyone's) next slot back by retry_after exactly.
type limiter struct {
	lim Limits
	now func() time.Time

	mu         sync.Mutex
	globalNext time.Time
	chatNext   map[int64]time.Time
}

func newLimiter(l Limits, now func() time.Time) *limiter {
	return &limiter{lim: l, now: now, chatNext: map[int64]time.Time{}}
}

// wait blocks until a send to chat is allowed and reserves the slot.
func (l *limiter) wait(ctx context.Context, chat int64, group bool) error {
	l.mu.Lock()
	now := l.now()
	at := now
	if n := l.chatNext[chat]; n.After(at) {
		at = n
	}
	if l.lim.Global > 0 && l.globalNext.After(at) {
		at = l.globalNext
	}
	var gap time.Duration
	if group && l.lim.PerGroup > 0 {
		gap = time.Minute / time.Duration(l.lim.PerGroup)
	} else if !group {
		gap = l.lim.PerChat
	}
	l.chatNext[chat] = at.Add(gap)
	if l.lim.Global > 0 {
		l.globalNext = at.Add(time.Second / time.Duration(l.lim.Global))
	}
	if len(l.chatNext) > 10000 {
		for k, v := range l.chatNext {
			if v.Before(now) {
				delete(l.chatNext, k)
			}
		}
	}
	l.mu.Unlock()
	return retry.Sleep(ctx, at.Sub(now))
}

// backoff pushes a chat's next slot to now+d after a 429.
func (l *limiter) backoff(chat int64, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.now().Add(d)
	if n.After(l.chatNext[chat]) {
		l.chatNext[chat] = n
	}
}
