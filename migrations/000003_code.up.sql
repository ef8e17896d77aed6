-- Code executions (seed 003 tracing): one row per cell run of the `code`
-- tool. created_at is unix milliseconds (UTC). status is 'running' while
-- an asynchronous job has no outcome yet and 'done' afterwards; only done
-- rows count in /codestats and /codefailures. result holds the output()
-- value as JSON or, for a checkpointed run, {"checkpoint":{…},"output":…}.

CREATE TABLE code_executions (
    id              TEXT PRIMARY KEY,
    code            TEXT NOT NULL DEFAULT '',
    stdout          TEXT NOT NULL DEFAULT '',
    stderr          TEXT NOT NULL DEFAULT '',
    exit_code       INTEGER NOT NULL DEFAULT 0,
    duration_ms     BIGINT NOT NULL DEFAULT 0,
    success         BOOLEAN NOT NULL DEFAULT FALSE,
    session_id      TEXT NOT NULL DEFAULT '',
    user_key        TEXT NOT NULL DEFAULT '',
    trigger_message TEXT NOT NULL DEFAULT '',
    llm_reasoning   TEXT NOT NULL DEFAULT '',
    error_category  TEXT NOT NULL DEFAULT '',
    verb            TEXT NOT NULL DEFAULT '',
    risk_tier       TEXT NOT NULL DEFAULT '',
    result          TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT 'done',
    created_at      BIGINT NOT NULL
);
CREATE INDEX code_executions_created ON code_executions (created_at);
CREATE INDEX code_executions_success ON code_executions (success, created_at);
CREATE INDEX code_executions_session ON code_executions (session_id, created_at);
