package bot_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
)

// TestBlockedTurnLendsItsWorker: turns waiting in kairos.Blocked (for the
// sandbox engine's first compilation) lend their workers, so the other
// chats are answered meanwhile even when the waiting turns outnumber the
// workers; and at no instant do more turns work than there are workers.
// Generated: 1–4 workers, 1–8 waiting turns (each waiting from 1–3 of its
// tool calls side by side), 5–30 other chats, several messages per chat.
// Before, the waiting turns held every worker and no other chat ran until
// the engine was ready.
func TestBlockedTurnLendsItsWorker(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 2))
	for i := range 40 {
		workers, waiting, others := 1+r.IntN(4), 1+r.IntN(8), 5+r.IntN(26)
		calls := 1 + r.IntN(3)
		t.Run(fmt.Sprintf("%d_w%d_b%d_o%d_c%d", i, workers, waiting, others, calls), func(t *testing.T) {
			checkLending(t, workers, waiting, others, calls)
		})
	}
}

func checkLending(t *testing.T, workers, waiting, others, calls int) {
	b, err := bot.New(bot.Config{Token: "t", APIURL: "http://127.0.0.1:1", Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(time.Minute)
	var working, most atomic.Int32
	work := func(d int32) {
		if n := working.Add(d); d > 0 {
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		}
	}
	engine := make(chan struct{})
	var inBlocked sync.WaitGroup
	inBlocked.Add(waiting * calls)
	turn := func(ctx context.Context, block bool) {
		work(1)
		if block {
			work(-1) // from here the worker may be lent
			var tools sync.WaitGroup
			for range calls {
				tools.Add(1)
				go func() {
					defer tools.Done()
					kairos.Blocked(ctx, func() { inBlocked.Done(); <-engine })
				}()
			}
			tools.Wait()
			work(1) // the worker is back
		}
		work(-1)
	}
	var blockedDone, othersDone sync.WaitGroup
	order := make([][]int, others)
	beside := make([]atomic.Int32, others) // a chat's turns never run beside each other
	var mu sync.Mutex
	for c := range waiting {
		blockedDone.Add(1)
		go func() {
			defer blockedDone.Done()
			if err := b.InChat(context.Background(), int64(1000+c), func(ctx context.Context) { turn(ctx, true) }); err != nil {
				t.Error(err)
			}
		}()
	}
	inBlocked.Wait() // every waiting turn is in Blocked
	for c := range others {
		for m := range 3 {
			othersDone.Add(1)
			go func() {
				defer othersDone.Done()
				err := b.InChat(context.Background(), int64(c), func(ctx context.Context) {
					if beside[c].Add(1) > 1 {
						t.Errorf("chat %d: two turns at once", c)
					}
					defer beside[c].Add(-1)
					turn(ctx, false)
					mu.Lock()
					order[c] = append(order[c], m)
					mu.Unlock()
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
	}
	othersDone.Wait() // before the engine is ready: the waiting turns lent their workers
	close(engine)
	blockedDone.Wait()
	if m := most.Load(); m > int32(workers) {
		t.Errorf("%d turns worked at once on %d workers", m, workers)
	}
	for c, got := range order {
		if len(got) != 3 {
			t.Errorf("chat %d ran %v", c, got)
		}
	}
}
