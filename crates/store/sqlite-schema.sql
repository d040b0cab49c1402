-- seri's SQLite schema: the whole of it, as the migrations that build it.
--
-- Each migration starts at a line `-- migration N: title` and runs once, in
-- one `BEGIN IMMEDIATE` transaction, on a database whose `PRAGMA user_version`
-- is below N; the same transaction sets user_version to N. To change the
-- schema, append a migration at the end of this file and bump
-- `SCHEMA_VERSION` in `src/schema.rs`. Never edit a migration that has
-- shipped: databases in the field have already run it.
--
-- `PRAGMA application_id` is set by the store (`APPLICATION_ID`, "SERI"), so a
-- seri database is told apart from any other SQLite file.
--
-- Conventions: ids are lowercase hyphenated UUID text (time-ordered v7, so
-- text order is creation order); times are Unix milliseconds; JSON is
-- camelCase text. Tables are STRICT, so a value of the wrong type is refused
-- rather than stored.

-- migration 1: sessions, append-only events, continuation edges

-- One row per session. The creation facts (seri_core::SessionSeed) never
-- change. The title columns are cached: the fold of the seed and the
-- session's events, kept here so lists need no fold, and rebuilt and checked
-- by `Store::check_cached_columns`. They change rarely (a status call, the
-- first user message), so an append almost never rewrites this row.
CREATE TABLE sessions (
    id           TEXT    NOT NULL PRIMARY KEY,
    -- The owner. Every read and write is scoped to one agent.
    agent_id     TEXT    NOT NULL,
    -- The working directory the session was started in.
    cwd          TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    -- The rest of the seed as JSON (title, description, title source, model
    -- override, plan, parent run, frozen system prompt, and whatever later
    -- seeds add): new creation facts need no migration.
    seed         TEXT    NOT NULL,
    -- Cached: title, description and who set the title (NULL: nobody yet).
    title        TEXT    NOT NULL DEFAULT '',
    description  TEXT    NOT NULL DEFAULT '',
    title_source TEXT
) STRICT;

-- An agent's sessions, optionally in one working directory.
CREATE INDEX sessions_by_agent_cwd ON sessions (agent_id, cwd);

-- The truth: every session's transcript, append-only. `seq` starts at 1 in
-- each session and has no gaps; the store assigns it inside the appending
-- transaction.
CREATE TABLE session_events (
    id             TEXT    NOT NULL PRIMARY KEY,
    session_id     TEXT    NOT NULL REFERENCES sessions (id),
    seq            INTEGER NOT NULL CHECK (seq >= 1),
    -- The event's `type` (seri_core::EventBody::kind), snake_case.
    type           TEXT    NOT NULL,
    -- seri_core::EVENT_FORMAT_VERSION when the row was written.
    format_version INTEGER NOT NULL,
    -- The body as JSON text (seri_core::EventBody::to_payload), without `type`.
    payload        TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    UNIQUE (session_id, seq)
) STRICT;

-- The store has no UPDATE or DELETE path for events; these make the database
-- itself refuse one, whoever writes to it.
CREATE TRIGGER session_events_are_never_updated BEFORE UPDATE ON session_events
BEGIN
    SELECT RAISE(ABORT, 'session_events is append-only: rows are never updated');
END;
CREATE TRIGGER session_events_are_never_deleted BEFORE DELETE ON session_events
BEGIN
    SELECT RAISE(ABORT, 'session_events is append-only: rows are never deleted');
END;

-- Each session with its head: the newest seq (0 while empty) and when the
-- newest event was appended (created_at while empty). They are read from the
-- events through the (session_id, seq) index instead of being cached, so an
-- append writes no row but its events. The store stamps a session's events
-- with non-decreasing times, so the newest event's time is also the latest.
CREATE VIEW session_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(e.seq, 0) AS last_seq,
       coalesce(e.created_at, s.created_at) AS updated_at
FROM sessions AS s
LEFT JOIN session_events AS e
    ON e.session_id = s.id
   AND e.seq = (SELECT max(seq) FROM session_events WHERE session_id = s.id);

-- One row per continuation edge, written in the same transaction as the
-- successor session and its first two events.
CREATE TABLE session_continuations (
    id                     TEXT    NOT NULL PRIMARY KEY,
    predecessor_session_id TEXT    NOT NULL REFERENCES sessions (id),
    -- A session has at most one immediate predecessor.
    successor_session_id   TEXT    NOT NULL UNIQUE REFERENCES sessions (id),
    -- The first session of the chain.
    origin_session_id      TEXT    NOT NULL REFERENCES sessions (id),
    -- The `continue_session` call: with the predecessor, the idempotency key.
    tool_call_id           TEXT    NOT NULL,
    -- The user message the successor answers, in the predecessor.
    initiating_event_id    TEXT    NOT NULL REFERENCES session_events (id),
    -- seri_core::ContinueReason, snake_case.
    reason                 TEXT    NOT NULL,
    -- seri_core::SessionContinuationManifest as CBOR.
    manifest_cbor          BLOB    NOT NULL,
    created_at             INTEGER NOT NULL,
    -- Also serves "edges out of a predecessor" and "how many successors".
    UNIQUE (predecessor_session_id, tool_call_id)
) STRICT;

-- Edges are durable records of what happened: never rewritten.
CREATE TRIGGER session_continuations_are_never_updated BEFORE UPDATE ON session_continuations
BEGIN
    SELECT RAISE(ABORT, 'session_continuations is append-only: rows are never updated');
END;
CREATE TRIGGER session_continuations_are_never_deleted BEFORE DELETE ON session_continuations
BEGIN
    SELECT RAISE(ABORT, 'session_continuations is append-only: rows are never deleted');
END;

-- migration 2: runs

-- One row per run: the work done for one task in one session, over one or
-- more model turns. A run is inserted as `running` when it starts and
-- finished once with its status and result. Runs are the run loop's record
-- of what it did, not conversation history: the transcript is in
-- session_events, and nothing is derived from this table but run lists.
CREATE TABLE runs (
    id            TEXT    NOT NULL PRIMARY KEY,
    session_id    TEXT    NOT NULL REFERENCES sessions (id),
    -- interactive, delegated_child, typed_child or script.
    kind          TEXT    NOT NULL,
    -- interactive or background.
    lane          TEXT    NOT NULL,
    -- For a child run: the run that delegated it.
    parent_run_id TEXT    REFERENCES runs (id),
    -- running, succeeded, max_turns, failed or cancelled.
    status        TEXT    NOT NULL,
    -- camelCase JSON: turns, usage, result text, continuedTo, error.
    result        TEXT,
    started_at    INTEGER NOT NULL,
    finished_at   INTEGER
) STRICT;

CREATE INDEX runs_by_session ON runs (session_id, started_at);

-- migration 3: legacy imports

-- One row per `.jsonl` file of an older release that an agent has read,
-- keyed by the file's path and the SHA-256 of its bytes: the record that
-- makes importing idempotent. The row is written in the same transaction as
-- the session and all its events, so a file is imported wholly or not at
-- all. A file the older release appended to afterwards has new bytes, is
-- imported again as a new session, and gets a row of its own. The files
-- themselves are only ever read.
CREATE TABLE legacy_imports (
    id          TEXT    NOT NULL PRIMARY KEY,
    -- The importing agent: every lookup names it, like every session read.
    agent_id    TEXT    NOT NULL,
    -- The file's canonical absolute path.
    path        TEXT    NOT NULL,
    -- Lowercase hex SHA-256 of the bytes that were imported.
    sha256      TEXT    NOT NULL,
    -- Their length.
    bytes       INTEGER NOT NULL CHECK (bytes >= 0),
    -- The file's modification time when it was read; NULL where the file
    -- system keeps none.
    modified_at INTEGER,
    -- The `id` of the file's session header, if it had one.
    legacy_id   TEXT,
    -- The session the file became; NULL when it held no importable line,
    -- which is recorded too so the same bytes are not examined and
    -- reported again on every start.
    session_id  TEXT    UNIQUE REFERENCES sessions (id),
    -- How many events the session got.
    events      INTEGER NOT NULL CHECK (events >= 0),
    imported_at INTEGER NOT NULL,
    UNIQUE (agent_id, path, sha256)
) STRICT;

-- migration 4: trajectories, file checkpoints and settings

-- One row per recorded run: the trajectory's header. A trajectory is the run
-- loop's account of what a run did (tool calls and results, checkpoints,
-- denials, checks, edits, usage, retries, how it ended), kept to compare
-- runs; it is not conversation history, which stays in session_events.
-- Trajectories age out (`AgentStore::prune_trajectories`); the runs and
-- the sessions they belong to never do.
CREATE TABLE trajectories (
    run_id     TEXT    NOT NULL PRIMARY KEY REFERENCES runs (id),
    session_id TEXT    NOT NULL REFERENCES sessions (id),
    -- camelCase JSON: the settings in force (seri_store::TrajectoryHeader).
    header     TEXT    NOT NULL,
    started_at INTEGER NOT NULL
) STRICT;

CREATE INDEX trajectories_by_session ON trajectories (session_id, started_at);

-- A trajectory's records, numbered 1, 2, 3, … in the order they happened.
-- Values over the elision threshold are stored as a marker with their
-- original size, never whole.
CREATE TABLE trajectory_records (
    run_id TEXT    NOT NULL REFERENCES trajectories (run_id),
    ord    INTEGER NOT NULL CHECK (ord >= 1),
    -- tool_call, tool_result, checkpoint, denial, check, edit, usage, retry,
    -- compaction, compaction_failed or ended.
    kind   TEXT    NOT NULL,
    -- camelCase JSON of the record, `kind` included.
    data   TEXT    NOT NULL,
    at     INTEGER NOT NULL,
    PRIMARY KEY (run_id, ord)
) STRICT, WITHOUT ROWID;

-- The legacy files (`legacy_imports`) whose trajectory seri has forgotten
-- because the file's modification time fell out of the retention window.
-- Forgetting writes only this row: the file is never touched, and the
-- session imported from it keeps every event.
CREATE TABLE trajectory_legacy_prunes (
    legacy_import_id TEXT    NOT NULL PRIMARY KEY REFERENCES legacy_imports (id),
    -- The modification time the decision went by.
    file_modified_at INTEGER NOT NULL,
    pruned_at        INTEGER NOT NULL
) STRICT;

-- File contents saved before a tool changed them, by SHA-256: each content
-- is stored once however many checkpoints name it.
CREATE TABLE checkpoint_blobs (
    sha256  TEXT    NOT NULL PRIMARY KEY,
    bytes   INTEGER NOT NULL CHECK (bytes >= 0),
    content BLOB    NOT NULL
) STRICT;

-- The sessions that have undo history, per project (working directory). A
-- session is touched when a checkpoint is taken in it or a run starts in it;
-- only the most recently touched live ones per project keep their
-- checkpoints (`CHECKPOINT_SESSIONS_PER_PROJECT`). An older one is retired:
-- its checkpoint_files rows go, this row stays (`live` 0, `retired_at`), and
-- its conversation is never touched. A retired session that gets a new
-- checkpoint is live again, for the turns from `covers_from_seq` on.
CREATE TABLE checkpoint_sessions (
    session_id      TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id),
    cwd             TEXT    NOT NULL,
    touched_at      INTEGER NOT NULL,
    live            INTEGER NOT NULL CHECK (live IN (0, 1)),
    covers_from_seq INTEGER NOT NULL CHECK (covers_from_seq >= 1),
    retired_at      INTEGER
) STRICT;

CREATE INDEX checkpoint_sessions_by_project ON checkpoint_sessions (cwd, live, touched_at);

-- One row per file a write_file or edit call was about to change: the
-- content before (or its absence), and the content the tool left.
CREATE TABLE checkpoint_files (
    id            TEXT    NOT NULL PRIMARY KEY,
    session_id    TEXT    NOT NULL REFERENCES checkpoint_sessions (session_id),
    -- The seq of the user message whose turn the call belongs to: each user
    -- turn is a checkpoint boundary.
    turn_seq      INTEGER NOT NULL CHECK (turn_seq >= 1),
    run_id        TEXT,
    tool_call_id  TEXT    NOT NULL,
    -- The absolute path the tool resolved.
    path          TEXT    NOT NULL,
    -- Before the call: NULL hash for a file that did not exist.
    before_sha256 TEXT,
    before_bytes  INTEGER,
    -- 1 when the content is in checkpoint_blobs (0: too large to keep).
    before_kept   INTEGER NOT NULL CHECK (before_kept IN (0, 1)),
    -- After the call: `unknown` until the call ends (a crash leaves it so),
    -- then `absent` or `present` with the hash.
    after_state   TEXT    NOT NULL CHECK (after_state IN ('unknown', 'absent', 'present')),
    after_sha256  TEXT,
    after_bytes   INTEGER,
    created_at    INTEGER NOT NULL
) STRICT;

CREATE INDEX checkpoint_files_by_turn ON checkpoint_files (session_id, turn_seq);

-- Small named settings a person changes from inside seri (`/trajectory
-- on|off`), per agent. config.json stays the person's file: seri never
-- rewrites it.
CREATE TABLE settings (
    agent_id   TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (agent_id, key)
) STRICT;

-- migration 5: finding a run's children

-- `child_runs(parent)` and the session tree look runs up by their parent.
CREATE INDEX runs_by_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;

-- migration 6: session leases and the queue of runs waiting for them

-- A run owns its session while it runs: one row per session whose history a
-- run (or a short write outside a run, `run_id` NULL: posting a message,
-- `/compact`, `/rewind`) is changing now. Whoever holds the lease is the
-- only writer of that session's conversation; everyone else waits in
-- `session_waiters` or is refused. The row names its holder so a refusal can
-- say who: the process id, the host, the process's start time (so a reused
-- pid is not taken for the holder), and a per-runtime instance id (so two
-- runtimes of one process are told apart). A holder on this host is alive
-- exactly while its process is; one on another host while it renews
-- `expires_at` (its heartbeat).
CREATE TABLE session_leases (
    session_id     TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id),
    run_id         TEXT,
    owner_instance TEXT    NOT NULL,
    owner_pid      INTEGER NOT NULL,
    owner_host     TEXT    NOT NULL,
    -- The holder's process start time in clock ticks since boot (Linux
    -- /proc/PID/stat field 22); 0 where the platform has none.
    owner_started  INTEGER NOT NULL,
    acquired_at    INTEGER NOT NULL,
    heartbeat_at   INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL
) STRICT;

-- Runs waiting for a session's lease, in the order they are served:
-- interactive (lane_rank 0) before background (1), then first come first
-- served. A waiter renews its row while it waits; a dead waiter's row is
-- dropped by whoever finds it, so it never holds the queue up.
CREATE TABLE session_waiters (
    id             TEXT    NOT NULL PRIMARY KEY,
    session_id     TEXT    NOT NULL REFERENCES sessions (id),
    lane_rank      INTEGER NOT NULL CHECK (lane_rank IN (0, 1)),
    owner_instance TEXT    NOT NULL,
    owner_pid      INTEGER NOT NULL,
    owner_host     TEXT    NOT NULL,
    owner_started  INTEGER NOT NULL,
    enqueued_at    INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL
) STRICT;

CREATE INDEX session_waiters_in_order ON session_waiters (session_id, lane_rank, enqueued_at, id);

-- A run is `running` only while it holds its session's lease; the runs
-- still marked running are found through this index to be marked
-- `interrupted` once their holder is gone.
CREATE INDEX runs_running ON runs (session_id) WHERE status = 'running';

-- migration 7: server tokens

-- The bearer tokens `seri serve` accepts, one row each, by the SHA-256 of
-- the token (the token itself is printed once and never stored). A token
-- belongs to one agent: every request made with it reads and writes that
-- agent's sessions only.
CREATE TABLE server_tokens (
    token_sha256 TEXT    NOT NULL PRIMARY KEY,
    agent_id     TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;

-- migration 8: legacy files that could not be read

-- A legacy file seri could not read (a folder, a FIFO, a dangling link, no
-- permission), by its version: an unreadable file has no bytes to hash, so
-- its metadata stands for them (device, inode, size, modification time,
-- mode, and the kind of error). Each version is reported once: a start that
-- finds the same version again tries the file and says nothing; a file
-- that changed and still cannot be read is reported again.
CREATE TABLE legacy_unreadable (
    agent_id TEXT    NOT NULL,
    -- The file's canonical absolute path, as in legacy_imports.
    path     TEXT    NOT NULL,
    version  TEXT    NOT NULL,
    -- What the file system said the first time.
    error    TEXT    NOT NULL,
    seen_at  INTEGER NOT NULL,
    PRIMARY KEY (agent_id, path, version)
) STRICT;

-- migration 9: folded session snapshots

-- A session's view (seri_core::SessionInfo, without its continuation
-- links) folded from its seed and its events 1..=seq, so reading it costs
-- the events after `seq` rather than the whole history. The store writes a
-- snapshot in the transaction of an append that takes the session past a
-- multiple of SNAPSHOT_EVERY_EVENTS; a reader folds the rest. Like the
-- cached title columns it is a cache: deleting the row changes nothing but
-- the cost of the next read, and `Store::check_cached_columns` compares it with a fold.
CREATE TABLE session_snapshots (
    session_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id),
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    -- The SessionInfo as JSON.
    info       TEXT    NOT NULL
) STRICT;

-- Each session's parent run, on its row: a session list leaves child
-- sessions out, and shows whose child one is, without decoding its seed.
-- It is a creation fact, so it never changes. (The head, newest seq and its
-- time, is still read from the events through the (session_id, seq) index:
-- caching it would cost every append a write to the session's row.)
ALTER TABLE sessions ADD COLUMN parent_run_id TEXT;
UPDATE sessions SET parent_run_id = json_extract(seed, '$.parentRunId');

DROP VIEW session_heads;
CREATE VIEW session_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(e.seq, 0) AS last_seq,
       coalesce(e.created_at, s.created_at) AS updated_at,
       s.parent_run_id
FROM sessions AS s
LEFT JOIN session_events AS e
    ON e.session_id = s.id
   AND e.seq = (SELECT max(seq) FROM session_events WHERE session_id = s.id);

-- migration 10: a covering index for session lists

-- A session's row holds its seed (most of it the frozen prompt, kilobytes)
-- before its title and description, so a list that reads the rows touches
-- about one page per session. This index holds what a list shows, so a list
-- reads the index alone. Appends never write a session's row, so it costs
-- them nothing; a status change updates it with the row.
CREATE INDEX sessions_listed
    ON sessions (agent_id, id, cwd, created_at, title, description, title_source, parent_run_id);

-- migration 11: the shared queue of runs

-- One row per message a server was asked to answer (`POST …/messages`):
-- the work, claimed by one server at a time. Several `seri serve` processes
-- share one database (PostgreSQL on many machines, or one SQLite file on
-- one) and so one queue: a server claims a job (on PostgreSQL with
-- `FOR UPDATE SKIP LOCKED`, so two servers never claim the same one) for
-- `claim_expires_at`, renews the claim while it runs, and records the
-- outcome once. A claim that is not renewed (its server stopped) expires,
-- and another server takes the job over: it answers the message the first
-- one posted (found by `posted_event_id`, or by the message's `queuedAs`
-- meta when the first one stopped before recording it) or posts it if it
-- never was, so each message is posted once and answered by one run at a
-- time. The conversation stays in session_events; this is the servers'
-- record of who does what.
CREATE TABLE run_jobs (
    id               TEXT    NOT NULL PRIMARY KEY,
    agent_id         TEXT    NOT NULL,
    session_id       TEXT    NOT NULL REFERENCES sessions (id),
    -- camelCase JSON: the message, its lane and turn budget.
    request          TEXT    NOT NULL,
    -- queued, running or done.
    state            TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'done')),
    -- The claiming server (`host pid instance`) and until when its claim holds.
    claimed_by       TEXT,
    claim_expires_at INTEGER,
    -- How many times a server claimed it; a job is given up after a few.
    attempts         INTEGER NOT NULL CHECK (attempts >= 0),
    -- The message, once posted, and the run answering it.
    posted_event_id  TEXT,
    run_id           TEXT,
    -- 1 once someone asked to cancel it (on any server).
    cancel_requested INTEGER NOT NULL CHECK (cancel_requested IN (0, 1)),
    -- camelCase JSON: what the run came to (the message response).
    outcome          TEXT,
    enqueued_at      INTEGER NOT NULL,
    finished_at      INTEGER
) STRICT;

CREATE INDEX run_jobs_open ON run_jobs (state, enqueued_at, id) WHERE state <> 'done';
CREATE INDEX run_jobs_by_session ON run_jobs (session_id) WHERE state <> 'done';

-- migration 12: an index of context marks

-- Where a session's working context starts is decided by its newest recap
-- (`context_compacted`) and the rewinds (`context_rewound`) after it. This
-- index holds only those events, so a turn finds the newest recap of a long
-- history in a few rows instead of walking the history back to it. Other
-- events are not in it, so appending a message costs it nothing.
CREATE INDEX session_events_context_marks ON session_events (session_id, seq)
    WHERE type IN ('context_compacted', 'context_rewound');

-- migration 13: each session's newest event, for session lists

-- A session list shows each session's newest seq and the time it was
-- written. Read from the events, that costs every listed session two
-- searches of the (session_id, seq) index and a row of session_events; this
-- table holds them, one short row per session with events. A trigger keeps
-- it in the transaction of every insert into session_events, so no write
-- path can forget it and a rolled-back append leaves it as it was. Only
-- lists read it (`session_list_heads`): an append still takes its next seq
-- from the events themselves. Like the snapshots it is a cache:
-- `Store::check_cached_columns` compares it with the events, and a session
-- whose row is missing is listed from its events.
CREATE TABLE session_last_events (
    session_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id),
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO session_last_events (session_id, seq, created_at)
SELECT id, last_seq, updated_at FROM session_heads WHERE last_seq > 0;

CREATE TRIGGER session_events_move_the_last_event AFTER INSERT ON session_events
BEGIN
    INSERT INTO session_last_events (session_id, seq, created_at)
    VALUES (NEW.session_id, NEW.seq, NEW.created_at)
    ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, created_at = excluded.created_at
        WHERE excluded.seq > session_last_events.seq;
END;

-- `session_heads` as a list reads it: the same columns, the head from the
-- cache (or, for a session without a cached row, from its events).
CREATE VIEW session_list_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(l.seq, (SELECT max(seq) FROM session_events WHERE session_id = s.id), 0) AS last_seq,
       coalesce(l.created_at,
                (SELECT created_at FROM session_events WHERE session_id = s.id ORDER BY seq DESC LIMIT 1),
                s.created_at) AS updated_at,
       s.parent_run_id
FROM sessions AS s
LEFT JOIN session_last_events AS l ON l.session_id = s.id;

-- migration 14: an index of rule messages

-- A glob rule fires once per session: the first time a turn works on a file
-- it covers, its text is appended as a message whose meta names the rule.
-- Whether a rule fired is asked of those messages only; this index holds
-- them and nothing else, so the question costs the rules that fired, not a
-- decode of every message of a long history.
CREATE INDEX session_events_rule_messages ON session_events (session_id, seq)
    WHERE type = 'message' AND json_extract(payload, '$.meta.rule') IS NOT NULL;

-- migration 15: an index of tool call ids

-- Every call of a session has an id no other call of it has: a model that
-- sends an id again (some servers count from `call_0` every turn) gets a
-- fresh one, or a result would pair with the wrong call. Whether an id was
-- used is asked of this index, which holds only the calls, so a long history
-- costs one lookup per call.
CREATE INDEX session_events_call_ids ON session_events (session_id, json_extract(payload, '$.id'))
    WHERE type = 'tool_call';

-- migration 16: forks by reference

-- A fork is a session that branches from another (its parent) at a seq and
-- shares the parent's events up to it without copying them: one row here,
-- written in the transaction that creates the fork's `sessions` row, and
-- never changed. The fork's own events are numbered from `fork_seq + 1`, so
-- reading it is reading the parent's events 1..=fork_seq (through the
-- parent's own edge, when the parent is a fork too) and then its own, under
-- one numbering. Continuation edges and fork edges together are a session's
-- lineage.
CREATE TABLE session_forks (
    session_id        TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id),
    parent_session_id TEXT    NOT NULL REFERENCES sessions (id),
    -- The parent's newest event the fork shares; 0 shares none.
    fork_seq          INTEGER NOT NULL CHECK (fork_seq >= 0),
    created_at        INTEGER NOT NULL,
    -- Who asked: cli, repl, api or import (seri_core::ForkVia).
    via               TEXT    NOT NULL CHECK (via IN ('cli', 'repl', 'api', 'import')),
    CHECK (session_id <> parent_session_id)
) STRICT;

CREATE INDEX session_forks_by_parent ON session_forks (parent_session_id, created_at);

-- A fork's head before it has events of its own is its fork point: its
-- next event is `fork_seq + 1`.
DROP VIEW session_heads;
CREATE VIEW session_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(e.seq, f.fork_seq, 0) AS last_seq,
       coalesce(e.created_at, s.created_at) AS updated_at,
       s.parent_run_id
FROM sessions AS s
LEFT JOIN session_forks AS f ON f.session_id = s.id
LEFT JOIN session_events AS e
    ON e.session_id = s.id
   AND e.seq = (SELECT max(seq) FROM session_events WHERE session_id = s.id);

DROP VIEW session_list_heads;
CREATE VIEW session_list_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(l.seq, (SELECT max(seq) FROM session_events WHERE session_id = s.id),
                (SELECT fork_seq FROM session_forks WHERE session_id = s.id), 0) AS last_seq,
       coalesce(l.created_at,
                (SELECT created_at FROM session_events WHERE session_id = s.id ORDER BY seq DESC LIMIT 1),
                s.created_at) AS updated_at,
       s.parent_run_id
FROM sessions AS s
LEFT JOIN session_last_events AS l ON l.session_id = s.id;

-- migration 17: attachments in the database

-- An attachment's bytes, once per content: `sha256` is the hex SHA-256 of
-- `bytes`. Every server on a database resolves `attachment:<id>` from
-- here; the attachments directory is a cache of it (a missing file is
-- written again from these rows). Rows are never changed.
CREATE TABLE attachment_blobs (
    sha256 TEXT NOT NULL PRIMARY KEY,
    bytes  BLOB NOT NULL
) STRICT;

-- Which attachment ids resolve in which session, and to what content: one
-- row when a file is stored for a session, and one more for each session a
-- continuation copies the message that carries it into.
CREATE TABLE session_attachments (
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    attachment_id TEXT NOT NULL,
    sha256        TEXT NOT NULL REFERENCES attachment_blobs (sha256),
    PRIMARY KEY (session_id, attachment_id)
) STRICT;

-- migration 18: idempotency keys of queued messages

-- A client that lost the answer to a posted message (its server died, the
-- connection dropped) posts it again under the same `Idempotency-Key`: the
-- key finds the job the first post made instead of queueing a second. The
-- digest is of the message as posted, so a different message under a key
-- already used is refused rather than mistaken for a retry. Unique per
-- agent and session; a job without a key has neither.
ALTER TABLE run_jobs ADD COLUMN idempotency_key TEXT;
ALTER TABLE run_jobs ADD COLUMN request_digest TEXT;

CREATE UNIQUE INDEX run_jobs_idempotency ON run_jobs (agent_id, session_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- migration 19: every session in the list's order, by an index

-- A page of a session list (the newest twenty, `GET /api/sessions?limit=20`)
-- visited every session and its newest event, then sorted: it cost more
-- the more sessions the store held. `session_last_events` now holds a row
-- for every session, events or not, with its owner, and an index in a
-- list's order (newest first, ties by id), so a page reads its own rows and
-- stops. A session without events of its own has its head there: its fork
-- point (0 for none) and its creation time, as `session_heads` says.
-- Triggers keep it in the transaction of every insert into `sessions`,
-- `session_forks` and `session_events`, so no write path can forget it. It
-- is still a cache: `Store::check_cached_columns` compares each row with
-- the fold of the session's events and rewrites one that differs.
DROP VIEW session_list_heads;
DROP TRIGGER session_events_move_the_last_event;
DROP TABLE session_last_events;

CREATE TABLE session_last_events (
    session_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id),
    agent_id   TEXT    NOT NULL,
    -- The session's newest seq: its newest own event's, else its fork
    -- point (0 for a session that shares none).
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    -- When that event was written, else when the session was created: the
    -- time lists sort by (a session's `updatedAt`).
    created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX session_last_events_listed ON session_last_events (agent_id, created_at, session_id);

INSERT INTO session_last_events (session_id, agent_id, seq, created_at)
SELECT id, agent_id, last_seq, updated_at FROM session_heads;

CREATE TRIGGER sessions_enter_the_list AFTER INSERT ON sessions
BEGIN
    INSERT INTO session_last_events (session_id, agent_id, seq, created_at)
    VALUES (NEW.id, NEW.agent_id, 0, NEW.created_at)
    ON CONFLICT (session_id) DO NOTHING;
END;

CREATE TRIGGER session_forks_move_the_last_event AFTER INSERT ON session_forks
BEGIN
    UPDATE session_last_events SET seq = NEW.fork_seq
    WHERE session_id = NEW.session_id AND seq < NEW.fork_seq;
END;

CREATE TRIGGER session_events_move_the_last_event AFTER INSERT ON session_events
BEGIN
    INSERT INTO session_last_events (session_id, agent_id, seq, created_at)
    SELECT NEW.session_id, agent_id, NEW.seq, NEW.created_at FROM sessions WHERE id = NEW.session_id
    ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, created_at = excluded.created_at
        WHERE excluded.seq > session_last_events.seq;
END;

-- A list reads the sessions from here, in the index's order (`CROSS JOIN`
-- keeps SQLite's planner from starting at `sessions` and sorting); the
-- join names the owner too, so each session's row is read from
-- `sessions_listed`.
CREATE VIEW session_list_heads AS
SELECT l.session_id AS id, l.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       l.seq AS last_seq, l.created_at AS updated_at, s.parent_run_id
FROM session_last_events AS l
CROSS JOIN sessions AS s ON s.id = l.session_id AND s.agent_id = l.agent_id;

-- migration 20: pins, and pruning whole sessions

-- Sessions a person pinned (`seri sessions pin ID`): pruning never takes
-- them, nor their lineage. A pin is the person's choice about keeping a
-- session, not part of its conversation, so it is a row of its own, not
-- an event: appending an event would make the session look active (and
-- so young) to the very rule the pin is about, and nothing is folded from
-- it. Unpinning deletes the row.
CREATE TABLE session_pins (
    session_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id),
    agent_id   TEXT    NOT NULL,
    pinned_at  INTEGER NOT NULL
) STRICT;

-- One row per session a prune removed, written in the prune's transaction
-- before anything of the session is deleted: the record that nothing goes
-- silently, and the one key that lets the append-only tables give up a
-- session's rows (the triggers below). The session's own row is gone, so
-- there is no reference to it.
CREATE TABLE session_prunes (
    session_id TEXT    NOT NULL PRIMARY KEY,
    agent_id   TEXT    NOT NULL,
    -- The prune: every session it removed shares this id.
    prune_id   TEXT    NOT NULL,
    -- What the session held (events, trajectories), in bytes.
    bytes      INTEGER NOT NULL CHECK (bytes >= 0),
    -- `age` or `budget`.
    reason     TEXT    NOT NULL CHECK (reason IN ('age', 'budget')),
    pruned_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX session_prunes_by_prune ON session_prunes (prune_id);

-- Events and edges are still never deleted one by one: only together with
-- their whole session, once a prune recorded it above.
DROP TRIGGER session_events_are_never_deleted;
CREATE TRIGGER session_events_are_never_deleted BEFORE DELETE ON session_events
WHEN NOT EXISTS (SELECT 1 FROM session_prunes WHERE session_id = OLD.session_id)
BEGIN
    SELECT RAISE(ABORT, 'session_events is append-only: rows are never deleted but with their pruned session');
END;
DROP TRIGGER session_continuations_are_never_deleted;
CREATE TRIGGER session_continuations_are_never_deleted BEFORE DELETE ON session_continuations
WHEN NOT EXISTS (SELECT 1 FROM session_prunes WHERE session_id = OLD.successor_session_id)
BEGIN
    SELECT RAISE(ABORT, 'session_continuations is append-only: rows are never deleted but with their pruned sessions');
END;

-- A prune deletes a session's jobs and attachment links by these, and
-- finds the contents no session names any more, in time linear in what
-- it removes.
CREATE INDEX run_jobs_by_any_session ON run_jobs (session_id);
CREATE INDEX session_attachments_by_content ON session_attachments (sha256);

-- migration 21: full-text search of every event

-- What a person can search for in each event (message and thinking text,
-- a tool call's name and arguments, a tool's result, titles, recaps and
-- handoffs: `seri_store::search::document`), written by the append in the
-- events' own transaction, so the index is never behind the events and
-- there is nothing to rebuild after a crash. Every event has a row in
-- `search_docs` (an event without text too: "not yet indexed" is one
-- lookup); one with text has the same rowid in `search_text`, an FTS5
-- table without content of its own: the text stays in the event's payload,
-- and a hit's snippet is cut from it again. Diacritics are kept, as
-- PostgreSQL's `simple` configuration keeps them. The events written
-- before this migration are indexed by the store right after it, in the
-- same transaction (`db/search.rs`, `backfill`).
CREATE TABLE search_docs (
    doc        INTEGER NOT NULL PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES sessions (id),
    seq        INTEGER NOT NULL,
    UNIQUE (session_id, seq)
) STRICT;

CREATE VIRTUAL TABLE search_text USING fts5 (
    text,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 0'
);

-- migration 22: the search index's newest documents, gathered before FTS5

-- FTS5 writes a segment of its index at every commit, which costs more
-- than the rest of a small append. So an appended event's text goes into
-- this plain table, in the append's own transaction, and moves into
-- `search_text` with the others gathered there: by the append that makes
-- them a batch (`db/search.rs`, `PENDING_BATCH`), and before any search
-- reads the index, so a search still finds every event written before it
-- and there is still nothing to rebuild after a crash.
CREATE TABLE search_pending (
    doc  INTEGER NOT NULL PRIMARY KEY,
    text TEXT    NOT NULL
) STRICT;

-- migration 23: forks an editor makes

-- `session_forks.via` names who asked for a fork; `acp` (an editor's
-- `session/fork`, through `seri acp`) joins the words. SQLite cannot change
-- a CHECK in place, so the table is built again with its rows, and its
-- index, trigger and the view that reads it are made again as they were.
DROP VIEW session_heads;

CREATE TABLE session_forks_next (
    session_id        TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id),
    parent_session_id TEXT    NOT NULL REFERENCES sessions (id),
    -- The parent's newest event the fork shares; 0 shares none.
    fork_seq          INTEGER NOT NULL CHECK (fork_seq >= 0),
    created_at        INTEGER NOT NULL,
    -- Who asked: cli, repl, api, import or acp (seri_core::ForkVia).
    via               TEXT    NOT NULL CHECK (via IN ('cli', 'repl', 'api', 'import', 'acp')),
    CHECK (session_id <> parent_session_id)
) STRICT;

INSERT INTO session_forks_next (session_id, parent_session_id, fork_seq, created_at, via)
SELECT session_id, parent_session_id, fork_seq, created_at, via FROM session_forks;

DROP TABLE session_forks;
ALTER TABLE session_forks_next RENAME TO session_forks;

CREATE INDEX session_forks_by_parent ON session_forks (parent_session_id, created_at);

CREATE TRIGGER session_forks_move_the_last_event AFTER INSERT ON session_forks
BEGIN
    UPDATE session_last_events SET seq = NEW.fork_seq
    WHERE session_id = NEW.session_id AND seq < NEW.fork_seq;
END;

CREATE VIEW session_heads AS
SELECT s.id, s.agent_id, s.cwd, s.created_at, s.seed, s.title, s.description, s.title_source,
       coalesce(e.seq, f.fork_seq, 0) AS last_seq,
       coalesce(e.created_at, s.created_at) AS updated_at,
       s.parent_run_id
FROM sessions AS s
LEFT JOIN session_forks AS f ON f.session_id = s.id
LEFT JOIN session_events AS e
    ON e.session_id = s.id
   AND e.seq = (SELECT max(seq) FROM session_events WHERE session_id = s.id);
