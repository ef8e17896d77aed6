package kairos

import (
	"context"
	"time"
)

// RawUpdate is a Telegram update as received, persisted before the polling
// offset moves past it so that no message is lost across a crash.
type RawUpdate struct {
	UpdateID   int64
	ChatID     int64
	Payload    []byte // the update's JSON
	ReceivedAt time.Time
	Attempts   int
	// Owner is the replica that stored the update and works on it
	// (LeaseStore.ClaimUpdates hands a dead replica's to a survivor).
	Owner string
}

// Outbox states of a reply part.
const (
	OutboxNew     = ""        // never attempted
	OutboxSending = "sending" // intent recorded; the send may or may not have happened
	OutboxSent    = "sent"
)

// UpdateLog persists updates and the intents of replies (the outbox) so
// processing is idempotent: a reply goes out at most once even if the
// process dies between sending and recording.
//
// Every method fails only with EINTERNAL (the database): an update or an
// outbox part that is not stored is not an error (OutboxState answers
// OutboxNew, MarkUpdateDone and MarkSent change nothing).
type UpdateLog interface {
	// SaveUpdates stores updates, ignoring ids already stored; it returns
	// the updates that were new.
	SaveUpdates(ctx context.Context, ups []*RawUpdate) ([]*RawUpdate, error)
	// PendingUpdates returns updates not yet done, oldest first.
	PendingUpdates(ctx context.Context, limit int) ([]*RawUpdate, error)
	// MaxUpdateID returns the highest stored update id (0 when none).
	MaxUpdateID(ctx context.Context) (int64, error)
	// MarkUpdateDone marks an update processed and drops its payload.
	MarkUpdateDone(ctx context.Context, updateID int64) error
	// BumpAttempts counts a processing attempt (a crash loop gives up).
	BumpAttempts(ctx context.Context, updateID int64) (int, error)

	// BeginSend records the intent to send the reply part `key`. It
	// returns the part's previous state: OutboxNew when the caller should
	// send now, OutboxSending or OutboxSent (with the message id, if
	// known) when it must not send again.
	BeginSend(ctx context.Context, key string, chatID int64) (state string, messageID int64, err error)
	// OutboxState reports a part's state without recording anything.
	OutboxState(ctx context.Context, key string) (state string, messageID int64, err error)
	// MarkSent records that the part went out as messageID.
	MarkSent(ctx context.Context, key string, messageID int64) error
}

// AccessStore holds the users an operator admitted at run time (pairing),
// beside the policy's allowed_users.
type AccessStore interface {
	GrantAccess(ctx context.Context, userID, grantedBy int64) error
	RevokeAccess(ctx context.Context, userID int64) error
	HasAccess(ctx context.Context, userID int64) (bool, error)
	ListAccess(ctx context.Context) ([]int64, error)
}

// SettingStore keeps small named values (e.g. the pairing key).
type SettingStore interface {
	// Setting returns the value of key, or "" when unset.
	Setting(ctx context.Context, key string) (string, error)
	// SetSettingIfAbsent stores value unless key is set; it returns the
	// value in force afterwards.
	SetSettingIfAbsent(ctx context.Context, key, value string) (string, error)
}

// ChatLocker serialises turns of one chat across processes sharing a
// database (replicas in webhook mode): a replica holds the chat's lock
// while it works through the chat's pending updates in update_id order.
type ChatLocker interface {
	// LockChat blocks until the chat's lock is held; unlock releases it.
	LockChat(ctx context.Context, chatID int64) (unlock func(), err error)
	// PendingForChat returns the chat's unprocessed updates, oldest first.
	PendingForChat(ctx context.Context, chatID int64) ([]*RawUpdate, error)
}

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

// PollLease is the lease of the replica that long-polls Telegram.
const PollLease = "telegram-poll"

// ReplicaLease names the heartbeat lease of replica id: while it is held,
// the updates the replica owns are its own; once it runs out, another
// replica may claim them.
func ReplicaLease(id string) string { return "replica:" + id }

// LeaseStore lets replicas that share one database divide work through
// named leases: one holder at a time, until the lease expires unless its
// holder renews it.
type LeaseStore interface {
	// AcquireLease takes the named lease for holder, or renews it when
	// holder has it, for ttl from the store's clock; false when another
	// holder has it and it has not expired.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// ReleaseLease frees the lease if holder has it.
	ReleaseLease(ctx context.Context, name, holder string) error
	// ClaimUpdates makes holder the owner of the pending updates whose
	// owner holds no live ReplicaLease (with own, also of the pending
	// updates holder owns already: a restart) and returns them, oldest
	// first. Each is taken with a conditional update on its previous
	// owner, so two claimers never both get one.
	ClaimUpdates(ctx context.Context, holder string, own bool) ([]*RawUpdate, error)
}

// AttemptStore counts attempts (pairing refusals, failed /pair codes) per
// key in fixed windows, in the database, so every replica sharing it
// sees the same counts.
type AttemptStore interface {
	// CountAttempts records one attempt under each key (a key whose
	// window ended starts a new one) and returns each key's count in its
	// window, this attempt included.
	CountAttempts(ctx context.Context, keys []string, window time.Duration) ([]int, error)
	// PeekAttempts returns each key's count in its current window
	// without recording anything.
	PeekAttempts(ctx context.Context, keys []string, window time.Duration) ([]int, error)
}
