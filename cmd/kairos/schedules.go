package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/clockstate"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/schedules"
	"github.com/kairos-agent/kairos/store"
	codetool "github.com/kairos-agent/kairos/tools/code"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// scheduleParts are the schedule store, tool and (once the bot runs)
// the runner of a core.
type scheduleParts struct {
	store  *store.ScheduleStore
	tool   *schedtool.Tool
	mu     sync.Mutex
	runner *schedules.Runner
	bot    *bot.Bot

	provider  *clockstate.Provider
	taskAgent *agent.Agent
	// firings composes what a firing says, for every door (package desk);
	// reminders answers /reminders and the schedules' buttons.
	firings   *desk.Firings
	reminders *desk.Reminders
}

// newTaskAgent is the agent scheduled tasks run with: the same
// configuration as the chat's; its turns are TurnTask, so the registry
// offers them no tool when schedules.tasks_may_use_tools is false.
func newTaskAgent(cfg agent.Config) *agent.Agent { return agent.New(cfg) }

func (p *scheduleParts) wake() {
	p.mu.Lock()
	r := p.runner
	p.mu.Unlock()
	if r != nil {
		r.Wake()
	}
}

// newSchedules builds the schedule store and tool of c.
func newSchedules(c *core, provider *clockstate.Provider) *scheduleParts {
	p := &scheduleParts{store: store.NewScheduleStore(c.db), provider: provider}
	p.reminders = &desk.Reminders{Store: p.store, Policy: c.policy, Wake: p.wake, Now: c.now,
		Zone: func(ctx context.Context, thread string) string {
			tz, _ := provider.SessionTimezone(ctx, thread)
			return tz
		}}
	clocks := store.NewClockStore(c.db)
	p.tool = schedtool.New(schedtool.Config{
		Store: p.store, Policy: c.policy, Logger: c.log, Wake: p.wake,
		Zone: func(ctx context.Context, inv *kairos.ToolInvocation) (string, error) {
			return p.knownZone(ctx, clocks, inv)
		},
		Parse: func(text, tz string, ref time.Time) schedtool.Parsed {
			r := clockstate.ParseAnchoredTime(text, tz, ref)
			return schedtool.Parsed{Start: r.Start, End: r.End, DayOnly: r.DayOnly, Floating: r.Kind == clockstate.KindFloating, NeedsClarification: r.NeedsClarification,
				ClarificationQuestion: r.ClarificationQuestion, Repeat: r.Repeat, Assumptions: r.Assumptions}
		},
		ParseRepeat: func(s string) (schedtool.Repeat, error) {
			r, err := schedules.ParseRepeat(s)
			return schedtool.Repeat(r), err
		},
		Occurrences:  schedules.Occurrences,
		ClassifyCell: func(code string) (bool, string) { return codetool.CellWrites(c.policy(), code) },
		Inspect: func(ctx context.Context, rule string, start time.Time) (schedtool.Shape, error) {
			sh, err := schedules.Inspect(ctx, rule, start)
			return schedtool.Shape{RRule: sh.RRule, MinGap: sh.MinGap}, err
		},
	})
	return p
}

// knownZone is the zone a schedule of inv's user is set in: the thread's
// or the user's stored zone, else one the turn's message states (the
// answer to ZoneQuestion), which is then kept as their zone; "" when
// only the UTC fallback is left.
func (p *scheduleParts) knownZone(ctx context.Context, clocks *store.ClockStore, inv *kairos.ToolInvocation) (string, error) {
	st, err := clocks.LoadClockState(ctx, inv.UserKey, inv.ThreadKey)
	if err != nil {
		return "", err
	}
	if res := clockstate.ResolveSessionTZ("", st.Thread.SessionTZ, st.User.DefaultTZ, nil, inv.Now); res.Source != clockstate.TZFromFallback {
		return res.TZ, nil
	}
	res := clockstate.ResolveSessionTZ(inv.TriggerMessage, "", "", nil, inv.Now)
	if res.Source != clockstate.TZFromMessage && res.Source != clockstate.TZFromLocation || !clockstate.ValidTZ(res.TZ) {
		return "", nil
	}
	tz := res.TZ
	patch := kairos.ClockPatch{DefaultTZ: &tz}
	if inv.ChatKind == kairos.ChatDM {
		patch.SessionTZ = &tz
	}
	if err := clocks.SaveClockState(ctx, inv.UserKey, inv.ThreadKey, patch); err != nil {
		return "", err
	}
	return tz, nil
}

// startSchedules runs the schedule runner until ctx ends.
func (m *Main) startSchedules(ctx context.Context, c *core, b *bot.Bot) {
	r := schedules.NewRunner(schedules.Config{
		Store: botSchedules(c.sched.store), Now: c.now, Logger: c.log.With("component", "schedules"),
		Workers:       m.Config.Workers, // as many deliveries at once as turns (a task holds one of each)
		LateThreshold: func() time.Duration { return c.policy().Schedules.LateThreshold.Approx() },
		Deliver:       c.sched.firings.Deliver(b),
		ZoneFor: func(ctx context.Context, s *kairos.Schedule) string {
			if c.policy().Schedules.Travel != kairos.TravelFollowUser {
				return ""
			}
			tz, err := c.sched.provider.SessionTimezone(ctx, s.ThreadKey)
			if err != nil {
				return ""
			}
			return tz
		},
	})
	c.sched.mu.Lock()
	c.sched.runner, c.sched.bot = r, b
	c.sched.mu.Unlock()
	done := make(chan struct{})
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer close(done)
		for {
			if c.policy().Schedules.Enabled {
				r.Run(rctx, schedules.TickInterval) // returns when rctx ends
				return
			}
			select { // disabled: look again after a policy reload
			case <-rctx.Done():
				return
			case <-time.After(5 * time.Second):
			}
		}
	}()
	go func() { <-ctx.Done(); cancel() }()
	m.onClose(func() error { cancel(); <-done; return nil })
}

// runSchedule is `kairos schedule list [--user ID]`.
func (m *Main) runSchedule(ctx context.Context, user int64) error {
	if m.saidNoDatabase() {
		_, err := fmt.Fprintln(m.Stdout, "[]")
		return err
	}
	db, err := m.openStoreRO(ctx, m.logger())
	if err != nil {
		return err
	}
	list, err := store.NewScheduleStore(db).Schedules(ctx, kairos.ScheduleFilter{UserID: user, Limit: 100000})
	if err != nil {
		return err
	}
	out := make([]schedtool.View, 0, len(list))
	for _, s := range list {
		out = append(out, schedtool.ViewOf(s))
	}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
