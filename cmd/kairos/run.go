package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/policy"
	"github.com/kairos-agent/kairos/store"
)

// drainTimeout bounds how long SIGTERM waits for turns in flight.
const drainTimeout = 20 * time.Second

// runBot is `kairos run`: the core, the bot on top of it, the background
// work, the HTTP server, then updates until ctx ends.
//
// What a start fails on is tried first, before anything starts or logs
// (start.go): the HTTP address, then Telegram's word on the token.
func (m *Main) runBot(ctx context.Context) error {
	start := time.Now()
	ln, err := m.preflight(ctx)
	if err != nil {
		return err
	}
	c, err := m.openCore(ctx)
	if err != nil {
		return err
	}
	b, err := m.newBot(ctx, c)
	if err != nil {
		return err
	}
	if err := m.startBackground(ctx, c, b); err != nil {
		return err
	}
	addr, err := m.serveHTTP(c, b, ln)
	if err != nil {
		return err
	}
	c.log.Info("kairos started", "version", kairos.Version, "http", addr,
		"mode", map[bool]string{true: "webhook", false: "polling"}[m.Config.WebhookURL != ""], "startup", time.Since(start).Round(time.Millisecond))
	if m.Started != nil {
		m.Started(addr)
	}
	return m.receive(ctx, c, b)
}

// newBot makes the Telegram bot over the core and attaches it to the parts
// that talk to the operators and users on their own.
func (m *Main) newBot(ctx context.Context, c *core) (*bot.Bot, error) {
	b, err := bot.New(bot.Config{
		Token: m.Config.TelegramToken, APIURL: m.Config.TelegramAPIURL,
		Handler: c.desk, Menu: func() []desk.MenuEntry { return c.desk.Table().Menu(c.policy()) }, Policy: c.policy,
		Access: c.updates, Updates: c.updates, Settings: c.updates,
		Approvals: c.updates, Resume: c.agent.Resume, Names: store.NewDirectory(c.db),
		ScheduleButton: c.sched.reminders.Button,
		Claim: func(ctx context.Context, userID int64, code string) (string, bool) {
			return m.claim(ctx, c, userID, code)
		},
		SkillButton: c.skills.panel.Button, GrantButton: c.grantDesk.Button, ParkApprovals: true,
		Workers: m.Config.Workers, Metrics: c.metrics, Logger: c.log,
		SharedOrder: m.Config.DatabaseURL != "", ReplicaID: replicaID(m.Config),
		Limits: map[bool]bot.Limits{true: bot.Unlimited}[m.Config.SendLimitsOff],
	})
	if err != nil {
		return nil, usagef("%s", kairos.ErrorMessage(err))
	}
	c.mu.Lock()
	c.onPolicyError = func(perr error) { m.notifyOperators(ctx, c, b, perr) }
	c.tellOperators = func(ctx context.Context, text string) { m.tellOperators(ctx, c, b, text) }
	c.mu.Unlock()
	c.desk.Table().Add(b.PairCommand())
	c.attachUsageNotices(b)
	c.skills.setBot(b)
	return b, nil
}

// startBackground offers the claim code, starts the jobs (stopped on close)
// and the schedules, probes the search provider and the model endpoint
// (in the background: start is not delayed) and keeps the database's
// operators current.
func (m *Main) startBackground(ctx context.Context, c *core, b *bot.Bot) error {
	if err := m.offerClaim(ctx, c); err != nil {
		return err
	}
	if err := c.jobs.Start(ctx); err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	m.startSchedules(ctx, c, b)
	go m.probeSearch(ctx, c)
	go m.probeModel(ctx, c)
	go m.watchOperators(ctx, c)
	m.onClose(func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return c.jobs.Stop(sctx)
	})
	return nil
}

// serveHTTP serves health, metrics, the webhook and the web pages on
// KAIROS_HTTP_ADDR (shut down on close) and returns the address it listens on.
func (m *Main) serveHTTP(c *core, b *bot.Bot, ln net.Listener) (string, error) {
	mux := c.adminMux()
	m.servePprof(mux)
	if m.Config.WebhookURL != "" {
		mux.Handle("POST "+bot.WebhookPath, b.WebhookHandler(m.Config.WebhookSecret))
	}
	m.webSrv.Store(m.serveWeb(c, b, mux, ln))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	m.onClose(func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	return ln.Addr().String(), nil
}

// receive takes updates (by webhook or polling) until ctx ends, then drains
// the turns in flight.
func (m *Main) receive(ctx context.Context, c *core, b *bot.Bot) error {
	if m.Config.WebhookURL != "" {
		if err := b.StartWebhook(ctx, m.Config.WebhookURL, m.Config.WebhookSecret); err != nil {
			return fmt.Errorf("webhook: %w", err)
		}
		<-ctx.Done()
		b.Shutdown(drainTimeout)
		return nil
	}
	if err := b.Run(ctx, drainTimeout); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	c.log.Info("kairos stopped")
	return nil
}

// replicaID names this process among replicas sharing the database:
// KAIROS_REPLICA_ID, else the host name and a digest of the data
// directory — distinct for replicas on different hosts or data
// directories, the same when one restarts, so it takes its unfinished
// updates and the poll lease back at once instead of after their TTL.
func replicaID(cfg Config) string {
	if cfg.ReplicaID != "" {
		return cfg.ReplicaID
	}
	host, _ := os.Hostname()
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		dir = cfg.DataDir
	}
	sum := sha256.Sum256([]byte(dir))
	return host + "-" + hex.EncodeToString(sum[:4])
}

// tellOperators sends text to every operator.
func (m *Main) tellOperators(ctx context.Context, c *core, b *bot.Bot, text string) {
	for _, id := range c.policy().Access.Operators {
		if err := b.Notify(ctx, id, text); err != nil {
			c.log.Warn("notify operator", "operator", id, "err", err)
		}
	}
}

// notifyOperators tells every operator that a policy edit was rejected.
func (m *Main) notifyOperators(ctx context.Context, c *core, b *bot.Bot, perr error) {
	text := "Policy reload rejected; the last good policy stays in force:\n```\n" + perr.Error() + "\n```"
	for _, id := range c.policy().Access.Operators {
		if err := b.Notify(ctx, id, text); err != nil {
			c.log.Warn("notify operator", "operator", id, "err", err)
		}
	}
}

// commands is the desk's command table: every door (Telegram, the
// terminal, the API) serves these; /help and /start come from the table.
func (m *Main) commands(c *core) *desk.Table {
	t := desk.NewTable()
	u := c.usageDesk()
	t.Add(m.baseCommands(c, u)...)
	m.addMediaCommands(c, t)
	m.addMCPCommands(c, t)
	t.Add(consoleCommand(m.webSrv.Load))
	t.Add(u.Command())
	m.addResearchCommands(c, t)
	t.Add(c.sched.reminders.Command(), c.skills.panel.Command(), c.grantDesk.Command())
	return t
}

func (m *Main) baseCommands(c *core, u *desk.Usage) []desk.Command {
	b := &desk.Basics{EndSession: c.jobs.Sessions().End, Code: c.code, Skills: c.skills.panel, Memories: c.memories,
		Clock: c.clock.ClockCommand, Mode: c.agent.ModeCommand, Now: c.now,
		CodeChart: u.CodeChart,
		PolicyText: func() string {
			text := policy.Summary(c.policy())
			if c.watcher != nil {
				text += "\n" + policy.StatusLine(c.watcher.LastReload())
			}
			return text
		}}
	return b.Commands()
}
