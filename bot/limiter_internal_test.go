package bot

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// fakeClock is a settable clock for the limiter.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// A chat waiting out its own one-second gap must not hold back a send to
// another chat: before, the waiting send moved the global "next send"
// to its own future slot, and every other chat queued behind it (the
// mixed soak's ECHO tail of about one second, doc/benchmarks.md).
func TestLimiterOwnChatWaitDoesNotHoldBackOthers(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := newLimiter(DefaultLimits, clk.now)
	iv := time.Second / time.Duration(DefaultLimits.Global)
	if d := l.reserve(1, false); d != 0 {
		t.Fatalf("first send waits %v", d)
	}
	if d := l.reserve(1, false); d != time.Second {
		t.Fatalf("chat 1's second send waits %v, want its 1 s gap", d)
	}
	if d := l.reserve(2, false); d != iv {
		t.Fatalf("chat 2 waits %v behind chat 1's future slot, want one global interval (%v)", d, iv)
	}
	// Two intervals before chat 1's future slot, two sends still fit;
	// the third goes after it.
	clk.t = clk.t.Add(time.Second - 2*iv)
	if d := l.reserve(3, false); d != 0 {
		t.Fatalf("chat 3 waits %v with free intervals before chat 1's slot", d)
	}
	if d := l.reserve(4, false); d != iv {
		t.Fatalf("chat 4 waits %v, want %v (between chat 3 and chat 1)", d, iv)
	}
	if d := l.reserve(5, false); d != 3*iv {
		t.Fatalf("chat 5 waits %v, want %v (after chat 1)", d, 3*iv)
	}
}

// The limiter's rule over generated traffic: any two sends a global
// interval apart, a chat's sends its own gap apart, and each send at the
// earliest time those two rules allow given the sends reserved before it
// (no chat waits for a slot that is not its own or taken).
func TestLimiterRuleGenerated(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 36))
		clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
		lim := Limits{PerChat: time.Second, PerGroup: 20, Global: 1 + r.IntN(40)}
		l := newLimiter(lim, clk.now)
		iv := time.Second / time.Duration(lim.Global)
		type sent struct {
			chat int64
			at   time.Time
		}
		var all []sent
		chatLast := map[int64]time.Time{}
		for range 300 {
			clk.t = clk.t.Add(time.Duration(r.Int64N(int64(80 * time.Millisecond))))
			chat := int64(1 + r.IntN(12))
			group := chat > 9
			gap := lim.PerChat
			if group {
				gap = time.Minute / time.Duration(lim.PerGroup)
			}
			earliest := clk.t
			if last, ok := chatLast[chat]; ok && last.Add(gap).After(earliest) {
				earliest = last.Add(gap)
			}
			at := clk.t.Add(l.reserve(chat, group))
			if at.Before(earliest) {
				t.Fatalf("seed %d: chat %d sends at %v, before its own gap allows (%v)", seed, chat, at, earliest)
			}
			free := func(c time.Time) bool {
				for _, s := range all {
					if d := c.Sub(s.at); d < iv && d > -iv {
						return false
					}
				}
				return true
			}
			if !free(at) {
				t.Fatalf("seed %d: chat %d's send at %v is within %v of another", seed, chat, at, iv)
			}
			cands := []time.Time{earliest}
			for _, s := range all {
				cands = append(cands, s.at.Add(iv))
			}
			for _, c := range cands {
				if !c.Before(earliest) && c.Before(at) && free(c) {
					t.Fatalf("seed %d: chat %d waits until %v though %v was free (%d sends reserved)", seed, chat, at.Sub(clk.t), c.Sub(clk.t), len(all))
				}
			}
			all = append(all, sent{chat, at})
			chatLast[chat] = at
		}
		slices.SortFunc(all, func(a, b sent) int { return a.at.Compare(b.at) })
		for i := 1; i < len(all); i++ {
			if all[i].at.Sub(all[i-1].at) < iv {
				t.Fatalf("seed %d: sends %v apart, global interval %v", seed, all[i].at.Sub(all[i-1].at), iv)
			}
		}
	}
}
