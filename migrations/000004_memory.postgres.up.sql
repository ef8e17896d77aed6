-- Memories (seed 003, the memory tool): user_memory (categorical life
-- context) and summaries (calendar-aligned roll-ups). Every row belongs to
-- one user. merge_key makes a fact stored again an update, not a new row:
-- for user memories a hash of the normalized content, for summaries the
-- summary type, period key and chat id.
-- span_start/span_end (unix ms, inclusive) is the time a memory is about:
-- its creation instant for user memories, its period for summaries; the
-- recall filters from/to test overlap with it.
-- embedding: little-endian float32 vector, NULL until one is computed.
-- tsv is the full-text document (the SQLite schema uses FTS5 instead).
CREATE TABLE memories (
    seq               BIGSERIAL PRIMARY KEY,
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
    embedding         BYTEA,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    tsv               tsvector GENERATED ALWAYS AS (
                          setweight(to_tsvector('english', content), 'B') ||
                          setweight(to_tsvector('english', tags), 'A')
                      ) STORED
);
CREATE UNIQUE INDEX memories_user_merge ON memories (user_key, merge_key);
CREATE INDEX memories_user_updated ON memories (user_key, updated_at);
CREATE INDEX memories_user_span ON memories (user_key, span_end);
CREATE INDEX memories_tsv ON memories USING GIN (tsv);
