-- Schedules: reminders, tasks and watching cells (issue 14). Times are
-- unix milliseconds (UTC). start_local is the first occurrence as wall
-- time in tz; rrule is the normalized RFC 5545 recurrence ('' for a
-- one-off). version is bumped by every change: a claim is a conditional
-- update on it, so each occurrence is claimed by exactly one process.
CREATE TABLE schedules (
    id          {{AUTOID}},
    user_id     BIGINT NOT NULL,
    chat_id     BIGINT NOT NULL,
    thread_key  TEXT NOT NULL,
    kind        TEXT NOT NULL,
    text        TEXT NOT NULL DEFAULT '',
    task        TEXT NOT NULL DEFAULT '',
    code        TEXT NOT NULL DEFAULT '',
    tz          TEXT NOT NULL,
    rrule       TEXT NOT NULL DEFAULT '',
    repeat_text TEXT NOT NULL DEFAULT '',
    start_local TEXT NOT NULL,
    next_run    BIGINT NOT NULL,
    status      TEXT NOT NULL,
    tainted     INTEGER NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    version     BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX schedules_due ON schedules (status, next_run);
CREATE INDEX schedules_user ON schedules (user_id, status);

-- Firings: the scheduler's outbox. A claim advances the schedule and
-- inserts the firing in one transaction; delivery leases the firing,
-- sends through the reply outbox (key schedule:<id>) and finishes it.
CREATE TABLE schedule_firings (
    id          {{AUTOID}},
    schedule_id BIGINT NOT NULL,
    due_at      BIGINT NOT NULL,
    claimed_at  BIGINT NOT NULL,
    status      TEXT NOT NULL,
    skipped     INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    lease_until BIGINT NOT NULL DEFAULT 0,
    sent_at     BIGINT,
    message_id  BIGINT NOT NULL DEFAULT 0,
    detail      TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX schedule_firings_once ON schedule_firings (schedule_id, due_at);
CREATE INDEX schedule_firings_pending ON schedule_firings (status, lease_until);
