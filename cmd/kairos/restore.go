package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
)

// `kairos backup check FILE` and `kairos restore FILE` go with `kairos
// backup` (ops.go): restic's check and restore, for the one SQLite file.
func init() {
	register(Command{Name: "backup check", Usage: "FILE", Short: "check a backup file: SQLite's integrity check and its schema version",
		Long: `Reads FILE read-only (nothing is created or changed, not even a lock file):
SQLite's integrity check, the migrations it records against the ones this
binary knows, and how many messages, memories and schedules it holds.
Exit 1 when FILE is missing, damaged or not a Kairos database.`,
		Args: Args{Min: 1, Max: 1}, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			info, err := store.CheckBackup(ctx, inv.Args[0])
			if err != nil {
				return fmt.Errorf("%s", kairos.ErrorMessage(err))
			}
			fmt.Fprintf(m.Stdout, "%s: ok, %s\n", inv.Args[0], describeBackup(info))
			return nil
		}})
	register(Command{Name: "restore", Usage: "FILE", Short: "put a backup in place of the SQLite database (the current one is kept)",
		Long: `Checks FILE as kairos backup check does, then puts it in place of
KAIROS_DATA_DIR/kairos.db. The database it replaces is kept whole beside it
as kairos.db.before-restore-<time>, never deleted. Stop kairos run and kairos
chat first: while one has the database open nothing is changed (exit 1).
A backup from an older Kairos is restored as it is; kairos migrate (or the
next run) brings its schema up. PostgreSQL: use pg_restore.`,
		Args: Args{Min: 1, Max: 1}, Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runRestore(ctx, inv.Args[0])
		}})
}

func (m *Main) runRestore(ctx context.Context, file string) error {
	if m.Config.DatabaseURL != "" {
		return usagef("KAIROS_DATABASE_URL is set: kairos restore restores the SQLite file; restore PostgreSQL with pg_restore")
	}
	now := time.Now()
	if m.Now != nil {
		now = m.Now()
	}
	kept, info, err := store.Restore(ctx, m.Config.DataDir, file, now)
	if err != nil {
		return fmt.Errorf("%s", kairos.ErrorMessage(err))
	}
	fmt.Fprintf(m.Stdout, "restored %s into %s/kairos.db: %s\n", file, m.Config.DataDir, describeBackup(info))
	if kept != "" {
		fmt.Fprintf(m.Stdout, "the database it replaced is kept as %s\n", kept)
	}
	return nil
}

// describeBackup says what a backup holds and how its schema compares.
func describeBackup(b *store.BackupInfo) string {
	var parts []string
	for _, t := range slices.Sorted(func(yield func(string) bool) {
		for k := range b.Rows {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, fmt.Sprintf("%d %s", b.Rows[t], t))
	}
	schema := fmt.Sprintf("schema version %d", b.Schema())
	switch {
	case len(b.Unknown) > 0:
		schema += fmt.Sprintf(", NEWER than this binary's %d (migrations %v): restore it with the Kairos that wrote it", b.Latest, b.Unknown)
	case b.Schema() < b.Latest:
		schema += fmt.Sprintf(" (this binary's is %d: kairos migrate brings it up)", b.Latest)
	default:
		schema += " (current)"
	}
	return schema + "; " + strings.Join(parts, ", ")
}
