-- Each thread's mode (DISCUSS, DIAGNOSE, EXECUTE) and capability envelope.
CREATE TABLE thread_modes (
    thread_key TEXT PRIMARY KEY,
    mode       TEXT NOT NULL,
    envelope   TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    updated_at BIGINT NOT NULL
);

-- Journal of mode transitions.
CREATE TABLE mode_transitions (
    id             {{AUTOID}},
    thread_key     TEXT NOT NULL,
    from_mode      TEXT NOT NULL,
    to_mode        TEXT NOT NULL,
    cause          TEXT NOT NULL,
    actor          TEXT NOT NULL DEFAULT '',
    approval_token TEXT NOT NULL DEFAULT '',
    summary        TEXT NOT NULL DEFAULT '',
    at             BIGINT NOT NULL
);
CREATE INDEX mode_transitions_thread ON mode_transitions (thread_key, at);
