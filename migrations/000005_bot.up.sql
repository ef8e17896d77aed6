-- Telegram updates, persisted before the polling offset moves past them.
CREATE TABLE updates (
    update_id   BIGINT PRIMARY KEY,
    chat_id     BIGINT NOT NULL,
    payload     TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'pending',
    attempts    INTEGER NOT NULL DEFAULT 0,
    received_at BIGINT NOT NULL,
    done_at     BIGINT
);
CREATE INDEX updates_status ON updates (status, update_id);

-- Reply intents: a part is recorded as 'sending' before it is sent.
CREATE TABLE outbox (
    key        TEXT PRIMARY KEY,
    chat_id    BIGINT NOT NULL,
    status     TEXT NOT NULL,
    message_id BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    sent_at    BIGINT
);
CREATE INDEX outbox_created ON outbox (created_at);

-- Users admitted by an operator (pairing or `kairos access allow`).
CREATE TABLE access_grants (
    user_id    BIGINT PRIMARY KEY,
    granted_by BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);

-- Small named values.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
