package bot

import (
	"context"

	"github.com/kairos-agent/kairos"
)

// deferWrites lets the update store collect a message update's bookkeeping
// writes so that they commit with the answer's outbox intent and with the
// update's completion (kairos.WriteDeferrer), instead of one transaction
// each.
func (b *Bot) deferWrites(ctx context.Context) context.Context {
	if d, ok := b.cfg.Updates.(kairos.WriteDeferrer); ok {
		return d.DeferWrites(ctx)
	}
	return ctx
}

// flushWrites commits the deferred writes now.
func (b *Bot) flushWrites(ctx context.Context) error {
	if d, ok := b.cfg.Updates.(kairos.WriteDeferrer); ok {
		return d.FlushWrites(ctx)
	}
	return nil
}
