package main

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
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
		Deliver:       c.sched.firings.Deliver(out),
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

var _ desk.Door = (*terminal)(nil)

// InTurn runs a task in the terminal's turn (desk.Door), after the line
// being answered.
func (t *terminal) InTurn(ctx context.Context, _ *kairos.Inbound, fn func(ctx context.Context)) error {
	release, err := t.takeTurn(ctx, func() { t.log.Info("scheduled task waits for the terminal's turn") })
	if err != nil {
		return err
	}
	defer release()
	fn(ctx)
	return nil
}

// Sent: the terminal keeps no outbox; a firing it claimed is printed once.
func (t *terminal) Sent(context.Context, string) (int64, bool) { return 0, false }

// Send prints a firing's message (its buttons are Telegram's).
func (t *terminal) Send(ctx context.Context, _ string, _ *kairos.Inbound, out *kairos.Outgoing) (int64, error) {
	return 0, t.Final(ctx, out.Text)
}
