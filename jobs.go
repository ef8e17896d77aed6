package kairos

import (
	"context"
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
