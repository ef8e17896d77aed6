package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/kairos-agent/kairos"
)

// batchKey carries a *batch in a context (kairos.WriteDeferrer).
type batchKey struct{}

// batch is the deferred bookkeeping of one update: statements collected
// until the next outbox intent or the update's completion commits them
// in one transaction.
type batch struct {
	db     *DB
	mu     sync.Mutex
	ops    []func(ctx context.Context, tx *hotTx) error
	closed bool // the update is done: later writes run at once
}

// DeferWrites implements kairos.WriteDeferrer.
func (l *UpdateLog) DeferWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchKey{}, &batch{db: l.db})
}

// FlushWrites implements kairos.WriteDeferrer.
func (l *UpdateLog) FlushWrites(ctx context.Context) error {
	b := l.db.batchOf(ctx)
	if b == nil {
		return nil
	}
	if err := l.db.commit(ctx, false, nil); err != nil {
		return fmt.Errorf("commit deferred writes: %w", err)
	}
	return nil
}

// EndWrites commits the deferred writes of ctx and ends the deferral, as
// MarkUpdateDone does for a turn with no stored update (`kairos chat`):
// writes under ctx after it run at once.
func (l *UpdateLog) EndWrites(ctx context.Context) error {
	if l.db.batchOf(ctx) == nil {
		return nil
	}
	if err := l.db.commit(ctx, true, nil); err != nil {
		return fmt.Errorf("commit deferred writes: %w", err)
	}
	return nil
}

var _ kairos.WriteDeferrer = (*UpdateLog)(nil)

// batchOf returns the open batch of ctx for db, or nil.
func (db *DB) batchOf(ctx context.Context) *batch {
	b, _ := ctx.Value(batchKey{}).(*batch)
	if b == nil || b.db != db {
		return nil
	}
	return b
}

// write runs op in a transaction of its own, or, under DeferWrites, adds
// it to the update's batch.
func (db *DB) write(ctx context.Context, op func(ctx context.Context, tx *hotTx) error) error {
	if b := db.batchOf(ctx); b != nil {
		b.mu.Lock()
		if !b.closed {
			b.ops = append(b.ops, op)
			b.mu.Unlock()
			return nil
		}
		b.mu.Unlock()
	}
	return db.inTx(ctx, op)
}

// commit runs the batch's deferred statements, then last, in one
// transaction (last alone without a batch). With done the deferral ends.
// When the transaction fails the deferred statements stay for the next
// commit.
func (db *DB) commit(ctx context.Context, done bool, last func(ctx context.Context, tx *hotTx) error) error {
	b := db.batchOf(ctx)
	if b == nil {
		return db.inTx(ctx, last)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ops := b.ops
	if len(ops) == 0 && last == nil {
		b.closed = b.closed || done
		return nil
	}
	err := db.inTx(ctx, func(ctx context.Context, tx *hotTx) error {
		for _, op := range ops {
			if err := op(ctx, tx); err != nil {
				return fmt.Errorf("deferred write: %w", err)
			}
		}
		if last == nil {
			return nil
		}
		return last(ctx, tx)
	})
	if err != nil {
		return err
	}
	b.ops = b.ops[len(ops):]
	if done {
		b.closed = true
	}
	return nil
}
