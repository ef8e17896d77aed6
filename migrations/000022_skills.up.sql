-- Skills Kairos builds for itself (seed 004's BUILD and UPDATE verbs,
-- issue 25). A skill is named per owner (user key); its versions are kept
-- for rollback (skills.versions_kept), and current_version says which one
-- runs: an update or a rollback is one conditional update of that column,
-- so a call in flight finishes on the version it read. Times are unix
-- milliseconds (UTC).
CREATE TABLE skills (
    id              {{AUTOID}},
    owner           TEXT NOT NULL,
    name            TEXT NOT NULL,
    scope           TEXT NOT NULL DEFAULT 'user',
    enabled         INTEGER NOT NULL DEFAULT 1,
    disabled_reason TEXT NOT NULL DEFAULT '',
    tainted         INTEGER NOT NULL DEFAULT 0,
    taint_source    TEXT NOT NULL DEFAULT '',
    current_version INTEGER NOT NULL DEFAULT 1,
    failures        INTEGER NOT NULL DEFAULT 0,
    runs            BIGINT NOT NULL DEFAULT 0,
    run_failures    BIGINT NOT NULL DEFAULT 0,
    last_run_at     BIGINT NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX skills_owner_name ON skills (owner, name);
CREATE INDEX skills_scope ON skills (scope, name);

CREATE TABLE skill_versions (
    id           {{AUTOID}},
    skill_id     BIGINT NOT NULL,
    version      INTEGER NOT NULL,
    description  TEXT NOT NULL,
    input_schema TEXT NOT NULL,
    code         TEXT NOT NULL,
    tests        TEXT NOT NULL,
    capabilities TEXT NOT NULL DEFAULT '{}',
    risk         TEXT NOT NULL DEFAULT '',
    tainted      INTEGER NOT NULL DEFAULT 0,
    created_by   TEXT NOT NULL DEFAULT '',
    approved_by  TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX skill_versions_one ON skill_versions (skill_id, version);
