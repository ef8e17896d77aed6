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
-- file. tsv is the full-text document (the SQLite schema uses FTS5):
-- the title weighted A, the text B, English stemming as the memories'.
CREATE TABLE research_docs (
    seq      BIGSERIAL PRIMARY KEY,
    path     TEXT NOT NULL UNIQUE,
    title    TEXT NOT NULL,
    text     TEXT NOT NULL,
    mod_time BIGINT NOT NULL,
    size     BIGINT NOT NULL,
    tsv      tsvector GENERATED ALWAYS AS (
                 setweight(to_tsvector('english', title), 'A') ||
                 setweight(to_tsvector('english', text), 'B')
             ) STORED
);
CREATE INDEX research_docs_tsv ON research_docs USING GIN (tsv);
