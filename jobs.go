package kairos

import (
	"context"
	"fmt"
	"time"
)

// Outcomes of a scheduled job run.
const (
	JobOK      = "ok"
	JobError   = "error"
	JobPanic   = "panic"
	JobSkipped = "skipped" // the previous run was still going, or nothing to do by configuration
)

// JobRun is the journal entry of one run of a scheduled job (session
// division, summary roll-ups, maintenance).
type JobRun struct {
	ID        int64
	Job       string
	StartedAt time.Time
	EndedAt   time.Time
	Outcome   string // JobOK, JobError, JobPanic or JobSkipped
	Detail    string // what the run did, or why it failed
}

// JobStore journals scheduled job runs.
type JobStore interface {
	// RecordJobRun appends a run to the journal and sets its ID.
	RecordJobRun(ctx context.Context, r *JobRun) error
	// JobRuns lists runs newest first: of one job, or of every job when
	// job is "". limit <= 0 means 100.
	JobRuns(ctx context.Context, job string, limit int) ([]*JobRun, error)
	// PruneJobRuns deletes runs started before t; it returns how many.
	PruneJobRuns(ctx context.Context, before time.Time) (int64, error)
}

// PruneCutoffs say which finished bookkeeping rows the maintenance job
// removes: those finished before each time (a zero time keeps them all).
type PruneCutoffs struct {
	Approvals  time.Time // decided and continued approvals
	Updates    time.Time // processed Telegram updates (the newest stays: the poll offset)
	Outbox     time.Time // reply parts sent (or whose send was attempted)
	Firings    time.Time // schedule firings sent, missed or failed
	Attempts   time.Time // pairing attempt windows that started before
	TokenUsage time.Time // rolled up per day, then deleted; a UTC midnight
	AccessLog  time.Time // API and console requests
}

// PruneCounts are the rows each pruning removed (TokenUsage: detail
// rows rolled up into per-day totals).
type PruneCounts struct {
	Approvals, Updates, Outbox, Firings, Attempts, TokenUsage, AccessLog int64
}

func (c PruneCounts) String() string {
	return fmt.Sprintf("deleted %d approvals, %d updates, %d outbox rows, %d firings, %d attempt windows, %d access log entries; rolled up %d token usage rows",
		c.Approvals, c.Updates, c.Outbox, c.Firings, c.Attempts, c.AccessLog, c.TokenUsage)
}

// Pruner removes finished bookkeeping rows (the maintenance job).
type Pruner interface {
	PruneFinished(ctx context.Context, c PruneCutoffs) (PruneCounts, error)
}
