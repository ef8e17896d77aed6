package bot

import (
	"context"
	"sync"

	"github.com/kairos-agent/kairos"
)

// turnWorker lets a running turn lend its worker while it waits
// (kairos.Blocked): busy counts the workers running turns that are not
// waiting, and a turn that waited takes a worker back before any chat in
// the ready list gets one. A turn's tool calls run side by side, so the
// turn lends its worker at the first wait and takes it back after the
// last; mu keeps a lend and a take-back of the same turn from crossing.
type turnWorker struct {
	b    *Bot
	mu   sync.Mutex
	lent int // the turn's calls in kairos.Blocked
}

func (b *Bot) turnOnWorker(ctx context.Context) context.Context {
	return kairos.WithWorker(ctx, &turnWorker{b: b})
}

// Yield implements kairos.WorkerPool.
func (t *turnWorker) Yield() (resume func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lent++; t.lent == 1 {
		t.b.lend()
	}
	return t.resume
}

func (t *turnWorker) resume() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lent--; t.lent == 0 {
		t.b.takeBack()
	}
}

// lend gives a worker to a turn waiting to take one back, else to the
// first chat in the ready list.
func (b *Bot) lend() {
	b.mu.Lock()
	if b.returning > 0 {
		b.handOver()
		b.mu.Unlock()
		return
	}
	start := len(b.ready) > 0 && b.work.Err() == nil
	if !start {
		b.busy--
		b.freed.Broadcast()
	}
	b.mu.Unlock()
	if start {
		go b.worker(b.work) // the worker counted in busy is now this one
	}
}

// handOver passes a worker to a turn waiting to take one back: busy
// stays. b.mu is held.
func (b *Bot) handOver() {
	b.returning--
	b.handed++
	b.freed.Broadcast()
}

// takeBack waits for a worker: one handed over, or a free one.
func (b *Bot) takeBack() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.returning++
	for {
		if b.handed > 0 {
			b.handed--
			return
		}
		if b.busy < b.cfg.Workers {
			b.returning--
			b.busy++
			return
		}
		b.freed.Wait()
	}
}
