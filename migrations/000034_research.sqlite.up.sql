-- Research (seed 004's tiered research, issue 34). A trace is one
-- question: its state (plan, tier reached, queries and fetches made,
-- spend) is rewritten after every step, so a trace cut short by a restart
-- resumes when the same user asks the same question (question_key) again.
-- Its evidence ledger keeps every source read, by ref ("E1", …): claims
-- cite a ref and code checks their quotes against text. Times are unix
-- milliseconds (UTC); published_at is 0 when the source states no date.
CREATE TABLE research_traces (
    id           TEXT PRIMARY KEY,
    user_key     TEXT NOT NULL,
    thread_key   TEXT NOT NULL DEFAULT '',
    question     TEXT NOT NULL,
    question_key TEXT NOT NULL,
    depth        TEXT NOT NULL,
    status       TEXT NOT NULL,
    tainted      BOOLEAN NOT NULL DEFAULT FALSE,
    state        TEXT NOT NULL DEFAULT '{}',
    answer       TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX research_traces_user ON research_traces (user_key, created_at);
CREATE INDEX research_traces_question ON research_traces (user_key, question_key, updated_at);
CREATE INDEX research_traces_created ON research_traces (created_at, id);

CREATE TABLE research_evidence (
    trace_id     TEXT NOT NULL REFERENCES research_traces (id) ON DELETE CASCADE,
    ref          TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    tier         TEXT NOT NULL,
    title        TEXT NOT NULL DEFAULT '',
    url          TEXT NOT NULL DEFAULT '',
    path         TEXT NOT NULL DEFAULT '',
    text         TEXT NOT NULL,
    retrieved_at BIGINT NOT NULL,
    published_at BIGINT NOT NULL DEFAULT 0,
    tainted      BOOLEAN NOT NULL DEFAULT TRUE,
    PRIMARY KEY (trace_id, ref)
);

-- The offline folder's index (research.offline.dir): one row per
-- document, path relative to the folder; mod_time and size tell a changed
-- file. research_docs_fts is an external-content FTS5 table over it
-- (rowid = research_docs.seq), kept in sync by triggers; porter stems
-- English words, as the memories' index does.
CREATE TABLE research_docs (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    path     TEXT NOT NULL UNIQUE,
    title    TEXT NOT NULL,
    text     TEXT NOT NULL,
    mod_time BIGINT NOT NULL,
    size     BIGINT NOT NULL
);

CREATE VIRTUAL TABLE research_docs_fts USING fts5(
    title,
    text,
    content = 'research_docs',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER research_docs_fts_insert AFTER INSERT ON research_docs BEGIN
    INSERT INTO research_docs_fts (rowid, title, text) VALUES (new.seq, new.title, new.text);
END;

CREATE TRIGGER research_docs_fts_delete AFTER DELETE ON research_docs BEGIN
    INSERT INTO research_docs_fts (research_docs_fts, rowid, title, text) VALUES ('delete', old.seq, old.title, old.text);
END;

CREATE TRIGGER research_docs_fts_update AFTER UPDATE ON research_docs BEGIN
    INSERT INTO research_docs_fts (research_docs_fts, rowid, title, text) VALUES ('delete', old.seq, old.title, old.text);
    INSERT INTO research_docs_fts (rowid, title, text) VALUES (new.seq, new.title, new.text);
END;
