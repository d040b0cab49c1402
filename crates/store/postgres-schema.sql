-- seri's PostgreSQL schema: the whole of it, as the migrations that build it.
--
-- The same tables, columns and rules as `sqlite-schema.sql` (read that file
-- for what each table and column means); only the types are PostgreSQL's.
-- Each migration starts at a line `-- migration N: title` and runs once, in
-- the write transaction of the store that opens a database at a lower
-- version (writers hold the store's advisory lock, so two first opens do
-- not race); the same transaction records N in `seri_schema`. To change the
-- schema, append a migration here and bump `POSTGRES_SCHEMA_VERSION` in
-- `src/db/schema.rs`, and the same change to `sqlite-schema.sql`. Never
-- edit a migration that has shipped (migration 5 was, once: see there).
--
-- Everything lives in the connection's current schema (`search_path`), so
-- one database can hold several seri stores side by side, one per schema.
--
-- Conventions, as in SQLite: ids are lowercase hyphenated UUID text; text
-- compares byte by byte (`COLLATE "C"`, SQLite's BINARY), so ids sort in
-- creation order and id prefixes are ranges whatever the database's locale; times
-- are Unix milliseconds; every integer is BIGINT (what the store binds);
-- JSON is camelCase text; bytes are BYTEA.

-- migration 1: the schema of SQLite migrations 1 to 10

-- Which seri schema this is: one row, written by the migrations. A schema
-- with tables but without this one is another application's.
CREATE TABLE seri_schema (
    application TEXT COLLATE "C"   NOT NULL CHECK (application = 'seri'),
    version     BIGINT NOT NULL
);
INSERT INTO seri_schema (application, version) VALUES ('seri', 0);

CREATE TABLE sessions (
    id            TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    agent_id      TEXT COLLATE "C"   NOT NULL,
    cwd           TEXT COLLATE "C"   NOT NULL,
    created_at    BIGINT NOT NULL,
    seed          TEXT COLLATE "C"   NOT NULL,
    title         TEXT COLLATE "C"   NOT NULL DEFAULT '',
    description   TEXT COLLATE "C"   NOT NULL DEFAULT '',
    title_source  TEXT COLLATE "C",
    parent_run_id TEXT COLLATE "C"
);

CREATE INDEX sessions_by_agent_cwd ON sessions (agent_id, cwd);
CREATE INDEX sessions_listed ON sessions (agent_id, id)
    INCLUDE (cwd, created_at, title, description, title_source, parent_run_id);

CREATE TABLE session_events (
    id             TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    session_id     TEXT COLLATE "C"   NOT NULL REFERENCES sessions (id),
    seq            BIGINT NOT NULL CHECK (seq >= 1),
    type           TEXT COLLATE "C"   NOT NULL,
    format_version BIGINT NOT NULL,
    payload        TEXT COLLATE "C"   NOT NULL,
    created_at     BIGINT NOT NULL,
    UNIQUE (session_id, seq)
);

-- The store has no UPDATE or DELETE path for events or edges; this makes
-- the database itself refuse one, whoever writes to it.
CREATE FUNCTION seri_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: rows are never %', TG_TABLE_NAME,
        CASE TG_OP WHEN 'UPDATE' THEN 'updated' ELSE 'deleted' END
        USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER session_events_are_never_updated BEFORE UPDATE ON session_events
    FOR EACH ROW EXECUTE FUNCTION seri_refuse_change();
CREATE TRIGGER session_events_are_never_deleted BEFORE DELETE ON session_events
    FOR EACH ROW EXECUTE FUNCTION seri_refuse_change();
CREATE TRIGGER session_events_are_never_truncated BEFORE TRUNCATE ON session_events
    FOR EACH STATEMENT EXECUTE FUNCTION seri_refuse_change();

-- Each session with its head, read from the events through their
-- (session_id, seq) index: the newest event, found by one index probe.
CREATE VIEW session_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(e.seq, 0) AS last_seq,
       coalesce(e.created_at, s.created_at) AS updated_at,
       s.parent_run_id
FROM sessions AS s
LEFT JOIN LATERAL (
    SELECT seq, created_at FROM session_events WHERE session_id = s.id ORDER BY seq DESC LIMIT 1
) AS e ON true;

CREATE TABLE session_continuations (
    id                     TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    predecessor_session_id TEXT COLLATE "C"   NOT NULL REFERENCES sessions (id),
    successor_session_id   TEXT COLLATE "C"   NOT NULL UNIQUE REFERENCES sessions (id),
    origin_session_id      TEXT COLLATE "C"   NOT NULL REFERENCES sessions (id),
    tool_call_id           TEXT COLLATE "C"   NOT NULL,
    initiating_event_id    TEXT COLLATE "C"   NOT NULL REFERENCES session_events (id),
    reason                 TEXT COLLATE "C"   NOT NULL,
    manifest_cbor          BYTEA  NOT NULL,
    created_at             BIGINT NOT NULL,
    UNIQUE (predecessor_session_id, tool_call_id)
);

CREATE TRIGGER session_continuations_are_never_updated BEFORE UPDATE ON session_continuations
    FOR EACH ROW EXECUTE FUNCTION seri_refuse_change();
CREATE TRIGGER session_continuations_are_never_deleted BEFORE DELETE ON session_continuations
    FOR EACH ROW EXECUTE FUNCTION seri_refuse_change();
CREATE TRIGGER session_continuations_are_never_truncated BEFORE TRUNCATE ON session_continuations
    FOR EACH STATEMENT EXECUTE FUNCTION seri_refuse_change();

CREATE TABLE runs (
    id            TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    session_id    TEXT COLLATE "C"   NOT NULL REFERENCES sessions (id),
    kind          TEXT COLLATE "C"   NOT NULL,
    lane          TEXT COLLATE "C"   NOT NULL,
    parent_run_id TEXT COLLATE "C"   REFERENCES runs (id),
    status        TEXT COLLATE "C"   NOT NULL,
    result        TEXT COLLATE "C",
    started_at    BIGINT NOT NULL,
    finished_at   BIGINT
);

CREATE INDEX runs_by_session ON runs (session_id, started_at);
CREATE INDEX runs_by_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX runs_running ON runs (session_id) WHERE status = 'running';

CREATE TABLE legacy_imports (
    id          TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    agent_id    TEXT COLLATE "C"   NOT NULL,
    path        TEXT COLLATE "C"   NOT NULL,
    sha256      TEXT COLLATE "C"   NOT NULL,
    bytes       BIGINT NOT NULL CHECK (bytes >= 0),
    modified_at BIGINT,
    legacy_id   TEXT COLLATE "C",
    session_id  TEXT COLLATE "C"   UNIQUE REFERENCES sessions (id),
    events      BIGINT NOT NULL CHECK (events >= 0),
    imported_at BIGINT NOT NULL,
    UNIQUE (agent_id, path, sha256)
);

CREATE TABLE trajectories (
    run_id     TEXT COLLATE "C"   NOT NULL PRIMARY KEY REFERENCES runs (id),
    session_id TEXT COLLATE "C"   NOT NULL REFERENCES sessions (id),
    header     TEXT COLLATE "C"   NOT NULL,
    started_at BIGINT NOT NULL
);

CREATE INDEX trajectories_by_session ON trajectories (session_id, started_at);

CREATE TABLE trajectory_records (
    run_id TEXT COLLATE "C"   NOT NULL REFERENCES trajectories (run_id),
    ord    BIGINT NOT NULL CHECK (ord >= 1),
    kind   TEXT COLLATE "C"   NOT NULL,
    data   TEXT COLLATE "C"   NOT NULL,
    at     BIGINT NOT NULL,
    PRIMARY KEY (run_id, ord)
);

CREATE TABLE trajectory_legacy_prunes (
    legacy_import_id TEXT COLLATE "C"   NOT NULL PRIMARY KEY REFERENCES legacy_imports (id),
    file_modified_at BIGINT NOT NULL,
    pruned_at        BIGINT NOT NULL
);

CREATE TABLE checkpoint_blobs (
    sha256  TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    bytes   BIGINT NOT NULL CHECK (bytes >= 0),
    content BYTEA  NOT NULL
);

CREATE TABLE checkpoint_sessions (
    session_id      TEXT COLLATE "C"   NOT NULL PRIMARY KEY REFERENCES sessions (id),
    cwd             TEXT COLLATE "C"   NOT NULL,
    touched_at      BIGINT NOT NULL,
    live            BIGINT NOT NULL CHECK (live IN (0, 1)),
    covers_from_seq BIGINT NOT NULL CHECK (covers_from_seq >= 1),
    retired_at      BIGINT
);

CREATE INDEX checkpoint_sessions_by_project ON checkpoint_sessions (cwd, live, touched_at);

CREATE TABLE checkpoint_files (
    id            TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    session_id    TEXT COLLATE "C"   NOT NULL REFERENCES checkpoint_sessions (session_id),
    turn_seq      BIGINT NOT NULL CHECK (turn_seq >= 1),
    run_id        TEXT COLLATE "C",
    tool_call_id  TEXT COLLATE "C"   NOT NULL,
    path          TEXT COLLATE "C"   NOT NULL,
    before_sha256 TEXT COLLATE "C",
    before_bytes  BIGINT,
    before_kept   BIGINT NOT NULL CHECK (before_kept IN (0, 1)),
    after_state   TEXT COLLATE "C"   NOT NULL CHECK (after_state IN ('unknown', 'absent', 'present')),
    after_sha256  TEXT COLLATE "C",
    after_bytes   BIGINT,
    created_at    BIGINT NOT NULL
);

CREATE INDEX checkpoint_files_by_turn ON checkpoint_files (session_id, turn_seq);

CREATE TABLE settings (
    agent_id   TEXT COLLATE "C"   NOT NULL,
    key        TEXT COLLATE "C"   NOT NULL,
    value      TEXT COLLATE "C"   NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, key)
);

CREATE TABLE session_leases (
    session_id     TEXT COLLATE "C"   NOT NULL PRIMARY KEY REFERENCES sessions (id),
    run_id         TEXT COLLATE "C",
    owner_instance TEXT COLLATE "C"   NOT NULL,
    owner_pid      BIGINT NOT NULL,
    owner_host     TEXT COLLATE "C"   NOT NULL,
    owner_started  BIGINT NOT NULL,
    acquired_at    BIGINT NOT NULL,
    heartbeat_at   BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL
);

CREATE TABLE session_waiters (
    id             TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    session_id     TEXT COLLATE "C"   NOT NULL REFERENCES sessions (id),
    lane_rank      BIGINT NOT NULL CHECK (lane_rank IN (0, 1)),
    owner_instance TEXT COLLATE "C"   NOT NULL,
    owner_pid      BIGINT NOT NULL,
    owner_host     TEXT COLLATE "C"   NOT NULL,
    owner_started  BIGINT NOT NULL,
    enqueued_at    BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL
);

CREATE INDEX session_waiters_in_order ON session_waiters (session_id, lane_rank, enqueued_at, id);

CREATE TABLE server_tokens (
    token_sha256 TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    agent_id     TEXT COLLATE "C"   NOT NULL,
    created_at   BIGINT NOT NULL
);

CREATE TABLE legacy_unreadable (
    agent_id TEXT COLLATE "C"   NOT NULL,
    path     TEXT COLLATE "C"   NOT NULL,
    version  TEXT COLLATE "C"   NOT NULL,
    error    TEXT COLLATE "C"   NOT NULL,
    seen_at  BIGINT NOT NULL,
    PRIMARY KEY (agent_id, path, version)
);

CREATE TABLE session_snapshots (
    session_id TEXT COLLATE "C"   NOT NULL PRIMARY KEY REFERENCES sessions (id),
    seq        BIGINT NOT NULL CHECK (seq >= 1),
    info       TEXT COLLATE "C"   NOT NULL
);

-- migration 2: the shared queue of runs (SQLite migration 11)

CREATE TABLE run_jobs (
    id               TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    agent_id         TEXT COLLATE "C"   NOT NULL,
    session_id       TEXT COLLATE "C"   NOT NULL REFERENCES sessions (id),
    request          TEXT COLLATE "C"   NOT NULL,
    state            TEXT COLLATE "C"   NOT NULL CHECK (state IN ('queued', 'running', 'done')),
    claimed_by       TEXT COLLATE "C",
    claim_expires_at BIGINT,
    attempts         BIGINT NOT NULL CHECK (attempts >= 0),
    posted_event_id  TEXT COLLATE "C",
    run_id           TEXT COLLATE "C",
    cancel_requested BIGINT NOT NULL CHECK (cancel_requested IN (0, 1)),
    outcome          TEXT COLLATE "C",
    enqueued_at      BIGINT NOT NULL,
    finished_at      BIGINT
);

CREATE INDEX run_jobs_open ON run_jobs (state, enqueued_at, id) WHERE state <> 'done';
CREATE INDEX run_jobs_by_session ON run_jobs (session_id) WHERE state <> 'done';

-- migration 3: an index of context marks (SQLite migration 12)

CREATE INDEX session_events_context_marks ON session_events (session_id, seq)
    WHERE type IN ('context_compacted', 'context_rewound');

-- migration 4: each session's newest event, for session lists (SQLite migration 13)

CREATE TABLE session_last_events (
    session_id TEXT COLLATE "C"   NOT NULL PRIMARY KEY REFERENCES sessions (id),
    seq        BIGINT NOT NULL CHECK (seq >= 1),
    created_at BIGINT NOT NULL
);

INSERT INTO session_last_events (session_id, seq, created_at)
SELECT id, last_seq, updated_at FROM session_heads WHERE last_seq > 0;

CREATE FUNCTION seri_move_the_last_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO session_last_events (session_id, seq, created_at)
    VALUES (NEW.session_id, NEW.seq, NEW.created_at)
    ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, created_at = excluded.created_at
        WHERE excluded.seq > session_last_events.seq;
    RETURN NULL;
END
$$;

CREATE TRIGGER session_events_move_the_last_event AFTER INSERT ON session_events
    FOR EACH ROW EXECUTE FUNCTION seri_move_the_last_event();

CREATE VIEW session_list_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(l.seq, (SELECT max(seq) FROM session_events WHERE session_id = s.id), 0) AS last_seq,
       coalesce(l.created_at,
                (SELECT created_at FROM session_events WHERE session_id = s.id ORDER BY seq DESC LIMIT 1),
                s.created_at) AS updated_at,
       s.parent_run_id
FROM sessions AS s
LEFT JOIN session_last_events AS l ON l.session_id = s.id;

-- migration 5: an index of rule messages (SQLite migration 14)

-- As shipped, this read `payload::jsonb`, which fails on a message holding
-- U+0000 (see migration 6): a schema at version 4 or below holding one
-- could not be upgraded. It now builds what migration 6 builds, the one
-- edit of a shipped migration: a schema past it is unaffected, and one
-- before it ends the same after migration 6 drops and makes it again.
CREATE INDEX session_events_rule_messages ON session_events (session_id, seq)
    WHERE type = 'message'
      AND (replace(replace(payload, E'\\\\', E'\\u005c'), E'\\u0000', E'\\ufffd')::jsonb #>> '{meta,rule}') IS NOT NULL;

-- migration 6: rule messages indexed whatever their text holds (SQLite needs none)

-- PostgreSQL text cannot hold U+0000, so jsonb refuses the escape `\u0000`:
-- the index of migration 5 failed every insert of a message holding one (and a
-- copy of a profile with one). The payload is read as jsonb with its
-- escaped backslashes first spelt `\u005c` (so every `\u0000` left is a
-- NUL's escape, never a backslash's tail) and each NUL's escape spelt
-- `\ufffd`: the same JSON but for NULs, so `meta.rule` reads exactly as
-- before. `json_text` in `src/db/sql.rs` writes the same expression.
DROP INDEX session_events_rule_messages;
CREATE INDEX session_events_rule_messages ON session_events (session_id, seq)
    WHERE type = 'message'
      AND (replace(replace(payload, E'\\\\', E'\\u005c'), E'\\u0000', E'\\ufffd')::jsonb #>> '{meta,rule}') IS NOT NULL;

-- migration 7: an index of tool call ids (SQLite migration 15)

-- The expression is `json_text`'s (`src/db/sql.rs`), as migration 6's is.
CREATE INDEX session_events_call_ids
    ON session_events (session_id, (replace(replace(payload, E'\\\\', E'\\u005c'), E'\\u0000', E'\\ufffd')::jsonb #>> '{id}'))
    WHERE type = 'tool_call';

-- migration 8: forks by reference (SQLite migration 16)

CREATE TABLE session_forks (
    session_id        TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES sessions (id),
    parent_session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id),
    fork_seq          BIGINT NOT NULL CHECK (fork_seq >= 0),
    created_at        BIGINT NOT NULL,
    via               TEXT   NOT NULL CHECK (via IN ('cli', 'repl', 'api', 'import')),
    CHECK (session_id <> parent_session_id)
);

CREATE INDEX session_forks_by_parent ON session_forks (parent_session_id, created_at);

CREATE OR REPLACE VIEW session_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(e.seq, f.fork_seq, 0) AS last_seq,
       coalesce(e.created_at, s.created_at) AS updated_at,
       s.parent_run_id
FROM sessions AS s
LEFT JOIN session_forks AS f ON f.session_id = s.id
LEFT JOIN LATERAL (
    SELECT seq, created_at FROM session_events WHERE session_id = s.id ORDER BY seq DESC LIMIT 1
) AS e ON true;

CREATE OR REPLACE VIEW session_list_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(l.seq, (SELECT max(seq) FROM session_events WHERE session_id = s.id),
                (SELECT fork_seq FROM session_forks WHERE session_id = s.id), 0) AS last_seq,
       coalesce(l.created_at,
                (SELECT created_at FROM session_events WHERE session_id = s.id ORDER BY seq DESC LIMIT 1),
                s.created_at) AS updated_at,
       s.parent_run_id
FROM sessions AS s
LEFT JOIN session_last_events AS l ON l.session_id = s.id;

-- migration 9: attachments in the database (SQLite migration 17)

CREATE TABLE attachment_blobs (
    sha256 TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    bytes  BYTEA NOT NULL
);

CREATE TABLE session_attachments (
    session_id    TEXT COLLATE "C" NOT NULL REFERENCES sessions (id),
    attachment_id TEXT COLLATE "C" NOT NULL,
    sha256        TEXT COLLATE "C" NOT NULL REFERENCES attachment_blobs (sha256),
    PRIMARY KEY (session_id, attachment_id)
);

-- migration 10: idempotency keys of queued messages (SQLite migration 18)

ALTER TABLE run_jobs ADD COLUMN idempotency_key TEXT COLLATE "C";
ALTER TABLE run_jobs ADD COLUMN request_digest TEXT COLLATE "C";

CREATE UNIQUE INDEX run_jobs_idempotency ON run_jobs (agent_id, session_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- migration 11: every session in the list's order, by an index (SQLite migration 19)

-- See SQLite's migration 19. Here the events' trigger runs once per
-- statement, over the rows it inserted: an append of a hundred events
-- moves the session's row once, not a hundred times.
DROP VIEW session_list_heads;
DROP TRIGGER session_events_move_the_last_event ON session_events;
DROP TABLE session_last_events;

CREATE TABLE session_last_events (
    session_id TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES sessions (id),
    agent_id   TEXT COLLATE "C" NOT NULL,
    seq        BIGINT NOT NULL CHECK (seq >= 0),
    created_at BIGINT NOT NULL
);

CREATE INDEX session_last_events_listed ON session_last_events (agent_id, created_at, session_id);

INSERT INTO session_last_events (session_id, agent_id, seq, created_at)
SELECT id, agent_id, last_seq, updated_at FROM session_heads;

CREATE FUNCTION seri_enter_the_list() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO session_last_events (session_id, agent_id, seq, created_at)
    VALUES (NEW.id, NEW.agent_id, 0, NEW.created_at)
    ON CONFLICT (session_id) DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER sessions_enter_the_list AFTER INSERT ON sessions
    FOR EACH ROW EXECUTE FUNCTION seri_enter_the_list();

CREATE FUNCTION seri_move_to_the_fork_point() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE session_last_events SET seq = NEW.fork_seq
    WHERE session_id = NEW.session_id AND seq < NEW.fork_seq;
    RETURN NULL;
END
$$;

CREATE TRIGGER session_forks_move_the_last_event AFTER INSERT ON session_forks
    FOR EACH ROW EXECUTE FUNCTION seri_move_to_the_fork_point();

CREATE OR REPLACE FUNCTION seri_move_the_last_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO session_last_events (session_id, agent_id, seq, created_at)
    SELECT DISTINCT ON (n.session_id) n.session_id, s.agent_id, n.seq, n.created_at
    FROM new_events AS n JOIN sessions AS s ON s.id = n.session_id
    ORDER BY n.session_id, n.seq DESC
    ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, created_at = excluded.created_at
        WHERE excluded.seq > session_last_events.seq;
    RETURN NULL;
END
$$;

CREATE TRIGGER session_events_move_the_last_event AFTER INSERT ON session_events
    REFERENCING NEW TABLE AS new_events
    FOR EACH STATEMENT EXECUTE FUNCTION seri_move_the_last_event();

CREATE VIEW session_list_heads AS
SELECT l.session_id AS id, l.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       l.seq AS last_seq, l.created_at AS updated_at, s.parent_run_id
FROM session_last_events AS l
JOIN sessions AS s ON s.id = l.session_id AND s.agent_id = l.agent_id;

-- migration 12: pins, and pruning whole sessions (SQLite migration 20)

CREATE TABLE session_pins (
    session_id TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES sessions (id),
    agent_id   TEXT COLLATE "C" NOT NULL,
    pinned_at  BIGINT NOT NULL
);

CREATE TABLE session_prunes (
    session_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    agent_id   TEXT COLLATE "C" NOT NULL,
    prune_id   TEXT COLLATE "C" NOT NULL,
    bytes      BIGINT NOT NULL CHECK (bytes >= 0),
    reason     TEXT   NOT NULL CHECK (reason IN ('age', 'budget')),
    pruned_at  BIGINT NOT NULL
);

CREATE INDEX session_prunes_by_prune ON session_prunes (prune_id);

-- Events and edges are still never deleted one by one: only together with
-- their whole session, once a prune recorded it (see SQLite's migration 20).
CREATE FUNCTION seri_refuse_event_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM session_prunes WHERE session_id = OLD.session_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'session_events is append-only: rows are never deleted but with their pruned session'
        USING ERRCODE = 'restrict_violation';
END
$$;

CREATE FUNCTION seri_refuse_edge_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM session_prunes WHERE session_id = OLD.successor_session_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'session_continuations is append-only: rows are never deleted but with their pruned sessions'
        USING ERRCODE = 'restrict_violation';
END
$$;

DROP TRIGGER session_events_are_never_deleted ON session_events;
CREATE TRIGGER session_events_are_never_deleted BEFORE DELETE ON session_events
    FOR EACH ROW EXECUTE FUNCTION seri_refuse_event_delete();
DROP TRIGGER session_continuations_are_never_deleted ON session_continuations;
CREATE TRIGGER session_continuations_are_never_deleted BEFORE DELETE ON session_continuations
    FOR EACH ROW EXECUTE FUNCTION seri_refuse_edge_delete();

CREATE INDEX run_jobs_by_any_session ON run_jobs (session_id);
CREATE INDEX session_attachments_by_content ON session_attachments (sha256);

-- migration 13: full-text search of every event (SQLite migration 21)

-- See SQLite's migration 21. Here one row per event holds the `tsvector`
-- of its folded words (the store splits and folds them as SQLite's
-- tokenizer does, so both backends find the same events), NULL for an
-- event without text, under a GIN index. The event's insert statement
-- writes it too (`db/write.rs`), so an append costs no statement more.
CREATE TABLE event_search (
    session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id),
    seq        BIGINT NOT NULL,
    words      tsvector,
    PRIMARY KEY (session_id, seq)
);

CREATE INDEX event_search_words ON event_search USING GIN (words);

-- migration 14: forks an editor makes (SQLite migration 23)

-- `acp` (an editor's `session/fork`, through `seri acp`) joins the words
-- of `session_forks.via`.
ALTER TABLE session_forks DROP CONSTRAINT session_forks_via_check;
ALTER TABLE session_forks ADD CONSTRAINT session_forks_via_check
    CHECK (via IN ('cli', 'repl', 'api', 'import', 'acp'));
