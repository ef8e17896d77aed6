-- Pairing attempts counted in fixed windows (issue 20): refusals to a
-- stranger and failed /pair codes, shared by every replica. key is a
-- keyed digest of the counter's name (it holds no user id in the clear);
-- window_start is in ms since the epoch. The maintenance job deletes
-- windows that have ended.
CREATE TABLE attempts (
    key          TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    n            INTEGER NOT NULL
);
CREATE INDEX attempts_window ON attempts (window_start);
