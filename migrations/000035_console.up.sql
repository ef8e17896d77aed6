-- The console (issue 35): users' names as Telegram gives them, kept from
-- their latest message, and the access log of every request to the API
-- and the console (who, through which token or session, the path without
-- its query, the status). The maintenance job prunes the log.
CREATE TABLE user_names (
    user_key   TEXT PRIMARY KEY,
    first_name TEXT NOT NULL DEFAULT '',
    username   TEXT NOT NULL DEFAULT '',
    updated_at BIGINT NOT NULL
);

CREATE TABLE access_log (
    id         {{AUTOID}},
    at         BIGINT NOT NULL,
    door       TEXT NOT NULL,
    actor      TEXT NOT NULL,
    via        TEXT NOT NULL,
    method     TEXT NOT NULL,
    path       TEXT NOT NULL,
    status     INTEGER NOT NULL,
    elapsed_ms BIGINT NOT NULL
);
CREATE INDEX access_log_time ON access_log (at);
