package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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
	// firings composes what a firing says, for every door (package desk).
	firings *desk.Firings
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
	clocks := store.NewClockStore(c.db)
	p.tool = schedtool.New(schedtool.Config{
		Store: p.store, Policy: c.policy, Logger: c.log, Wake: p.wake,
		Zone: func(ctx context.Context, inv *kairos.ToolInvocation) (string, error) {
			return p.knownZone(ctx, clocks, inv)
		},
		Parse: func(text, tz string, ref time.Time) schedtool.Parsed {
			r := clockstate.ParseAnchoredTime(text, tz, ref)
			return schedtool.Parsed{Start: r.Start, Floating: r.Kind == clockstate.KindFloating, NeedsClarification: r.NeedsClarification, ClarificationQuestion: r.ClarificationQuestion, Repeat: r.Repeat}
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
		Deliver:       func(ctx context.Context, d schedules.Delivery) (int64, error) { return m.deliverSchedule(ctx, c, b, d) },
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

// deliverSchedule sends one firing to its thread, once (outbox key
// schedule:<firing id>). A task is a turn of its thread: it runs in the
// chat's turn order (bot.InChat), after the turn under way and before
// the messages that arrive meanwhile, so it sees that turn's answer and
// no turn runs beside it. Reminders, cells and missed reports are
// notices, not turns: they are sent at their time without waiting.
func (m *Main) deliverSchedule(ctx context.Context, c *core, b *bot.Bot, d schedules.Delivery) (int64, error) {
	chat, topic, ok := schedtool.ChatOf(d.Schedule.ThreadKey)
	if !ok {
		return 0, kairos.Errorf(kairos.EINVALID, "thread %s cannot receive scheduled messages", d.Schedule.ThreadKey)
	}
	if d.Schedule.Kind != kairos.ScheduleTask || d.Missed {
		return m.sendFiring(ctx, c, b, d, chat, topic)
	}
	var id int64
	var err error
	if qerr := b.InChat(ctx, chat, func(ctx context.Context) { id, err = m.sendFiring(ctx, c, b, d, chat, topic) }); qerr != nil {
		return 0, qerr
	}
	return id, err
}

// sendFiring composes one firing at the desk and sends it, unless an
// earlier attempt got as far as sending it.
func (m *Main) sendFiring(ctx context.Context, c *core, b *bot.Bot, d schedules.Delivery, chat, topic int64) (int64, error) {
	key := fmt.Sprintf("schedule:%d", d.Firing.ID)
	if st, id, err := c.updates.OutboxState(ctx, key+":0"); err == nil && st != kairos.OutboxNew {
		return id, nil // an earlier attempt got as far as sending
	}
	addr := desk.Address{Channel: kairos.ChannelTelegram, Surface: kairos.SurfaceScheduled, ChatID: chat, TopicID: topic,
		UserID: d.Schedule.UserID, ChatKind: kairos.ChatDM}
	if strings.Contains(d.Schedule.ThreadKey, ":group:") {
		addr.ChatKind = kairos.ChatGroup
	}
	out, err := c.sched.firings.Compose(ctx, d, addr)
	if err != nil || out == nil {
		return 0, err
	}
	return b.SendScheduled(ctx, key, chat, topic, out.Text, out.Buttons)
}

// runWatchingCell runs a watching cell under the MONITOR budgets and
// records it like every cell; it returns the notification, if any.
func (m *Main) runWatchingCell(ctx context.Context, c *core, s *kairos.Schedule, f *kairos.Firing) (string, error) {
	p := c.policy()
	if !p.Features.CLIExec { // seed 004: with code cells off, watching cells do not run (and are not retried)
		c.log.Info("watching cell not run: features.cli_exec is false", "schedule", s.ID)
		return "", nil
	}
	// GET only unless its create was approved as code.network_write; a
	// cell from a tainted turn never writes (NetWrite is never set).
	task := &kairos.CellTask{Code: s.Code, Verb: kairos.VerbMonitor, Budget: codetool.BudgetFor(p, kairos.VerbMonitor),
		Network: codetool.CellGrant(p, s.NetWrite && !s.Tainted), Now: c.now()}
	res, err := c.runner.Run(ctx, task)
	if err != nil {
		return "", err
	}
	rec := &kairos.CodeExecution{ID: res.ID, Code: s.Code, Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode,
		DurationMS: res.Duration.Milliseconds(), Success: res.Success, UserKey: kairos.UserKey(kairos.ChannelTelegram, s.UserID),
		TriggerMessage: fmt.Sprintf("schedule %d (firing %d)", s.ID, f.ID), ErrorCategory: res.ErrorCategory, Verb: kairos.VerbMonitor,
		Result: string(res.Output), CreatedAt: c.now()}
	if err := c.code.RecordExecution(ctx, rec); err != nil {
		c.log.Warn("record watching cell", "err", err)
	}
	var out struct {
		Notify string `json:"notify"`
	}
	if len(res.Output) > 0 && json.Unmarshal(res.Output, &out) == nil {
		return strings.TrimSpace(out.Notify), nil
	}
	return "", nil
}

// remindersCommand is /reminders: the user's schedules with their next
// runs in the user's zone and a Cancel button each.
func (m *Main) remindersCommand(ctx context.Context, c *core, in *kairos.Inbound) (string, error) {
	if !c.policy().Schedules.Enabled {
		return "Reminders are turned off by the operator.", nil
	}
	c.sched.mu.Lock()
	b := c.sched.bot
	c.sched.mu.Unlock()
	// The user's schedules of this thread: in a group, that group's only.
	list, err := c.sched.store.Schedules(ctx, kairos.ScheduleFilter{UserID: in.UserID, ThreadKey: in.ThreadKey(), Limit: 50})
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "You have no reminders or scheduled tasks.", nil
	}
	tz := ""
	if pz, err := c.sched.provider.SessionTimezone(ctx, in.ThreadKey()); err == nil {
		tz = pz
	}
	var sb strings.Builder
	var rows [][]bot.Button
	sb.WriteString("Your schedules:\n")
	for i, s := range list {
		zone := s.TZ
		if tz != "" {
			zone = tz
		}
		fmt.Fprintf(&sb, "%d. %s — %s: %s", i+1, schedtool.Label(s.NextRun, zone), s.Kind, schedtool.ViewOf(s).Text)
		if s.Repeat != "" {
			fmt.Fprintf(&sb, " (%s)", s.Repeat)
		}
		sb.WriteString("\n")
		rows = append(rows, []bot.Button{{Text: fmt.Sprintf("Cancel %d", i+1), Data: bot.ScheduleButtonPrefix + "cancel:" + s.PublicID()}})
	}
	if b == nil || in.Channel != kairos.ChannelTelegram {
		return sb.String(), nil
	}
	if _, err := b.SendWithButtons(ctx, in, sb.String(), rows); err != nil {
		return "", err
	}
	return "", nil
}

// runSchedule is `kairos schedule list [--user ID]`.
func (m *Main) runSchedule(ctx context.Context, user int64) error {
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
