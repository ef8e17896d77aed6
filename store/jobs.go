package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// JobStore implements kairos.JobStore: the journal of scheduled job runs.
type JobStore struct{ db *DB }

var _ kairos.JobStore = (*JobStore)(nil)

// NewJobStore returns the job journal of db.
func NewJobStore(db *DB) *JobStore { return &JobStore{db: db} }

type jobRunRow struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	Job       string
	StartedAt int64
	EndedAt   int64
	Outcome   string
	Detail    string
}

func (jobRunRow) TableName() string { return "job_runs" }

// JobDetailMax bounds the stored detail of a run (bytes).
const JobDetailMax = 4000

// RecordJobRun appends a run to the journal.
func (s *JobStore) RecordJobRun(ctx context.Context, r *kairos.JobRun) error {
	if r == nil || r.Job == "" {
		return kairos.Errorf(kairos.EINVALID, "a job run needs its job")
	}
	switch r.Outcome {
	case kairos.JobOK, kairos.JobError, kairos.JobPanic, kairos.JobSkipped:
	default:
		return kairos.Errorf(kairos.EINVALID, "unknown job outcome %q", r.Outcome)
	}
	detail := strings.ReplaceAll(r.Detail, "\x00", "") // PostgreSQL text cannot hold NUL
	if len(detail) > JobDetailMax {
		cut := JobDetailMax
		for cut > 0 && detail[cut]&0xC0 == 0x80 { // keep UTF-8 whole
			cut--
		}
		detail = detail[:cut]
	}
	row := jobRunRow{Job: r.Job, StartedAt: ms(r.StartedAt), EndedAt: ms(r.EndedAt), Outcome: r.Outcome, Detail: detail}
	if err := s.db.gdb.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("record job run: %w", err)
	}
	r.ID = row.ID
	return nil
}

// JobRuns lists runs newest first.
func (s *JobStore) JobRuns(ctx context.Context, job string, limit int) ([]*kairos.JobRun, error) {
	if limit <= 0 {
		limit = 100
	}
	q := s.db.gdb.WithContext(ctx).Order("started_at DESC, id DESC").Limit(limit)
	if job != "" {
		q = q.Where("job = ?", job)
	}
	var rows []jobRunRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list job runs: %w", err)
	}
	out := make([]*kairos.JobRun, len(rows))
	for i, r := range rows {
		out[i] = &kairos.JobRun{ID: r.ID, Job: r.Job, StartedAt: fromMS(r.StartedAt), EndedAt: fromMS(r.EndedAt),
			Outcome: r.Outcome, Detail: r.Detail}
	}
	return out, nil
}

// PruneJobRuns deletes runs started before `before`.
func (s *JobStore) PruneJobRuns(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.gdb.WithContext(ctx).Where("started_at < ?", ms(before)).Delete(&jobRunRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("prune job runs: %w", res.Error)
	}
	return res.RowsAffected, nil
}
