-- Clock state (CLOCK.md §10): users, threads, per-user-per-thread last
-- messages, latest actions and per-user calibration. Timestamps are unix
-- milliseconds; 0 means "never".

CREATE TABLE clock_users (
    user_key                     TEXT PRIMARY KEY,
    default_tz                   TEXT NOT NULL DEFAULT '',
    mode                         TEXT NOT NULL DEFAULT '',
    link_group                   TEXT NOT NULL DEFAULT '',
    last_interaction_any_channel BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX clock_users_link ON clock_users (link_group);

CREATE TABLE clock_threads (
    thread_key         TEXT PRIMARY KEY,
    thread_kind        TEXT NOT NULL DEFAULT '',
    session_tz         TEXT NOT NULL DEFAULT '',
    last_interaction   BIGINT NOT NULL DEFAULT 0,
    last_user_message  BIGINT NOT NULL DEFAULT 0,
    last_agent_message BIGINT NOT NULL DEFAULT 0
);

-- One row per user and thread: §10.2's users.<u>.channels.<thread_key>
-- and threads.<t>.last_user_message_iso_by_user / participants.
CREATE TABLE clock_thread_users (
    thread_key         TEXT NOT NULL,
    user_key           TEXT NOT NULL,
    last_user_message  BIGINT NOT NULL DEFAULT 0,
    last_agent_message BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (thread_key, user_key)
);
CREATE INDEX clock_thread_users_user ON clock_thread_users (user_key);

CREATE TABLE clock_actions (
    id                       TEXT PRIMARY KEY,
    user_key                 TEXT NOT NULL,
    thread_key               TEXT NOT NULL DEFAULT '',
    label                    TEXT NOT NULL,
    type                     TEXT NOT NULL DEFAULT 'temporal_action',
    status                   TEXT NOT NULL,
    source                   TEXT NOT NULL DEFAULT 'auto',
    activity                 TEXT NOT NULL DEFAULT '',
    quote                    TEXT NOT NULL DEFAULT '',
    recorded_at              BIGINT NOT NULL,
    expires_at               BIGINT NOT NULL,
    updated_at               BIGINT NOT NULL DEFAULT 0,
    expected_typical_minutes INTEGER NOT NULL DEFAULT 0,
    expected_max_minutes     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX clock_actions_user ON clock_actions (user_key, recorded_at);

CREATE TABLE clock_calibration (
    user_key        TEXT NOT NULL,
    activity        TEXT NOT NULL,
    typical_minutes INTEGER NOT NULL,
    max_minutes     INTEGER NOT NULL,
    updated_at      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_key, activity)
);
