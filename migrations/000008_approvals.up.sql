-- Approval requests that pause a turn (issue 13): the turn's state is
-- kept here so that a restart or another replica can finish it. Status
-- moves once from pending to approved, denied or expired (conditional
-- update); claimed_by is set once by whoever continues the turn. Times are
-- unix milliseconds (UTC).
CREATE TABLE approvals (
    id           TEXT PRIMARY KEY,
    update_id    BIGINT NOT NULL DEFAULT 0,
    chat_id      BIGINT NOT NULL,
    chat_kind    TEXT NOT NULL DEFAULT '',
    topic_id     BIGINT NOT NULL DEFAULT 0,
    user_id      BIGINT NOT NULL,
    thread_key   TEXT NOT NULL DEFAULT '',
    action       TEXT NOT NULL DEFAULT '',
    text         TEXT NOT NULL DEFAULT '',
    message_id   BIGINT NOT NULL DEFAULT 0,
    state        TEXT NOT NULL DEFAULT '',
    expires_at   BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    status       TEXT NOT NULL,
    decided_by   TEXT NOT NULL DEFAULT '',
    decided_at   BIGINT NOT NULL DEFAULT 0,
    heartbeat_at BIGINT NOT NULL,
    claimed_by   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX approvals_status ON approvals (status, heartbeat_at);
