-- Cost accounting (issue 24): every model call's thread, purpose, cached
-- prompt tokens, images and cost at the prices in force when it was made
-- (cost_nusd: billionths of a US dollar, an integer so sums are exact;
-- priced 0: the model had no price, tokens only).
ALTER TABLE token_usage ADD COLUMN thread_key TEXT NOT NULL DEFAULT '';
ALTER TABLE token_usage ADD COLUMN kind TEXT NOT NULL DEFAULT 'chat';
ALTER TABLE token_usage ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE token_usage ADD COLUMN images BIGINT NOT NULL DEFAULT 0;
ALTER TABLE token_usage ADD COLUMN cost_nusd BIGINT NOT NULL DEFAULT 0;
ALTER TABLE token_usage ADD COLUMN priced INTEGER NOT NULL DEFAULT 0;
-- The bot's monthly total and `kairos usage` read by time alone.
CREATE INDEX token_usage_created ON token_usage (created_at);

-- Spending notices given (80% and cap reached), once per user, cap and
-- period, whichever replica gives them.
CREATE TABLE spend_notices (
    user_key   TEXT NOT NULL,
    notice     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_key, notice)
);

-- Caps an operator lifted for a user until the period ends (a day
-- YYYY-MM-DD or a month YYYY-MM in the user's zone; user "bot" for the
-- whole bot's monthly cap).
CREATE TABLE spend_lifts (
    user_key   TEXT NOT NULL,
    period     TEXT NOT NULL,
    lifted_by  TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_key, period)
);
