-- The tool-call journal's order within one millisecond: its ids are the
-- model's or random, so PostgreSQL gets a sequence (SQLite orders by rowid,
-- which an upsert keeps). An upsert updates the row in place and keeps seq.
ALTER TABLE tool_calls ADD COLUMN seq BIGSERIAL;
