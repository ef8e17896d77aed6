package bot

import (
	"context"
	"slices"
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

// limiter spaces outbound calls: every send is one global interval
// (1/Global s) away from every other, and per-chat next-allowed times
// keep a private chat at one message per PerChat, a group at PerGroup a
// minute. A send that must wait for its own chat's slot holds only its
// own place on the global calendar: sends to other chats still go in the
// gaps before it (Telegram's global limit counts messages per second; it
// does not queue one chat behind another). A 429 pushes the chat's next
// slot back by retry_after exactly.
type limiter struct {
	lim Limits
	now func() time.Time

	mu       sync.Mutex
	global   []time.Time // reserved send times, ascending; none a whole interval past
	chatNext map[int64]time.Time
}

func newLimiter(l Limits, now func() time.Time) *limiter {
	return &limiter{lim: l, now: now, chatNext: map[int64]time.Time{}}
}

// wait blocks until a send to chat is allowed and reserves the slot.
func (l *limiter) wait(ctx context.Context, chat int64, group bool) error {
	return retry.Sleep(ctx, l.reserve(chat, group))
}

// reserve takes chat's next send slot and returns how long to wait for it.
func (l *limiter) reserve(chat int64, group bool) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	at := now
	if n := l.chatNext[chat]; n.After(at) {
		at = n
	}
	if l.lim.Global > 0 {
		at = l.globalSlot(now, at)
	}
	var gap time.Duration
	if group && l.lim.PerGroup > 0 {
		gap = time.Minute / time.Duration(l.lim.PerGroup)
	} else if !group {
		gap = l.lim.PerChat
	}
	l.chatNext[chat] = at.Add(gap)
	if len(l.chatNext) > 10000 {
		for k, v := range l.chatNext {
			if v.Before(now) {
				delete(l.chatNext, k)
			}
		}
	}
	return at.Sub(now)
}

// globalSlot reserves and returns the earliest time from at on that is a
// whole global interval away from every send already reserved (l.mu held).
func (l *limiter) globalSlot(now, at time.Time) time.Time {
	iv := time.Second / time.Duration(l.lim.Global)
	past := 0 // reservations an interval old can no longer conflict
	for past < len(l.global) && !l.global[past].After(now.Add(-iv)) {
		past++
	}
	l.global = l.global[past:]
	pos := 0
	for ; pos < len(l.global); pos++ {
		r := l.global[pos]
		if !r.After(at.Add(-iv)) {
			continue // far enough before
		}
		if !r.Before(at.Add(iv)) {
			break // at fits before r (and before every later one)
		}
		at = r.Add(iv)
	}
	l.global = slices.Insert(l.global, pos, at)
	return at
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
