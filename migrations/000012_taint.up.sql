-- Trust: what was written while untrusted content was in the turn stays
-- marked. A memory keeps its taint and where it came from; a session is
-- tainted once any of its messages is, so its history and summaries are
-- read as untrusted later.
ALTER TABLE memories ADD COLUMN tainted BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE memories ADD COLUMN taint_source TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN tainted BOOLEAN NOT NULL DEFAULT FALSE;
