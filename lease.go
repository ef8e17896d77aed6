package kairos

import (
	"context"
	"time"
)

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
