-- Memories (seed 003, the memory tool): user_memory (categorical life
-- context) and summaries (calendar-aligned roll-ups). Every row belongs to
-- one user. merge_key makes a fact stored again an update, not a new row:
-- for user memories a hash of the normalized content, for summaries the
-- summary type, period key and chat id.
-- span_start/span_end (unix ms, inclusive) is the time a memory is about:
-- its creation instant for user memories, its period for summaries; the
-- recall filters from/to test overlap with it.
-- embedding: little-endian float32 vector, NULL until one is computed.
CREATE TABLE memories (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT NOT NULL UNIQUE,
    user_key          TEXT NOT NULL,
    store             TEXT NOT NULL,
    type              TEXT NOT NULL,
    content           TEXT NOT NULL,
    tags              TEXT NOT NULL DEFAULT '[]',
    pursuing_priority INTEGER,
    period_key        TEXT NOT NULL DEFAULT '',
    chat_id           TEXT NOT NULL DEFAULT '',
    merge_key         TEXT NOT NULL,
    span_start        BIGINT NOT NULL,
    span_end          BIGINT NOT NULL,
    embedding         BLOB,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE UNIQUE INDEX memories_user_merge ON memories (user_key, merge_key);
CREATE INDEX memories_user_updated ON memories (user_key, updated_at);
CREATE INDEX memories_user_span ON memories (user_key, span_end);

-- Full-text index: a contentless FTS5 table (rowid = memories.seq) kept in
-- sync by triggers. porter stems English words ("running" finds "run").
-- Recall ranks with bm25, weights content 1, tags 2.
CREATE VIRTUAL TABLE memories_fts USING fts5(
    content,
    tags,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, tags) VALUES (new.seq, new.content, new.tags);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.seq;
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, tags ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.seq;
    INSERT INTO memories_fts (rowid, content, tags) VALUES (new.seq, new.content, new.tags);
END;
