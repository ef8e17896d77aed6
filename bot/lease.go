package bot

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/retry"
)

// Replicas (issue 20). When the update store is also a kairos.LeaseStore,
// replicas sharing its database divide the work through leases:
//
//   - One replica long-polls Telegram: the holder of kairos.PollLease,
//     renewed every LeaseTTL/3. The others stand by, trying the lease
//     every standbyEvery, and the first to find it expired polls next —
//     no two getUpdates cut each other off with 409s, and a dead holder's
//     poll moves on within about LeaseTTL.
//   - Every replica renews its own kairos.ReplicaLease as its heartbeat
//     and, on the same beat, claims the pending updates of replicas whose
//     heartbeat ran out (stored by a replica that died before finishing
//     them), so they do not wait for that replica to come back.
//   - A clean stop releases both leases after the drain, so the others
//     take over at once.
const (
	// DefaultLeaseTTL is how long a lease lasts without renewal.
	DefaultLeaseTTL = 10 * time.Second
	// standbyEvery is how often a standby replica tries the poll lease.
	standbyEvery = time.Second
)

// leases returns the lease store, or nil when the update store has none.
func (b *Bot) leases() kairos.LeaseStore {
	ls, _ := b.cfg.Updates.(kairos.LeaseStore)
	return ls
}

// claimUpdates schedules the pending updates this replica may take:
// with own (at start) its own earlier ones too.
func (b *Bot) claimUpdates(ctx context.Context, own bool) error {
	ls := b.leases()
	var ups []*kairos.RawUpdate
	var err error
	if ls == nil {
		if !own {
			return nil
		}
		ups, err = b.cfg.Updates.PendingUpdates(ctx, 0)
	} else {
		ups, err = ls.ClaimUpdates(ctx, b.cfg.ReplicaID, own)
	}
	if err != nil {
		return err
	}
	if len(ups) > 0 {
		b.log.Info("resuming unfinished updates", "count", len(ups), "own", own)
	}
	for _, u := range ups {
		b.schedule(u)
	}
	return nil
}

// startHeartbeat renews this replica's lease and claims stopped
// replicas' updates every LeaseTTL/3. The heartbeat outlives the intake:
// it goes on through the drain (turns still finishing are this replica's)
// and ends when the work context does; no claims once Shutdown began.
func (b *Bot) startHeartbeat() {
	ls := b.leases()
	if ls == nil {
		return
	}
	name := kairos.ReplicaLease(b.cfg.ReplicaID)
	ctx := b.work
	renew := func() bool {
		_, err := ls.AcquireLease(ctx, name, b.cfg.ReplicaID, b.cfg.LeaseTTL)
		if err != nil && ctx.Err() == nil {
			b.log.Warn("replica heartbeat", "err", err)
		}
		return err == nil
	}
	beat := func() {
		if !renew() {
			return
		}
		select {
		case <-b.stopping:
			return
		default:
		}
		if err := b.claimUpdates(ctx, false); err != nil && ctx.Err() == nil {
			b.log.Warn("claim updates of stopped replicas", "err", err)
		}
	}
	renew() // the lease exists before anything is claimed at start (resume claims, own and stopped replicas' alike)
	done := make(chan struct{})
	b.heartbeat = done
	go func() {
		defer close(done)
		t := time.NewTicker(b.cfg.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
}

// releaseLeases frees this replica's leases after a clean stop.
func (b *Bot) releaseLeases() {
	ls := b.leases()
	if ls == nil {
		return
	}
	if b.heartbeat != nil {
		<-b.heartbeat // no beat renews what is released here
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, name := range []string{kairos.PollLease, kairos.ReplicaLease(b.cfg.ReplicaID)} {
		if err := ls.ReleaseLease(ctx, name, b.cfg.ReplicaID); err != nil {
			b.log.Warn("release lease", "lease", name, "err", err)
		}
	}
}

// holdPoll waits until this replica holds the poll lease (at once without
// a lease store) and returns a context that ends when the lease is lost
// (see renewPoll) or ctx ends; false when ctx ended first.
func (b *Bot) holdPoll(ctx context.Context) (context.Context, context.CancelFunc, bool) {
	ls := b.leases()
	if ls == nil {
		pctx, cancel := context.WithCancel(ctx)
		return pctx, cancel, ctx.Err() == nil
	}
	standing := false
	for {
		ok, err := ls.AcquireLease(ctx, kairos.PollLease, b.cfg.ReplicaID, b.cfg.LeaseTTL)
		if ctx.Err() != nil {
			return nil, nil, false
		}
		if err != nil {
			b.log.Warn("poll lease", "err", err)
		}
		if ok {
			break
		}
		if !standing {
			b.log.Info("standing by: another replica polls Telegram")
			standing = true
		}
		_ = retry.Sleep(ctx, standbyEvery)
	}
	b.log.Info("polling Telegram (holding the poll lease)")
	pctx, cancel := context.WithCancel(ctx)
	go b.renewPoll(pctx, cancel, ls)
	return pctx, cancel, true
}

// renewPoll renews the poll lease every TTL/3; when a renewal finds it
// taken, or none succeeded for two thirds of the TTL, the poll stops (before
// another replica can take the lapsed lease).
func (b *Bot) renewPoll(ctx context.Context, stop context.CancelFunc, ls kairos.LeaseStore) {
	t := time.NewTicker(b.cfg.LeaseTTL / 3)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := ls.AcquireLease(ctx, kairos.PollLease, b.cfg.ReplicaID, b.cfg.LeaseTTL)
		switch {
		case err == nil && ok:
			lastOK = time.Now()
			continue
		case err == nil:
			b.log.Warn("poll lease taken by another replica; standing by")
		case time.Since(lastOK) < b.cfg.LeaseTTL*2/3: // stop before it can lapse
			b.log.Warn("renew poll lease", "err", err)
			continue
		default:
			b.log.Warn("poll lease not renewed; standing by", "err", err)
		}
		stop()
		return
	}
}
