-- Pending /clock link codes live in the database, so a restart (or
-- another replica) does not break a link in progress.
CREATE TABLE clock_link_codes (
    code       TEXT PRIMARY KEY,
    user_key   TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
