-- SQLite orders the tool-call journal by rowid (kept by an upsert); only
-- PostgreSQL needs a sequence column (000028_tool_call_seq.postgres.up.sql).
SELECT 1;
