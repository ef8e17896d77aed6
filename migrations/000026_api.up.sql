-- The query API's tokens (only a SHA-256 of each secret is kept), the
-- record of every write made through the API or the console, and the
-- console's single-use sign-in links and sessions (hashed the same way).
CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    scope        TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL DEFAULT 0,
    revoked_at   BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE api_writes (
    id         {{AUTOID}},
    actor      TEXT NOT NULL,
    method     TEXT NOT NULL,
    path       TEXT NOT NULL,
    status     INTEGER NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX api_writes_time ON api_writes (created_at);

CREATE TABLE console_links (
    hash       TEXT PRIMARY KEY,
    user_id    BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE console_sessions (
    hash       TEXT PRIMARY KEY,
    user_id    BIGINT NOT NULL,
    csrf       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    ended_at   BIGINT NOT NULL DEFAULT 0
);
