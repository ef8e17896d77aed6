-- Calls whose provider reported no usage: their token counts were
-- estimated from the texts (kairos.Usage.Estimated), and reports say so.
ALTER TABLE token_usage ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE token_usage_daily ADD COLUMN estimated_calls BIGINT NOT NULL DEFAULT 0;
