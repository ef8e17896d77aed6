package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/kairos-agent/kairos"
)

// Config wires the scheduler and its jobs. Sessions, Memories and Model
// are required for division and roll-ups; the maintenance hooks are
// optional and their jobs exist only when they are set.
type Config struct {
	Sessions kairos.SessionStore
	Memories kairos.MemoryStore
	// Model writes conversation summaries and roll-ups (no tools).
	Model kairos.Model
	// Models lists the model names to try in order (primary, then
	// fallbacks); nil or empty sends "" (the adapter's default).
	Models func() []string
	// Policy is the policy in force (sessions.*); nil means the defaults.
	Policy func() *kairos.Policy
	// CountTokens counts a text's tokens for a model, to fit a summary's
	// input into the model's window; nil estimates (fit.Estimate).
	CountTokens func(model, text string) int
	// Timezone returns the Session TZ of a thread (and the user who
	// speaks there); nil, or a nil result, means UTC. cmd/kairos wires it
	// to clockstate.
	Timezone func(ctx context.Context, threadKey, userKey string) *time.Location
	// Journal records every job run; nil logs them only.
	Journal kairos.JobStore

	// CompactClock expires and compacts clocked actions (CLOCK.md §10.3);
	// nil leaves the clock.compact job out.
	CompactClock func(ctx context.Context, now time.Time) error
	// Code prunes code executions older than the policy's
	// sessions.code_executions_retention; nil leaves the job out.
	Code ExecutionPruner
	// Prune deletes finished bookkeeping rows and rolls token usage up
	// per day after the policy's sessions.*_retention (maintenance.go);
	// nil leaves the bookkeeping.prune job out.
	Prune kairos.Pruner
	// Backup writes a database backup to path (which does not exist
	// yet); with BackupDir it runs on sessions.backup_schedule.
	Backup     func(ctx context.Context, path string) error
	BackupDir  string // e.g. <data dir>/backups
	BackupKeep int    // newest scheduled backups kept; 0 means 7

	// JournalRetention is how long job runs stay in the journal; 0
	// means 30 days.
	JournalRetention time.Duration

	Now    func() time.Time
	Logger *slog.Logger
}

// ExecutionPruner is the part of kairos.CodeExecutionStore the pruning job
// needs.
type ExecutionPruner interface {
	PruneExecutions(ctx context.Context, before time.Time) (int64, error)
}

func (c *Config) defaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Policy == nil {
		p := kairos.DefaultPolicy()
		c.Policy = func() *kairos.Policy { return p }
	}
	if c.BackupKeep <= 0 {
		c.BackupKeep = 7
	}
	if c.JournalRetention <= 0 {
		c.JournalRetention = 30 * 24 * time.Hour
	}
}

// location returns the Session TZ of a thread, UTC when unknown.
func (c *Config) location(ctx context.Context, threadKey, userKey string) *time.Location {
	if c.Timezone == nil {
		return time.UTC
	}
	if loc := c.Timezone(ctx, threadKey, userKey); loc != nil {
		return loc
	}
	return time.UTC
}
