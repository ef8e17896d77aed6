package bot_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// depthMetrics records the queue depth gauge.
type depthMetrics struct {
	mu    sync.Mutex
	depth int
	seen  chan int
}

func (m *depthMetrics) UpdateReceived()                    {}
func (m *depthMetrics) ReplySent(string)                   {}
func (m *depthMetrics) TooManyRequests()                   {}
func (m *depthMetrics) StageLatency(string, time.Duration) {}
func (m *depthMetrics) QueueDepth(n int)                   { m.seen <- n }
func (m *depthMetrics) waitDepth(t *testing.T, want int)   { t.Helper(); waitDepth(t, m.seen, want) }
func waitDepth(t *testing.T, seen <-chan int, want int) {
	t.Helper()
	timeout := testkit.Deadline(t).Done()
	for {
		select {
		case n := <-seen:
			if n == want {
				return
			}
		case <-timeout:
			t.Fatalf("queue depth never reached %d", want)
		}
	}
}

// TestInChatQueuesBehindTheChatsTurn: InChat turns of one chat run one
// after the other; a caller that leaves while queued is never run; after
// Shutdown InChat refuses at once.
func TestInChatQueuesBehindTheChatsTurn(t *testing.T) {
	m := &depthMetrics{seen: make(chan int, 64)}
	b, err := bot.New(bot.Config{Token: "t", APIURL: "http://127.0.0.1:1", Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	hold, held := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- b.InChat(context.Background(), 42, func(context.Context) { close(held); <-hold })
	}()
	<-held
	m.waitDepth(t, 0) // the first is running, nothing waits

	// A second call queues behind it and leaves before its turn.
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	ran := false
	go func() { second <- b.InChat(ctx, 42, func(context.Context) { ran = true }) }()
	m.waitDepth(t, 1)
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("a caller that left: %v", err)
	}
	// A third waits its turn and runs after the first.
	third := make(chan error, 1)
	order := make(chan string, 2)
	go func() { third <- b.InChat(context.Background(), 42, func(context.Context) { order <- "third" }) }()
	m.waitDepth(t, 2)
	order <- "first"
	close(hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-third; err != nil {
		t.Fatal(err)
	}
	if a, c := <-order, <-order; a != "first" || c != "third" || ran {
		t.Fatalf("order %s, %s; the dropped call ran: %v", a, c, ran)
	}
	b.Shutdown(time.Minute)
	if err := b.InChat(context.Background(), 42, func(context.Context) {}); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("after shutdown: %v", err)
	}
}

// TestWaitingChatsHoldNoGoroutine: chats waiting for a worker are queued
// work (the depth gauge counts them), not parked goroutines, and each
// gets its turn when the worker frees up.
func TestWaitingChatsHoldNoGoroutine(t *testing.T) {
	const chats = 300
	m := &depthMetrics{seen: make(chan int, 4*chats)}
	b, err := bot.New(bot.Config{Token: "t", APIURL: "http://127.0.0.1:1", Metrics: m, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(time.Minute)
	hold, held := make(chan struct{}), make(chan struct{})
	busy := make(chan error, 1)
	go func() {
		busy <- b.InChat(context.Background(), 1, func(context.Context) { close(held); <-hold })
	}()
	<-held
	m.waitDepth(t, 0)
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	ran := make(chan int64, chats)
	for c := int64(100); c < 100+chats; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.InChat(context.Background(), c, func(context.Context) { ran <- c }); err != nil {
				t.Error(err)
			}
		}()
	}
	m.waitDepth(t, chats)
	// Each caller is a goroutine of the test; the bot adds none per chat
	// (a goroutine per waiting chat would make twice as many).
	if extra := runtime.NumGoroutine() - before; extra > chats+chats/2 {
		t.Errorf("%d chats waiting for the one worker: %d more goroutines, want the %d callers and a few", chats, extra, chats)
	}
	close(hold)
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	seen := map[int64]bool{}
	for len(seen) < chats {
		seen[<-ran] = true
	}
}
