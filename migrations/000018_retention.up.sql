-- Retention (issue 20): the maintenance job deletes finished bookkeeping
-- rows after the policy's sessions.*_retention, and rolls token_usage
-- rows older than sessions.token_usage_retention up into one row per UTC
-- day, user, thread, model and kind here.
--
-- token_usage_daily keeps what usage reports read (issue 24's per-user
-- cost accounting): per user, thread, model and day the calls and the
-- prompt, cached and completion tokens, audio, images and cost (cost_nusd:
-- billionths of a US dollar, summed exactly), and how many calls had no
-- price. day_start is the UTC midnight of the day in ms since the epoch.
-- Reports over old periods read this table beside token_usage; a day is
-- rolled up whole (the cut-off is a UTC midnight), so no day is split
-- between the two tables.
CREATE TABLE token_usage_daily (
    day_start         BIGINT NOT NULL,
    user_key          TEXT NOT NULL,
    thread_key        TEXT NOT NULL,
    model             TEXT NOT NULL,
    kind              TEXT NOT NULL,
    calls             BIGINT NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    cached_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    audio_ms          BIGINT NOT NULL,
    images            BIGINT NOT NULL,
    cost_nusd         BIGINT NOT NULL,
    unpriced_calls    BIGINT NOT NULL,
    PRIMARY KEY (day_start, user_key, thread_key, model, kind)
);
CREATE INDEX token_usage_daily_user ON token_usage_daily (user_key, day_start);

-- What the pruning reads by time.
CREATE INDEX updates_done ON updates (done_at);
CREATE INDEX approvals_created ON approvals (created_at);
CREATE INDEX schedule_firings_claimed ON schedule_firings (claimed_at);
