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
	"syscall"
	"time"
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
	cmd    []string

	// Started, when set, is called once `run` serves (tests wait on it).
	Started func(httpAddr string)
	// Now, when set, replaces the wall clock of the core (schedules, the
	// clock wrapper); tests inject time with it.
	Now func() time.Time

	closers []func() error
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
	fmt.Fprintln(m.Stderr, "kairos:", err)
	var ue *UsageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

const usage = `usage: kairos <command> [arguments]

commands:
  run                          the Telegram bot (long polling, or webhook when KAIROS_WEBHOOK_URL is set)
  chat                         the same pipeline on this terminal
  migrate                      apply pending database migrations
  policy check [FILE]          validate a policy file
  clock export [FILE]          write the clock state (CLOCK.md §10.2, version 3) as JSON
  clock import FILE            read clock state from JSON
  clock parse TEXT [--tz IANA] [--at RFC3339]
                               parse a time expression as parse_anchored_time does
  cell run FILE.js             run one code cell under the policy's budgets
  backup FILE                  write a consistent copy of the SQLite database
  access allow|deny ID         admit or remove a Telegram user
  access list                  list admitted users
  schedule list [--user ID]    the pending reminders, tasks and watching cells as JSON
  mcp check [FILE]             connect to every MCP server the policy lists and print what it offers
  version                      print the version

configuration: environment variables, see doc/config.md`

// ParseFlags reads the command line and the environment.
func (m *Main) ParseFlags(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(m.Stderr, usage)
		if len(args) == 0 {
			return usagef("no command given")
		}
		return nil
	}
	m.cmd = args
	cfg, err := LoadConfig(m.Getenv, m.Environ)
	if err != nil {
		return err
	}
	m.Config = cfg
	switch args[0] {
	case "run":
		if cfg.TelegramToken == "" {
			return usagef("TELEGRAM_BOT_TOKEN is required by `kairos run` (the bot's token from @BotFather)")
		}
		if cfg.WebhookURL != "" && cfg.WebhookSecret == "" {
			return usagef("KAIROS_WEBHOOK_SECRET is required when KAIROS_WEBHOOK_URL is set")
		}
	case "chat", "migrate", "version", "policy", "clock", "cell", "backup", "access", "schedule", "mcp":
	default:
		return usagef("unknown command %q\n%s", args[0], usage)
	}
	return nil
}

// Run executes the parsed command.
func (m *Main) Run(ctx context.Context) error {
	if len(m.cmd) == 0 {
		return nil
	}
	args := m.cmd[1:]
	if err := m.startCPUProfile(); err != nil {
		return err
	}
	switch m.cmd[0] {
	case "run":
		return m.runBot(ctx)
	case "chat":
		return m.runChat(ctx)
	case "migrate":
		return m.runMigrate(ctx)
	case "version":
		return m.runVersion()
	case "policy":
		return m.runPolicy(ctx, args)
	case "mcp":
		return m.runMCP(ctx, args)
	case "clock":
		return m.runClock(ctx, args)
	case "cell":
		return m.runCell(ctx, args)
	case "backup":
		return m.runBackup(ctx, args)
	case "access":
		return m.runAccess(ctx, args)
	case "schedule":
		return m.runSchedule(ctx, args)
	}
	return nil
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
