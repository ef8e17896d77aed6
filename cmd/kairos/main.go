// Command kairos is the Kairos agent: a Telegram bot (kairos run), the same
// pipeline on a terminal (kairos chat) and the operator's tools (migrate,
// policy check, clock, cell run, backup, access, schedule list).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain()
	os.Exit(m.Main(ctx, os.Args[1:]))
}

// Main runs one sub-command; end-to-end tests build a Main with their own
// environment and streams and call Main (or ParseFlags and Run).
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Environ        func() []string

	Config Config
	inv    *Invocation

	// Started, when set, is called once `run` serves (tests wait on it).
	Started func(httpAddr string)
	// SandboxCacheDir, when set, replaces KAIROS_DATA_DIR/wazero-cache as
	// the cells' compilation cache (tests share one warmed cache).
	SandboxCacheDir string
	// Now, when set, replaces the wall clock of the core (schedules, the
	// clock wrapper, the background jobs); tests inject time with it.
	Now func() time.Time
	// Cells, when set, runs the code cells instead of a sandbox of this
	// Main's own (tests share one warm engine across many Mains).
	Cells kairos.CodeRunner

	// logTo, when set, takes the log lines instead of Stderr (kairos chat
	// without -v writes them to a file: the terminal is the chat).
	logTo io.Writer

	closers []func() error
	// webSrv is the query API and console once `run` serves them.
	webSrv atomic.Pointer[web.Server]
}

// NewMain returns a Main wired to the process.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ}
}

// UsageError is a mistake in the command line or the configuration; it
// exits with status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

// Main parses, runs and closes, returning the exit status: 0 ok, 1 runtime
// failure, 2 usage or configuration error.
func (m *Main) Main(ctx context.Context, args []string) int {
	err := m.ParseFlags(ctx, args)
	if err == nil {
		err = m.Run(ctx)
	}
	if cerr := m.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil || errors.Is(err, context.Canceled) {
		return 0
	}
	var qe *quietError
	if errors.As(err, &qe) {
		return qe.code
	}
	msg := err.Error()
	if code := kairos.ErrorCode(err); code != kairos.EINTERNAL {
		msg = kairos.ErrorMessage(err) // the sentence, not "kairos error: code=…"
	}
	fmt.Fprintln(m.Stderr, "kairos:", msg)
	var ue *UsageError
	if errors.As(err, &ue) || kairos.ErrorCode(err) == kairos.EUNAUTHORIZED {
		return 2 // a usage or configuration error (a refused token is one)
	}
	return 1
}

func init() {
	register(Command{Name: "run", Short: "the Telegram bot (long polling, or webhook when KAIROS_WEBHOOK_URL is set)",
		Long: `Runs the bot until SIGINT or SIGTERM (turns in flight are finished first).
It also serves the admin HTTP endpoints on KAIROS_HTTP_ADDR (/healthz, /readyz,
/metrics, and the webhook path). Pending migrations are applied at start.
Needs TELEGRAM_BOT_TOKEN.`,
		Config: true, Run: func(ctx context.Context, m *Main, _ *Invocation) error {
			if m.Config.TelegramToken == "" {
				return usagef("TELEGRAM_BOT_TOKEN is required by `kairos run` (the bot's token from @BotFather)")
			}
			if m.Config.WebhookURL != "" && m.Config.WebhookSecret == "" {
				return usagef("KAIROS_WEBHOOK_SECRET is required when KAIROS_WEBHOOK_URL is set")
			}
			return m.runBot(ctx)
		}})
}

// ParseFlags reads the command line and, for the commands that need it,
// the environment. After a help text it returns nil and Run does nothing.
func (m *Main) ParseFlags(ctx context.Context, args []string) error {
	inv, err := m.parseCommand(args)
	if inv == nil || err != nil {
		return err
	}
	m.inv = inv
	if !inv.Cmd.Config {
		return nil
	}
	cfg, err := LoadConfig(m.Getenv, m.Environ)
	if err != nil {
		return err
	}
	m.Config = cfg
	return nil
}

// Run executes the parsed command.
func (m *Main) Run(ctx context.Context) error {
	if m.inv == nil {
		return nil
	}
	if m.inv.Cmd.Config {
		if err := m.startCPUProfile(); err != nil {
			return err
		}
	}
	return m.inv.Cmd.Run(ctx, m, m.inv)
}

// Close releases what Run opened, last opened first.
func (m *Main) Close() error {
	var errs []error
	for i := len(m.closers) - 1; i >= 0; i-- {
		if err := m.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	m.closers = nil
	return errors.Join(errs...)
}

func (m *Main) onClose(f func() error) { m.closers = append(m.closers, f) }
