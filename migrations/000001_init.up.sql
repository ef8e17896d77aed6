-- Sessions: one open session per thread at a time.
CREATE TABLE sessions (
    id              TEXT PRIMARY KEY,
    thread_key      TEXT NOT NULL,
    user_key        TEXT NOT NULL,
    name            TEXT NOT NULL DEFAULT '',
    started_at      BIGINT NOT NULL,
    ended_at        BIGINT,
    summary         TEXT NOT NULL DEFAULT '',
    prev_session_id TEXT NOT NULL DEFAULT '',
    running_summary TEXT NOT NULL DEFAULT '',
    summarized_through BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX sessions_thread ON sessions (thread_key, started_at);
CREATE UNIQUE INDEX sessions_one_open ON sessions (thread_key) WHERE ended_at IS NULL;
CREATE INDEX sessions_ended ON sessions (ended_at);

-- Messages of a session, in order.
CREATE TABLE messages (
    id           {{AUTOID}},
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    thread_key   TEXT NOT NULL,
    user_key     TEXT NOT NULL DEFAULT '',
    role         TEXT NOT NULL,
    content      TEXT NOT NULL DEFAULT '',
    tool_calls   TEXT NOT NULL DEFAULT '',
    tool_call_id TEXT NOT NULL DEFAULT '',
    name         TEXT NOT NULL DEFAULT '',
    tainted      BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   BIGINT NOT NULL
);
CREATE INDEX messages_session ON messages (session_id, id);

-- Journal of tool calls.
CREATE TABLE tool_calls (
    id          TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    thread_key  TEXT NOT NULL,
    user_key    TEXT NOT NULL,
    tool        TEXT NOT NULL,
    action      TEXT NOT NULL DEFAULT '',
    arguments   TEXT NOT NULL DEFAULT '',
    result      TEXT NOT NULL DEFAULT '',
    outcome     TEXT NOT NULL DEFAULT '',
    envelope    TEXT NOT NULL DEFAULT '',
    mode        TEXT NOT NULL DEFAULT '',
    tainted     BOOLEAN NOT NULL DEFAULT FALSE,
    approval    TEXT NOT NULL DEFAULT '',
    duration_ms BIGINT NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE INDEX tool_calls_created ON tool_calls (created_at);

-- Token usage per model call.
CREATE TABLE token_usage (
    id                {{AUTOID}},
    session_id        TEXT NOT NULL,
    user_key          TEXT NOT NULL,
    model             TEXT NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    created_at        BIGINT NOT NULL
);
CREATE INDEX token_usage_user ON token_usage (user_key, created_at);
CREATE INDEX token_usage_session ON token_usage (session_id);
