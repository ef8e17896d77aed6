package main

import (
	"context"
	"flag"
)

// The operator's commands (their code is in ops.go, schedules.go, mcp.go).
func init() {
	register(Command{Name: "migrate", Short: "apply pending database migrations and exit",
		Long:   "Applies every migration the database lacks, in order, each in a transaction. `run` and `chat` do this at start too.",
		Config: true, Run: func(ctx context.Context, m *Main, _ *Invocation) error { return m.runMigrate(ctx) }})
	register(Command{Name: "version", Short: "print the version, the commit and its time (from the binary's build info)",
		Run: func(ctx context.Context, m *Main, _ *Invocation) error { return m.runVersion() }})
	register(Command{Name: "policy check", Usage: "[FILE]", Short: "validate a policy file (default KAIROS_POLICY)",
		Long: `Prints FILE: ok, or one file:line:col: message line per problem and exits 1.
With no FILE and no file at the default KAIROS_POLICY (./policy.yaml), the
built-in defaults apply, as for kairos run: it says so and checks them (exit 0).`,
		Args:   Args{Max: 1},
		Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runPolicy(ctx, argOr(inv, 0, m.Config.PolicyPath), len(inv.Args) > 0)
		}})
	register(Command{Name: "clock export", Usage: "[--force] [FILE]", Short: "write the clock state (CLOCK.md §10.2, version 3) as JSON",
		Long: `Without FILE the JSON goes to stdout; with FILE it is written atomically (0600,
temporary file renamed into place). An existing FILE is kept unless --force.
Reads the database read-only.`,
		Flags: func(fs *flag.FlagSet) { fs.Bool("force", false, "replace FILE if it exists") },
		Args:  Args{Max: 1}, Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runClockExport(ctx, argOr(inv, 0, ""), inv.Bool("force"))
		}})
	register(Command{Name: "clock import", Usage: "FILE", Short: "read clock state from JSON (the export's schema)",
		Args: Args{Min: 1, Max: 1}, Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runClockImport(ctx, inv.Args[0])
		}})
	register(Command{Name: "clock parse", Usage: "TEXT [--tz IANA] [--at RFC3339]",
		Short: "parse a time expression as parse_anchored_time does",
		Long: `Prints the ParseResult as JSON: {"kind": "absolute"|"relative"|"floating"|"invalid",
"start", "end", "repeat", "needs_clarification", "clarification_question", "assumptions"}
(assumptions: what was read into the text, e.g. a typo taken for a word).
Without --tz nothing anchors floating times; --at defaults to now.`,
		Flags: func(fs *flag.FlagSet) {
			fs.String("tz", "", "IANA time zone that anchors floating times")
			fs.String("at", "", "reference instant (RFC3339), default now")
		},
		Args: Args{Min: 1, Max: -1}, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.clockParse(inv.String("tz"), inv.String("at"), inv.Args)
		}})
	register(Command{Name: "cell run", Usage: "FILE.js", Short: "run one code cell under the policy's budgets and print its result as JSON",
		Long: "The cell gets the policy's budgets and network grant and, with features.credentials_access, every KAIROS_SECRET_*. Exit 1 when the cell fails; exit 2 when features.cli_exec is false (code cells are off).",
		Args: Args{Min: 1, Max: 1}, Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runCell(ctx, inv.Args[0])
		}})
	register(Command{Name: "backup", Usage: "FILE", Short: "write a consistent copy of the SQLite database",
		Long: `Copies KAIROS_DATA_DIR/kairos.db with VACUUM INTO while the bot runs. FILE is
written 0600 and never replaced; with no database there is nothing to back up
(exit 1). PostgreSQL: use pg_dump.`,
		Args: Args{Min: 1, Max: 1}, Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runBackup(ctx, inv.Args[0])
		}})
	register(Command{Name: "access allow", Usage: "ID [--operator]", Short: "admit a Telegram user (--operator: make them an operator)",
		Long:  "With --operator the user becomes an operator: the way back, on the host, when no operator is left.",
		Flags: func(fs *flag.FlagSet) { fs.Bool("operator", false, "make the user an operator") },
		Args:  Args{Min: 1, Max: 1}, Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runAccess(ctx, []string{"allow", inv.Args[0]}, accessOpts{operator: inv.Bool("operator")})
		}})
	register(Command{Name: "access deny", Usage: "ID [--force]", Short: "remove a user's database grant (not the policy file's)",
		Long:  "The last operator is kept unless --force (without one nobody can pair users; `kairos access allow ID --operator` makes one).",
		Flags: func(fs *flag.FlagSet) { fs.Bool("force", false, "remove the last operator too") },
		Args:  Args{Min: 1, Max: 1}, Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runAccess(ctx, []string{"deny", inv.Args[0]}, accessOpts{force: inv.Bool("force")})
		}})
	register(Command{Name: "access list", Short: "list admitted users and where each grant comes from (policy file, database, pairing)", Config: true,
		Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runAccess(ctx, []string{"list"}, accessOpts{})
		}})
	register(Command{Name: "schedule list", Usage: "[--user ID]", Short: "the pending reminders, tasks and watching cells as JSON",
		Flags:  func(fs *flag.FlagSet) { fs.Int64("user", 0, "only this Telegram user id") },
		Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runSchedule(ctx, inv.Int64("user"))
		}})
	register(Command{Name: "mcp check", Usage: "[FILE]", Short: "connect to every MCP server the policy lists and print what it offers",
		Long: "FILE defaults to KAIROS_POLICY. Exit 1 when a server failed, 2 when the policy is invalid.",
		Args: Args{Max: 1}, Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runMCP(ctx, argOr(inv, 0, m.Config.PolicyPath))
		}})
}

// argOr is the i-th argument, or def when there is none.
func argOr(inv *Invocation, i int, def string) string {
	if i < len(inv.Args) {
		return inv.Args[i]
	}
	return def
}
