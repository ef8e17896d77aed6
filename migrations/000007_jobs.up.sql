-- Journal of scheduled job runs (session division, summary roll-ups,
-- maintenance). Times are unix milliseconds (UTC); outcome is one of
-- ok, error, panic, skipped.
CREATE TABLE job_runs (
    id         {{AUTOID}},
    job        TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    ended_at   BIGINT NOT NULL,
    outcome    TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX job_runs_job ON job_runs (job, started_at);
CREATE INDEX job_runs_started ON job_runs (started_at);
