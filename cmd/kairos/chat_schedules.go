package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/schedules"
	"github.com/kairos-agent/kairos/store"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// cliSchedules is the schedule store as `kairos chat` sees it: only the
// local user's terminal thread's schedules come due and are leased here
// (a bot sharing the database keeps its Telegram ones), so a firing left
// pending by a chat that ended is delivered by the next one.
type cliSchedules struct {
	renewingStore
	st     *store.ScheduleStore
	thread string // the terminal's thread key
}

func (s cliSchedules) DueSchedules(ctx context.Context, now time.Time, limit int) ([]*kairos.Schedule, error) {
	all, err := s.ScheduleStore.DueSchedules(ctx, now, limit)
	out := all[:0]
	for _, sc := range all {
		if sc.ThreadKey == s.thread {
			out = append(out, sc)
		}
	}
	return out, err
}

func (s cliSchedules) LeaseFirings(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*kairos.Firing, error) {
	return s.st.LeaseFiringsIn(ctx, now, lease, limit, store.FiringScope{Thread: s.thread})
}

// newCLISchedules is the local user's terminal view of st.
func newCLISchedules(st *store.ScheduleStore) cliSchedules {
	uid := cliUserID()
	return cliSchedules{renewingStore: renewingStore{st}, st: st,
		thread: kairos.ThreadKey(kairos.ChannelCLI, kairos.ChatDM, uid, uid, 0)}
}

// startChatSchedules delivers the terminal's reminders, tasks and
// watching cells to the terminal while `kairos chat` runs.
func (m *Main) startChatSchedules(ctx context.Context, c *core, out *terminal) {
	r := schedules.NewRunner(schedules.Config{
		Store: newCLISchedules(c.sched.store), Now: c.now, Logger: c.log.With("component", "schedules"),
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

func (m *Main) deliverToTerminal(ctx context.Context, c *core, out *terminal, d schedules.Delivery) error {
	s, f := d.Schedule, d.Firing
	due := schedtool.Label(f.DueAt, s.TZ)
	late := ""
	if d.Late >= schedules.LateNote {
		late = fmt.Sprintf(" (late by %s: I was not running at %s)", roundLate(d.Late), due)
	}
	if d.Missed {
		return out.Final(ctx, fmt.Sprintf("Missed %s (due %s, while I was not running): %s", kairos.KindLabel(s.Kind), due, schedtool.ViewOf(s).Text))
	}
	switch s.Kind {
	case kairos.ScheduleTask:
		release, err := out.takeTurn(ctx, func() { c.log.Info("scheduled task waits for the terminal's turn", "firing", f.ID) })
		if err != nil {
			return err
		}
		defer release()
		in := cliMessage("(Scheduled task the user set earlier; answer it now.) "+s.Task, c.now())
		tr := &taskReplier{}
		if err := c.sched.taskAgent.HandleMessage(ctx, in, tr); err != nil {
			return err
		}
		return out.Final(ctx, "Scheduled task ("+due+"):\n\n"+tr.text+late)
	case kairos.ScheduleCell:
		note, err := m.runWatchingCell(ctx, c, s, f)
		if err != nil || note == "" {
			return err
		}
		return out.Final(ctx, "🔔 "+note+late)
	}
	return out.Final(ctx, "⏰ "+s.Text+late)
}

// botSchedules is the schedule store as `kairos run` sees it: the
// terminal's schedules and their firings wait for `kairos chat`, which
// delivers them (the bot once leased them too, and failed them: a
// terminal thread cannot receive a Telegram message).
type botSchedules struct {
	renewingStore
	st *store.ScheduleStore
}

func (s botSchedules) LeaseFirings(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*kairos.Firing, error) {
	return s.st.LeaseFiringsIn(ctx, now, lease, limit, store.FiringScope{NotChannel: kairos.ChannelCLI})
}

// renewingStore is the schedule store with its RenewFiringLease (and
// ReturnFiring) kept in view: a wrapper embedding kairos.ScheduleStore alone hides it, so the
// runner never renewed a lease and a firing held past the 30 s lease
// could go to another process and a task run twice. Both `kairos run`'s
// and `kairos chat`'s views embed it.
type renewingStore struct {
	kairos.ScheduleStore
}

var (
	_ schedules.LeaseRenewer = botSchedules{}
	_ schedules.LeaseRenewer = cliSchedules{}
)

// RenewFiringLease is the store's (schedules.LeaseRenewer).
func (s renewingStore) RenewFiringLease(ctx context.Context, id int64, until time.Time) (bool, error) {
	lr, ok := s.ScheduleStore.(schedules.LeaseRenewer)
	if !ok {
		return false, nil
	}
	return lr.RenewFiringLease(ctx, id, until)
}

// ReturnFiring is the store's (schedules.LeaseRenewer).
func (s renewingStore) ReturnFiring(ctx context.Context, id int64, attempts int, now time.Time) error {
	lr, ok := s.ScheduleStore.(schedules.LeaseRenewer)
	if !ok {
		return nil
	}
	return lr.ReturnFiring(ctx, id, attempts, now)
}

func (s botSchedules) DueSchedules(ctx context.Context, now time.Time, limit int) ([]*kairos.Schedule, error) {
	all, err := s.ScheduleStore.DueSchedules(ctx, now, limit)
	out := all[:0]
	for _, sc := range all {
		if !strings.Contains(sc.ThreadKey, ":"+kairos.ChannelCLI+":") {
			out = append(out, sc)
		}
	}
	return out, err
}
