package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/tokens"
	"github.com/kairos-agent/kairos/openai"
	"github.com/kairos-agent/kairos/policy"
	"github.com/kairos-agent/kairos/store"
	searchtool "github.com/kairos-agent/kairos/tools/search"
)

func init() {
	register(Command{Name: "doctor", Usage: "[--timeout DURATION]",
		Short: "check the environment, policy, database, HTTP address, model endpoint, Telegram token and search backend",
		Long: `Prints one line per check: its name, ok, warn, FAIL or skip, and what it saw.
It starts nothing and creates nothing: the database is opened read-only, the
HTTP address is bound and released at once, the model endpoint is asked for
its model list, Telegram for the bot (getMe), SearXNG for one result.

Exit status: 0 when nothing failed (warnings included), 1 when a check
failed, 2 when the environment itself is invalid.`,
		Flags: func(fs *flag.FlagSet) { fs.Duration("timeout", 10*time.Second, "limit for each network check") },
		Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			timeout, _ := time.ParseDuration(inv.String("timeout"))
			return m.runDoctor(ctx, timeout)
		}})
}

// doctor prints the checks' lines and counts the failures.
type doctor struct {
	m       *Main
	timeout time.Duration
	failed  int
}

func (d *doctor) line(check, status, format string, args ...any) {
	if status == "FAIL" {
		d.failed++
	}
	fmt.Fprintf(d.m.Stdout, "%-12s %-5s %s\n", check, status, fmt.Sprintf(format, args...))
}

func (d *doctor) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, d.timeout)
}

func (m *Main) runDoctor(ctx context.Context, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	d := &doctor{m: m, timeout: timeout}
	cfg, err := LoadConfig(m.Getenv, m.Environ)
	if err != nil {
		d.line("environment", "FAIL", "%s", oneLine(err))
		for _, c := range []string{"policy", "database", "http", "model", "telegram", "search"} {
			d.line(c, "skip", "the environment is invalid")
		}
		return &quietError{code: 2}
	}
	m.Config = cfg
	d.line("environment", "ok", "KAIROS_DATA_DIR=%s, KAIROS_POLICY=%s, KAIROS_MODEL=%s at %s", cfg.DataDir, cfg.PolicyPath, cfg.Model, cfg.OpenAIBaseURL)
	d.checkPolicy()
	d.checkDatabase(ctx)
	d.checkHTTP()
	d.checkModel(ctx)
	d.checkTelegram(ctx)
	d.checkSearch(ctx)
	if d.failed > 0 {
		return &quietError{code: 1}
	}
	return nil
}

func (d *doctor) checkPolicy() {
	c := d.m.Config
	res, err := policy.LoadFile(c.PolicyPath)
	switch {
	case err != nil:
		d.line("policy", "FAIL", "%s", oneLine(err))
	case res.Defaults && c.PolicySet:
		d.line("policy", "FAIL", "KAIROS_POLICY=%s: no such file (kairos run refuses to start)", c.PolicyPath)
	case res.Defaults:
		d.line("policy", "ok", "%s: no such file; the built-in defaults apply", c.PolicyPath)
	case len(res.Policy.Access.Operators) == 0:
		d.line("policy", "ok", "%s: valid; no operator in access.operators (the first /start with the claim code makes one)", c.PolicyPath)
	default:
		d.line("policy", "ok", "%s: valid", c.PolicyPath)
	}
}

func (d *doctor) checkDatabase(ctx context.Context) {
	if path := d.m.noDatabase(); path != "" {
		d.line("database", "ok", "none yet at %s: kairos migrate or kairos run creates it", path)
		return
	}
	where := filepath.Join(d.m.Config.DataDir, "kairos.db")
	if d.m.Config.DatabaseURL != "" {
		where = "PostgreSQL"
	}
	applied, err := d.migrations(ctx, where)
	if err != nil {
		d.line("database", "FAIL", "%s", oneLine(err))
		return
	}
	latest := store.LatestMigration()
	switch v := last(applied); {
	case v > latest:
		d.line("database", "FAIL", "%s: schema version %d is newer than this binary's %d: run the Kairos that wrote it", where, v, latest)
	case v < latest:
		d.line("database", "warn", "%s: schema version %d; this binary's is %d (kairos migrate, or the next start, applies the rest)", where, v, latest)
	default:
		d.line("database", "ok", "%s: schema version %d (current)", where, v)
	}
}

// migrations reads the database's applied migrations without leaving a
// file behind: a SQLite file nobody has open (no -wal beside it) is read
// as a backup is (immutable, with SQLite's integrity check); one in use,
// or PostgreSQL, through a read-only connection.
func (d *doctor) migrations(ctx context.Context, path string) ([]int64, error) {
	if _, err := os.Stat(path + "-wal"); d.m.Config.DatabaseURL == "" && errors.Is(err, fs.ErrNotExist) {
		info, err := store.CheckBackup(ctx, path)
		if err != nil {
			return nil, errors.New(kairos.ErrorMessage(err))
		}
		return info.Versions, nil
	}
	db, err := store.Open(ctx, store.Config{DataDir: d.m.Config.DataDir, DatabaseURL: d.m.Config.DatabaseURL,
		Logger: slog.New(slog.DiscardHandler), ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.AppliedMigrations(ctx)
}

func (d *doctor) checkHTTP() {
	ln, err := net.Listen("tcp", d.m.Config.HTTPAddr)
	if err != nil {
		d.line("http", "FAIL", "KAIROS_HTTP_ADDR %s: %v (is kairos run already running?)", d.m.Config.HTTPAddr, err)
		return
	}
	ln.Close()
	d.line("http", "ok", "KAIROS_HTTP_ADDR %s is free", d.m.Config.HTTPAddr)
}

func (d *doctor) checkModel(ctx context.Context) {
	c := d.m.Config
	client := openai.New(openai.Config{BaseURL: c.OpenAIBaseURL, APIKey: c.OpenAIKey, Timeout: d.timeout,
		Logger: slog.New(slog.DiscardHandler), CountTokens: tokens.Count})
	cctx, cancel := d.ctx(ctx)
	defer cancel()
	models, err := client.Models(cctx)
	var pe *kairos.ProviderError
	switch {
	case err == nil:
		for _, mi := range models {
			if mi.ID == c.Model {
				d.line("model", "ok", "%s answers; %s is listed (kairos model check probes what it can do)", c.OpenAIBaseURL, c.Model)
				return
			}
		}
		d.line("model", "warn", "%s answers, but does not list %s among its %d models (KAIROS_MODEL)", c.OpenAIBaseURL, c.Model, len(models))
	case agent.IsAuthFailure(err):
		d.line("model", "FAIL", "%s refused the API key: check OPENAI_API_KEY", c.OpenAIBaseURL)
	case errors.As(err, &pe) && pe.StatusCode != 0:
		d.line("model", "warn", "%s answers, but not to GET /models (%s): kairos model check tries a chat", c.OpenAIBaseURL, probeErr(err))
	default:
		d.line("model", "FAIL", "%s does not answer: %s (OPENAI_BASE_URL)", c.OpenAIBaseURL, probeErr(err))
	}
}

func (d *doctor) checkTelegram(ctx context.Context) {
	c := d.m.Config
	if c.TelegramToken == "" {
		d.line("telegram", "skip", "TELEGRAM_BOT_TOKEN is not set (kairos run needs it; kairos chat does not)")
		return
	}
	cctx, cancel := d.ctx(ctx)
	defer cancel()
	err := bot.CheckToken(cctx, bot.Config{Token: c.TelegramToken, APIURL: c.TelegramAPIURL, Logger: slog.New(slog.DiscardHandler)})
	switch {
	case err == nil:
		d.line("telegram", "ok", "Telegram accepts TELEGRAM_BOT_TOKEN")
	case kairos.ErrorCode(err) == kairos.EUNAUTHORIZED:
		d.line("telegram", "FAIL", "%s", kairos.ErrorMessage(err))
	case cctx.Err() != nil && ctx.Err() == nil:
		d.line("telegram", "FAIL", "%s does not answer within %s (TELEGRAM_API_URL)", c.TelegramAPIURL, d.timeout)
	default:
		d.line("telegram", "FAIL", "%s", kairos.ErrorMessage(err))
	}
}

func (d *doctor) checkSearch(ctx context.Context) {
	c := d.m.Config
	tool, err := searchtool.New(searchtool.Config{Provider: c.SearchProvider, BaseURL: searchBase(c),
		BraveKey: c.BraveKey, TavilyKey: c.TavilyKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		d.line("search", "FAIL", "%s", kairos.ErrorMessage(err))
		return
	}
	if tool.Provider() != searchtool.ProviderSearXNG {
		d.line("search", "ok", "%s: configured; not probed (each query may cost)", tool.Provider())
		return
	}
	cctx, cancel := d.ctx(ctx)
	defer cancel()
	if err := tool.Probe(cctx); err != nil {
		d.line("search", "warn", "SearXNG at %s does not answer (%s): the search tool fails until it does (KAIROS_SEARCH_URL)", c.SearchURL, kairos.ErrorMessage(err))
		return
	}
	d.line("search", "ok", "SearXNG at %s answers", c.SearchURL)
}
