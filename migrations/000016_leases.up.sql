-- Leases let replicas sharing one database divide work (issue 20): the
-- Telegram poll is held by one replica ("telegram-poll"), and every
-- replica keeps a lease of its own ("replica:<id>") as its heartbeat. A
-- lease whose expires_at (ms since the epoch) has passed is free.
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- The replica that stored an update and is working on it; when that
-- replica's lease runs out, a survivor takes the pending ones over.
ALTER TABLE updates ADD COLUMN owner TEXT NOT NULL DEFAULT '';
