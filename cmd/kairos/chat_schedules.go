package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/schedules"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// cliSchedules is the schedule store as `kairos chat` sees it: only the
// terminal's own schedules come due here (a bot sharing the database
// keeps its Telegram ones), and only the firings this process claimed
// are delivered here (never one another process leased).
type cliSchedules struct {
	renewingStore
	mu      *sync.Mutex
	claimed *[]*kairos.Firing
}

func (s cliSchedules) ClaimFiring(ctx context.Context, sc *kairos.Schedule, adv kairos.Advance, now time.Time) (*kairos.Firing, error) {
	f, err := s.ScheduleStore.ClaimFiring(ctx, sc, adv, now)
	if f != nil {
		s.mu.Lock()
		*s.claimed = append(*s.claimed, f)
		s.mu.Unlock()
	}
	return f, err
}

func (s cliSchedules) DueSchedules(ctx context.Context, now time.Time, limit int) ([]*kairos.Schedule, error) {
	all, err := s.ScheduleStore.DueSchedules(ctx, now, limit)
	out := all[:0]
	for _, sc := range all {
		if strings.Contains(sc.ThreadKey, ":"+kairos.ChannelCLI+":") {
			out = append(out, sc)
		}
	}
	return out, err
}

func (s cliSchedules) LeaseFirings(context.Context, time.Time, time.Duration, int) ([]*kairos.Firing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := *s.claimed
	*s.claimed = nil
	return fs, nil
}

// startChatSchedules delivers the terminal's reminders, tasks and
// watching cells to the terminal while `kairos chat` runs.
func (m *Main) startChatSchedules(ctx context.Context, c *core, out *terminal) {
	r := schedules.NewRunner(schedules.Config{
		Store: cliSchedules{renewingStore: renewingStore{c.sched.store}, mu: &sync.Mutex{}, claimed: new([]*kairos.Firing)}, Now: c.now, Logger: c.log.With("component", "schedules"),
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
// terminal's schedules wait for `kairos chat`, which delivers them.
type botSchedules struct {
	renewingStore
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
