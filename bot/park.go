package bot

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos"
)

// A chat never freezes (issue 33). With Config.ParkApprovals a turn that
// asks for approval does not hold its chat while the question waits:
//
//   - the request is a row (with the paused turn's state) and its keyboard
//     is out; the row's heartbeat is set to zero ("nobody waits") and the
//     turn ends, so the chat's next message, or a /command, is answered;
//   - a press, here or on another replica, decides the row and, finding
//     nobody waiting, claims it and resumes the turn (Config.Resume) as a
//     turn of the chat (InChat): after what is queued before it, never
//     beside another turn of the chat;
//   - a press that reached this process before the turn parked is taken
//     as a waiter would take it, and the turn goes on at once;
//   - the sweeper expires a parked request at its expiry: the keyboard
//     says when it expired and that nothing was done, and the chat is told;
//   - a message that depends on the pending request (a reply to it or to
//     the message that asked, or a bare yes or no) waits for the decision
//     with one line saying so (hold.go), then runs after the resumed turn.

// park ends the wait of a persisted request whose keyboard is out: it
// returns kairos.ErrHandedOff (the turn stops without answering; the
// decision resumes it), unless the request was decided meanwhile.
func (b *Bot) park(ctx context.Context, id string, pa *pendingApproval, kbm keyboardMsg, expires time.Time) (kairos.Decision, error) {
	st := b.cfg.Approvals
	// Its expiry is this process's (expireWhenDue) from before anyone can
	// see it parked: the sweeper leaves it alone.
	b.parked.Store(id, struct{}{})
	if _, err := st.HeartbeatApproval(context.WithoutCancel(ctx), id, time.UnixMilli(0)); err != nil {
		// The heartbeat goes stale on its own within approvalStale: a
		// press then resumes the turn a few seconds later.
		b.log.Warn("park approval", "err", err)
	}
	b.approvals.Delete(id)
	select {
	case dec := <-pa.ch: // pressed here before the park
		b.parked.Delete(id)
		return b.takePress(ctx, id, pa, kbm, dec, true)
	default:
	}
	// Pressed elsewhere meanwhile, or here after the check above (such a
	// press was handed to this waiter, which is gone: the sweeper resumes
	// a decided, unclaimed request).
	if row, err := st.FindApproval(ctx, id); err == nil && row.Status != kairos.ApprovalPending {
		b.parked.Delete(id)
		return b.claimAsWaiter(ctx, id, rowDecision(row), true)
	}
	b.log.Info("turn parked until its approval is decided", "approval", id, "chat", kbm.in.ChatID)
	go b.expireWhenDue(id, kbm, expires)
	return kairos.Decision{Outcome: kairos.DecisionDenied}, kairos.ErrHandedOff
}

// expireWhenDue expires a parked request of this process at its expiry,
// as a waiter would: the keyboard says so and the turn resumes with the
// expiry (the model is told it was not done, and answers). A request
// decided first is left to its decider; at shutdown the timer stops and
// the sweeper of the next start expires it (with a notice, no model call).
func (b *Bot) expireWhenDue(id string, kbm keyboardMsg, expires time.Time) {
	defer b.parked.Delete(id)
	t := time.NewTimer(max(expires.Sub(b.cfg.Now()), 0))
	defer t.Stop()
	select {
	case <-t.C:
	case <-b.stopping:
		return
	case <-b.work.Done():
		return
	}
	ctx, now := b.work, b.cfg.Now()
	won, err := b.cfg.Approvals.DecideApproval(ctx, id, kairos.DecisionExpired, "", now)
	if err != nil || !won {
		if err != nil {
			b.log.Warn("expire parked approval", "err", err)
		}
		return // decided meanwhile: its decider continues it
	}
	dec := kairos.Decision{Outcome: kairos.DecisionExpired, At: now}
	b.closeKeyboard(ctx, kbm, dec)
	if row, err := b.cfg.Approvals.FindApproval(ctx, id); err == nil {
		b.resumeOrphan(ctx, row, dec)
	}
}

// takePress finishes a wait with a press delivered to this process: the
// keyboard closes, a press that came before the row was written is
// recorded, and the row's decision is the one continued.
func (b *Bot) takePress(ctx context.Context, id string, pa *pendingApproval, kbm keyboardMsg, dec kairos.Decision, persist bool) (kairos.Decision, error) {
	b.closeOnce(context.WithoutCancel(ctx), pa, &kbm, dec)
	if persist {
		st := b.cfg.Approvals
		if _, err := st.DecideApprovalAs(context.WithoutCancel(ctx), id, dec); err != nil {
			b.log.Warn("decide approval", "err", err)
		} else if row, err := st.FindApproval(ctx, id); err == nil && row.Status != kairos.ApprovalPending {
			pressed := dec
			dec = rowDecision(row) // the row's decision is the one
			if dec.By == pressed.By {
				dec.ByName = pressed.ByName
			}
		}
	}
	return b.claimAsWaiter(ctx, id, dec, persist)
}
