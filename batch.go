package kairos

import "context"

// WriteDeferrer lets the bookkeeping of one update commit in as few
// transactions as possible (the update log implements it).
//
// Under the context DeferWrites returns, the store collects its deferrable
// bookkeeping writes (clock marks, token usage, session messages, thread
// mode, outbox sent marks) instead of running each in a transaction of its
// own. They commit in one transaction together with the next outbox intent
// (UpdateLog.BeginSend), so a turn and the intent to deliver its answer are
// written at once, right before the request leaves; what remains commits
// with MarkUpdateDone, which also ends the deferral (later writes under the
// context run at once). A crash before a commit loses those writes together
// with the update's completion, so the update runs again and writes them
// then. Reads are not affected: a deferred write is not visible until it
// commits, so only writes nothing in the same update reads back defer.
type WriteDeferrer interface {
	DeferWrites(ctx context.Context) context.Context
	// FlushWrites commits the deferred writes of ctx now (nothing
	// without DeferWrites): before an answer is delivered by an edit,
	// which has no outbox intent to commit with.
	FlushWrites(ctx context.Context) error
}
