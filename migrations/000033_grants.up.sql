-- Standing approvals (issue 33): "Allow 1h" and "Always here" are rows
-- here, one per user, chat (thread), tool and target. A revoke deletes
-- the row; a use counts in one conditional update. expires_at 0: until
-- revoked. Times are unix milliseconds (UTC).
CREATE TABLE grants (
    id           TEXT PRIMARY KEY,
    user_key     TEXT NOT NULL,
    thread_key   TEXT NOT NULL,
    tool         TEXT NOT NULL,
    action       TEXT NOT NULL DEFAULT '',
    target       TEXT NOT NULL,
    label        TEXT NOT NULL DEFAULT '',
    covers_tasks BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at   BIGINT NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    created_by   TEXT NOT NULL DEFAULT '',
    last_used_at BIGINT NOT NULL DEFAULT 0,
    uses         BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX grants_key ON grants (user_key, thread_key, tool, target);

-- What an approval request offered (a grant for its target) and what its
-- decision stood for (once, an hour, always), the user's message whose turn
-- it pauses (a reply to it waits for the decision) and the user's zone (the
-- closed keyboard says when, in it).
ALTER TABLE approvals ADD COLUMN tool TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN grantable BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE approvals ADD COLUMN target TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN target_label TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN source_message_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN scope TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN zone TEXT NOT NULL DEFAULT '';
CREATE INDEX approvals_chat ON approvals (chat_id, status);
