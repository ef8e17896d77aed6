package bot

import (
	"context"
	"sync/atomic"

	"github.com/kairos-agent/kairos"
)

// chatQueue is one chat's work in arrival order. While it has work the
// chat has a line: it waits in the ready list or a worker runs its turn,
// so the chat's turns never run beside each other.
type chatQueue struct {
	items   []queued
	running bool // the chat has a line
}

// queued is one piece of a chat's work: a stored update, or a turn that
// came from elsewhere (the query API's POST /messages) through InChat.
type queued struct {
	u    *kairos.RawUpdate
	call *chatCall
}

// chatCall is a turn handed in by InChat.
type chatCall struct {
	ctx   context.Context
	fn    func(context.Context)
	state atomic.Int32 // callQueued, then callRunning or callDropped
	err   error        // set before done closes
	done  chan struct{}
}

const (
	callQueued int32 = iota
	callRunning
	callDropped
)

// drop ends a call that will not run (shutdown, or its caller left).
func (c *chatCall) drop(err error) {
	if c.state.CompareAndSwap(callQueued, callDropped) {
		c.err = err
		close(c.done)
	}
}

// InChat runs fn as a turn of the chat: after the turns queued for it
// before, before those queued after, never beside another of its turns
// (with SharedOrder also under the chat's cross-replica lock), and
// holding a worker like a Telegram turn. It returns when fn has returned,
// or with ctx's error when ctx ends before fn starts (fn then never runs;
// once started, fn is waited for and should heed ctx).
func (b *Bot) InChat(ctx context.Context, chatID int64, fn func(context.Context)) error {
	if b.work.Err() != nil {
		return errShuttingDown
	}
	call := &chatCall{ctx: ctx, fn: fn, done: make(chan struct{})}
	b.enqueue(chatID, queued{call: call})
	select {
	case <-call.done:
		return call.err
	case <-ctx.Done():
		call.drop(ctx.Err())
		<-call.done // at once when dropped; after fn when it had started
		return call.err
	}
}

// schedule queues an update behind its chat's earlier ones. Callback
// queries (approval answers) skip the queue: the turn they unblock is
// running in that very chat.
func (b *Bot) schedule(u *kairos.RawUpdate) {
	if isCallback(u.Payload) {
		ctx := b.work
		b.inflight.Add(1)
		go func() {
			defer b.inflight.Done()
			b.process(ctx, u)
		}()
		return
	}
	b.enqueue(u.ChatID, queued{u: u})
}

// enqueue appends work to the chat's queue. A chat with work and no line
// yet joins the end of the ready list, and a worker starts when fewer
// than Workers run: a chat waiting for a worker is an entry in that list,
// not a goroutine (a flood of a thousand chats kept a thousand parked
// goroutines and their stacks; doc/benchmarks.md, "Memory (issue 36)").
func (b *Bot) enqueue(chat int64, it queued) {
	b.mu.Lock()
	q := b.chats[chat]
	if q == nil {
		q = &chatQueue{}
		b.chats[chat] = q
	}
	q.items = append(q.items, it)
	b.queued++
	b.cfg.Metrics.QueueDepth(b.queued)
	if !q.running {
		q.running = true
		b.inflight.Add(1)
		if b.work.Err() != nil {
			b.endLine(chat, q) // shutting down: no worker takes it
			b.mu.Unlock()
			return
		}
		b.ready = append(b.ready, chatLine{chat, q})
	}
	start := len(b.ready) > 0 && b.busy < b.cfg.Workers
	if start {
		b.busy++
	}
	b.mu.Unlock()
	if start {
		go b.worker(b.work)
	}
}

// chatLine is a chat in the ready list.
type chatLine struct {
	chat int64
	q    *chatQueue
}

// worker runs one turn of the first ready chat, puts the chat back at the
// end of the list while it has more, and goes on with the next until no
// chat is ready: the chats share the workers in turn, one slow chat holds
// one worker, and a chat's turns never run beside each other (a chat is
// in the list or at a worker, never both).
func (b *Bot) worker(ctx context.Context) {
	b.mu.Lock()
	for len(b.ready) > 0 && ctx.Err() == nil {
		l := b.ready[0]
		b.ready[0] = chatLine{}
		b.ready = b.ready[1:]
		it := l.q.items[0]
		l.q.items[0] = queued{}
		l.q.items = l.q.items[1:]
		b.queued--
		b.cfg.Metrics.QueueDepth(b.queued)
		b.mu.Unlock()

		if it.call != nil {
			b.runCall(ctx, l.chat, it.call)
		} else {
			b.processInOrder(b.turnOnWorker(ctx), it.u)
		}

		b.mu.Lock()
		if len(l.q.items) == 0 || ctx.Err() != nil {
			b.endLine(l.chat, l.q)
		} else {
			b.ready = append(b.ready, l)
		}
		if b.returning > 0 {
			b.handOver() // a turn that lent its worker takes this one back
			b.mu.Unlock()
			return
		}
	}
	b.busy--
	b.freed.Broadcast()
	b.mu.Unlock()
}

// endReady ends the lines still waiting for a worker when the work
// context ends (shutdown): their calls are told at once, their stored
// updates stay pending.
func (b *Bot) endReady() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.ready {
		b.endLine(l.chat, l.q)
	}
	clear(b.ready)
	b.ready = b.ready[:0]
}

// endLine ends a chat's line: its queued calls are dropped, and a chat
// with nothing left is forgotten. b.mu is held.
func (b *Bot) endLine(chat int64, q *chatQueue) {
	q.running = false
	b.dropCalls(q)
	if len(q.items) == 0 {
		delete(b.chats, chat)
	}
	b.inflight.Done()
}

var errShuttingDown = kairos.Errorf(kairos.ECONFLICT, "The bot is shutting down; try again after it restarts.")

// dropCalls ends the calls still queued when the drainer stops (shutdown):
// their callers are told at once. Stored updates stay queued (and pending
// in the store). b.mu is held.
func (b *Bot) dropCalls(q *chatQueue) {
	kept := q.items[:0]
	for _, it := range q.items {
		if it.call == nil {
			kept = append(kept, it)
			continue
		}
		it.call.drop(errShuttingDown)
		b.queued--
	}
	clear(q.items[len(kept):])
	q.items = kept
	b.cfg.Metrics.QueueDepth(b.queued)
}

// runCall runs an InChat turn unless its caller has left; with
// SharedOrder it holds the chat's cross-replica lock as a Telegram turn
// does. fn's context ends with the caller's or with the bot's work.
func (b *Bot) runCall(work context.Context, chat int64, c *chatCall) {
	if !c.state.CompareAndSwap(callQueued, callRunning) {
		return // dropped while queued
	}
	defer close(c.done)
	ctx, cancel := context.WithCancel(b.turnOnWorker(c.ctx))
	defer cancel()
	stop := context.AfterFunc(work, cancel)
	defer stop()
	if locker, ok := b.cfg.Updates.(kairos.ChatLocker); ok && b.cfg.SharedOrder {
		unlock, err := locker.LockChat(ctx, chat)
		if err != nil {
			c.err = err
			return
		}
		defer unlock()
	}
	c.fn(ctx)
}

// processInOrder processes u; with SharedOrder it first takes the chat's
// cross-replica lock and handles the chat's pending updates up to u in
// update_id order.
func (b *Bot) processInOrder(ctx context.Context, u *kairos.RawUpdate) {
	locker, ok := b.cfg.Updates.(kairos.ChatLocker)
	if !b.cfg.SharedOrder || !ok { // New refuses SharedOrder without a locker
		b.process(ctx, u)
		return
	}
	unlock, err := locker.LockChat(ctx, u.ChatID)
	if err != nil {
		b.log.Error("lock chat", "err", err)
		return // stays pending; resumed at the next start
	}
	defer unlock()
	pending, err := locker.PendingForChat(ctx, u.ChatID)
	if err != nil {
		b.log.Error("pending updates of chat", "err", err)
		return
	}
	for _, p := range pending {
		if p.UpdateID > u.UpdateID {
			break
		}
		b.process(ctx, p)
	}
}
