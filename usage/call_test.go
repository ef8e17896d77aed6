package usage_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// heldModel keeps every call inside the model until release says so.
type heldModel struct {
	inner   *fixedModel
	entered atomic.Int64
	out     chan struct{}
}

func (m *heldModel) Chat(ctx context.Context, req kairos.ChatRequest, d func(string)) (*kairos.ChatResponse, error) {
	m.entered.Add(1)
	<-m.out
	return m.inner.Chat(ctx, req, d)
}

// The bot's monthly cap takes a slot per call: many workers' turns at
// once (each its own user, so no user's cap serialises them) are held
// inside the model until every worker is either inside, waiting for a
// slot, or refused; then they all answer. The calls admitted may go past
// the cap by no more than one call's estimate, whatever the number of
// workers (each held one slot of its expected use while in flight).
// Hammer: run with -race.
func TestBotCapHoldsASlotPerCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  kairos.ChatRequest
	}{
		// Estimated from the request: 25 + 4 prompt tokens, 5 to answer.
		{"estimate near the use", kairos.ChatRequest{Model: "m", MaxTokens: 5, Messages: []kairos.ChatMessage{{Role: "user", Content: strings.Repeat("a", 100)}}}},
		// No MaxTokens: the slot holds a default answer, larger than the cap.
		{"estimate above the cap", kairos.ChatRequest{Model: "m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.pol.Budgets.Spend.BotMonthlyTokens = ptr(int64(100))
			held := &heldModel{inner: f.inner, out: make(chan struct{})}
			f.model.Next = held
			const workers = 48
			var wg sync.WaitGroup
			var made, refused atomic.Int64
			for i := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx := kairos.WithSpend(context.Background(), kairos.SpendContext{UserKey: fmt.Sprintf("telegram:%d", i)})
					_, err := f.model.Chat(ctx, tc.req, nil)
					switch {
					case err == nil:
						made.Add(1)
					case isRefusal(err):
						refused.Add(1)
					default:
						t.Error(err)
					}
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			wait := testkit.Deadline(t)
			for released := int64(0); ; {
				select {
				case <-done:
				default:
					// Every worker is accounted for (inside, waiting or
					// answered): let one inside out.
					inside := held.entered.Load() - released
					if inside > 0 && held.entered.Load()+int64(f.guard.Waiting())+refused.Load() == workers {
						held.out <- struct{}{}
						released++
					} else if wait.Err() != nil {
						t.Fatalf("stuck: %d entered, %d released, %d waiting, %d refused", held.entered.Load(), released, f.guard.Waiting(), refused.Load())
					} else {
						time.Sleep(time.Millisecond) // poll
					}
					continue
				}
				break
			}
			tokens := made.Load() * 30
			t.Logf("%d workers: %d calls made (%d tokens) under a bot cap of 100 tokens, %d refused", workers, made.Load(), tokens, refused.Load())
			if tokens > 100+30 {
				t.Fatalf("%d calls made (%d tokens) under a bot cap of 100 tokens", made.Load(), tokens)
			}
			if made.Load()+refused.Load() != workers {
				t.Fatalf("%d made + %d refused of %d", made.Load(), refused.Load(), workers)
			}
		})
	}
}
