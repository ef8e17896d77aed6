package main

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/schedules"
	"github.com/kairos-agent/kairos/store"
)

// scheduleView is the schedule store as one process sees it: the
// schedules that come due and the firings it leases are those in scope
// (store.Scope, limited in the query). Embedding the store itself keeps
// its RenewFiringLease and ReturnFiring in view (schedules.LeaseRenewer):
// a view embedding kairos.ScheduleStore hid them, and a firing held past
// its 30 s lease could go to another process and a task run twice.
type scheduleView struct {
	*store.ScheduleStore
	scope store.Scope
}

var _ schedules.LeaseRenewer = scheduleView{}

func (v scheduleView) DueSchedules(ctx context.Context, now time.Time, limit int) ([]*kairos.Schedule, error) {
	return v.DueSchedulesIn(ctx, now, limit, v.scope)
}

func (v scheduleView) LeaseFirings(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*kairos.Firing, error) {
	return v.LeaseFiringsIn(ctx, now, lease, limit, v.scope)
}

// cliSchedules is `kairos chat`'s view: the local user's terminal thread
// only, so a firing left pending by a chat that ended is delivered by the
// next one.
func cliSchedules(st *store.ScheduleStore) scheduleView {
	uid := cliUserID()
	return scheduleView{st, store.Scope{Thread: kairos.ThreadKey(kairos.ChannelCLI, kairos.ChatDM, uid, uid, 0)}}
}

// botSchedules is `kairos run`'s view: every thread but the terminal's,
// which wait for `kairos chat` (the bot once leased their firings and
// failed them: a terminal thread cannot receive a Telegram message).
func botSchedules(st *store.ScheduleStore) scheduleView {
	return scheduleView{st, store.Scope{NotChannel: kairos.ChannelCLI}}
}

// startChatSchedules delivers the terminal's reminders, tasks and
// watching cells to the terminal while `kairos chat` runs.
func (m *Main) startChatSchedules(ctx context.Context, c *core, out *terminal) {
	r := schedules.NewRunner(schedules.Config{
		Store: cliSchedules(c.sched.store), Now: c.now, Logger: c.log.With("component", "schedules"),
		LateThreshold: func() time.Duration { return c.policy().Schedules.LateThreshold.Approx() },
		Deliver: func(ctx context.Context, d schedules.Delivery) (int64, error) {
			return 0, m.deliverToTerminal(ctx, c, out, d)
		},
	})
	c.sched.mu.Lock()
	c.sched.runner = r
	c.sched.mu.Unlock()
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c.policy().Schedules.Enabled {
			r.Run(rctx, schedules.TickInterval)
		}
	}()
	m.onClose(func() error { cancel(); <-done; return nil })
}

// deliverToTerminal composes a firing at the desk, as kairos run does, and
// prints it; a task runs in the terminal's turn.
func (m *Main) deliverToTerminal(ctx context.Context, c *core, out *terminal, d schedules.Delivery) error {
	if d.Schedule.Kind == kairos.ScheduleTask && !d.Missed {
		release, err := out.takeTurn(ctx, func() { c.log.Info("scheduled task waits for the terminal's turn", "firing", d.Firing.ID) })
		if err != nil {
			return err
		}
		defer release()
	}
	addr := *cliMessage("", c.now())
	addr.Surface = kairos.SurfaceScheduled
	msg, err := c.sched.firings.Compose(ctx, d, addr)
	if err != nil || msg == nil {
		return err
	}
	return out.Final(ctx, msg.Text)
}
