//! [`WriteTx`]: the writes of one agent, inside one `BEGIN IMMEDIATE`
//! transaction that commits all of them or none.
//!
//! This is the only code that inserts rows. There is no update or delete of
//! events or edges anywhere in the store: appending assigns the next seqs
//! and, in the same transaction, folds the new events onto the session's
//! cached title columns, rewriting them only when they changed.

use std::path::PathBuf;

use crate::db::sql::params;
use seri_core::event::EVENT_FORMAT_VERSION;
use seri_core::{
    AgentId, ContinuationEdge, ContinuationId, Event, EventBody, SessionId, SessionInfo, SessionSeed, Timestamp,
};

use crate::attachments::{self, LinkOutcome};
use crate::changes::{ChangeKind, StoreChange};
use crate::db::read::Reader;
use crate::db::rows::{self, Cached, Db, title_source_to_sql};
use crate::db::sql::{Conn, Value};
use crate::error::{AttachmentError, DataError, LookupError, Result, StoreError, WriteError};
use crate::store::Store;

/// Writes of one agent, committed together when the closure given to
/// [`crate::AgentStore::write`] returns `Ok`, rolled back when it returns `Err`.
pub struct WriteTx<'a> {
    db: Db<'a>,
    agent: &'a AgentId,
    store: &'a Store,
    /// Attachment files linked in this transaction, removed if it rolls back.
    created_files: Vec<PathBuf>,
    /// The folded views of sessions this transaction appended to, kept by
    /// the store only once it commits: a view of events that were rolled
    /// back must never meet a head another writer reached with other events.
    live_views: Vec<SessionInfo>,
    /// What this transaction changed, told to listeners once it commits.
    announced: Vec<StoreChange>,
    /// Whether an append may take a session's head from this process's
    /// view of it instead of reading it ([`WriteTx::guess_head`]), and
    /// whether one did.
    guess: Guess,
}

/// Whether an append may guess its session's head, and whether one did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Guess {
    /// It reads the head (a transaction that cannot be run again).
    Never,
    /// It may guess (the transaction runs again if the guess was wrong).
    Allowed,
    /// One did: a wrong guess fails the commit ([`crate::db::postgres::error::seq_taken`]).
    Made,
}

impl<'a> WriteTx<'a> {
    pub(crate) fn new(db: Db<'a>, agent: &'a AgentId, store: &'a Store, guess: Guess) -> Self {
        Self { db, agent, store, created_files: Vec::new(), live_views: Vec::new(), announced: Vec::new(), guess }
    }

    /// Whether an append of this transaction guessed a session's head.
    pub(crate) fn guessed(&self) -> bool {
        self.guess == Guess::Made
    }

    /// The head of `session` as this process last left it, taken instead of
    /// read, on PostgreSQL, in a transaction that may run again: then
    /// nothing of an append waits for an answer before the `COMMIT`, and a
    /// one-event append is one round trip. The guess is checked by the
    /// server, not trusted: seqs are gapless and never deleted, so if
    /// anyone appended since, the insert of the next seq meets the
    /// session's `UNIQUE (session_id, seq)`, the transaction fails whole
    /// and runs again, reading the head. The session must be known to be
    /// this agent's ([`Db::session_known`]): an owner never changes.
    fn guess_head(&mut self, session: SessionId) -> Option<SessionInfo> {
        let Conn::Postgres(conn) = self.db.conn else { return None };
        if self.guess == Guess::Never || !self.db.session_known(self.agent, session) {
            return None;
        }
        let head = conn.take_head(session)?;
        // The session's lock, as reading the head takes it.
        self.db.lock_session(session);
        self.guess = Guess::Made;
        Some(head)
    }

    /// The connection, for the store's own modules that write other tables.
    pub(crate) fn db(&self) -> Db<'a> {
        self.db
    }

    /// The store.
    pub(crate) fn store(&self) -> &'a Store {
        self.store
    }

    /// Reads inside this transaction: they see its own writes so far.
    pub fn read(&self) -> Reader<'_> {
        Reader::new(self.db, self.agent, self.store)
    }

    /// The store clock's current time.
    pub fn now(&self) -> Timestamp {
        self.store.now()
    }

    /// A seed for a new, untitled session of this agent in `cwd`.
    pub fn new_seed(&self, cwd: impl Into<String>) -> SessionSeed {
        self.store.new_seed(self.agent, cwd)
    }

    /// A fresh continuation id.
    pub fn new_continuation_id(&self) -> ContinuationId {
        self.store.new_continuation_id()
    }

    /// Creates a session from its seed, with no events yet.
    pub fn create_session(&mut self, seed: &SessionSeed) -> Result<SessionInfo> {
        if seed.agent_id != *self.agent {
            return Err(StoreError::Write(WriteError::SeedOfAnotherAgent {
                session_id: seed.id,
                seed_agent: seed.agent_id.clone(),
                writer: self.agent.clone(),
            }));
        }
        let fail = self.db.fail("creating a session");
        let exists = "SELECT 1 FROM sessions WHERE id = ?1";
        if rows::query_first(self.db, "creating a session", exists, params![seed.id.to_string()], |_| Ok(()))?.is_some()
        {
            return Err(StoreError::Write(WriteError::SessionExists { session_id: seed.id }));
        }
        let info = SessionInfo::from_seed(seed);
        let mut stmt = self
            .db
            .conn
            .prepare_cached(
                "INSERT INTO sessions (id, agent_id, cwd, created_at, seed, title, description, title_source, \
                 parent_run_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .map_err(&fail)?;
        stmt.execute(params![
            seed.id.to_string(),
            seed.agent_id.as_str(),
            seed.cwd,
            seed.created_at.millis(),
            rows::seed_facts(seed),
            info.title,
            info.description,
            title_source_to_sql(info.title_source),
            seed.parent_run_id.map(|r| r.to_string()),
        ])
        .map_err(&fail)?;
        self.announce(seed.id, ChangeKind::Created, None)?;
        Ok(info)
    }

    /// Tells listeners about `session` once this commits: every process's
    /// on PostgreSQL (`NOTIFY`), this process's on SQLite.
    fn announce(&mut self, session: SessionId, change: ChangeKind, successor: Option<SessionId>) -> Result<()> {
        let change = StoreChange { successor, ..StoreChange::of(self.agent.clone(), session, change) };
        self.announce_change(change)
    }

    /// Tells listeners, once this commits, that `run` of `session` is
    /// recorded `interrupted` (see [`ChangeKind::RunInterrupted`]).
    pub(crate) fn announce_interrupted(&mut self, session: SessionId, run: seri_core::RunId) -> Result<()> {
        let change =
            StoreChange { run: Some(run), ..StoreChange::of(self.agent.clone(), session, ChangeKind::RunInterrupted) };
        self.announce_change(change)
    }

    /// Tells this process's listeners `change` once this commits: one a
    /// statement of this transaction announces to the others itself (a
    /// job's end: its `UPDATE` notifies on PostgreSQL).
    pub(crate) fn announce_committed(&mut self, change: StoreChange) {
        if !self.announced.contains(&change) {
            self.announced.push(change);
        }
    }

    /// Tells listeners `change` once this commits (see [`WriteTx::announce`]).
    fn announce_change(&mut self, change: StoreChange) -> Result<()> {
        crate::db::postgres::listen::notify(self.db, &change)?;
        self.announce_committed(change);
        Ok(())
    }

    /// Appends events to a session, numbered from its next seq on without
    /// gaps, all stamped with the current time (or the session's newest
    /// event's, if the clock has stepped back). Returns them as stored.
    pub fn append(&mut self, session: SessionId, bodies: impl IntoIterator<Item = EventBody>) -> Result<Vec<Event>> {
        let now = self.now();
        self.append_dated(session, bodies.into_iter().map(|body| (now, body)))
    }

    /// Appends events that carry the time they happened elsewhere: the
    /// legacy import keeps the times the older release recorded. Each is
    /// stamped with its own time, or the newest earlier event's if that is
    /// later, so a session's event times still never decrease.
    pub fn append_dated(
        &mut self,
        session: SessionId,
        dated: impl IntoIterator<Item = (Timestamp, EventBody)>,
    ) -> Result<Vec<Event>> {
        let context = "appending events";
        let fail = self.db.fail(context);
        // One read gives the owner check, the cached title columns and the
        // head (newest seq and time), all from inside this write transaction;
        // not the seed.
        // Or, where it may, the head as this process left it, checked by
        // the server as the rows go in (`guess_head`).
        let mut view = match self.guess_head(session) {
            Some(view) => view,
            None => self.read().session_head(session)?.head_view(),
        };
        let head_seq = view.last_seq;
        let before = Cached::of(&view);
        // This process's fold of the session as of its head, when it has
        // one: it takes the new events in memory, so a snapshot never reads
        // back what was just written. Checked against the head, so another
        // process's appends (or a rolled-back transaction) make it unused.
        let pending = self.live_views.iter().position(|v| v.id == session).map(|at| self.live_views.swap_remove(at));
        let mut live = pending.or_else(|| self.store.take_live_view(session)).filter(|v| v.last_seq == head_seq);
        let session_text = session.to_string();
        let dated: Vec<(Timestamp, EventBody)> = dated.into_iter().collect();
        // On PostgreSQL several events go in as one statement over arrays
        // of their columns, planned and run once (and the newest-event
        // trigger, once per statement, fires once); one event, and every
        // append on SQLite, is an insert per event. Either way the inserts
        // go out without waiting for an answer: a failure is reported by
        // the next statement that waits or by the commit, and rolls
        // everything back.
        let mut sink = match self.db.conn {
            Conn::Postgres(conn) if dated.len() > 1 => EventSink::Arrays(conn, EventColumns::default()),
            Conn::Postgres(_) => EventSink::Rows(self.db.conn.prepare_cached(INSERT_EVENT_INDEXED).map_err(&fail)?),
            Conn::Sqlite(_) => EventSink::Rows(self.db.conn.prepare_cached(INSERT_EVENT).map_err(&fail)?),
        };
        let mut appended = Vec::with_capacity(dated.len());
        for (at, body) in dated {
            // A session's event times never decrease, even if the clock steps
            // back, so its newest event is also its latest.
            let at = at.max(view.updated_at);
            let event = Event { id: self.store.new_event_id(at), session_id: session, seq: view.next_seq(), at, body };
            let payload = rows::encode_payload(&event.body);
            // The event's search index rows go in with it (`db/search.rs`):
            // on PostgreSQL in the same statement.
            match &mut sink {
                EventSink::Rows(insert) => {
                    let mut values = vec![
                        Value::Text(event.id.to_string()),
                        Value::Text(session_text.clone()),
                        Value::Int(rows::int(event.seq.get())),
                        Value::Text(event.body.kind().to_owned()),
                        Value::Int(i64::from(EVENT_FORMAT_VERSION)),
                        Value::Text(payload),
                        Value::Int(at.millis()),
                    ];
                    let postgres = matches!(self.db.conn, Conn::Postgres(_));
                    if postgres {
                        values.push(crate::db::search::postgres_words(&event.body).into());
                    }
                    insert.execute_pipelined(values).map_err(&fail)?;
                    if !postgres {
                        crate::db::search::index_sqlite(self.db, session, event.seq, &event.body)?;
                    }
                }
                EventSink::Arrays(_, columns) => columns.push(&event, payload),
            }
            view.apply(&event);
            if let Some(live) = &mut live {
                live.apply(&event);
            }
            appended.push(event);
        }
        if let EventSink::Arrays(conn, columns) = sink {
            columns.send(conn, session_text).map_err(&fail)?;
        }
        if let Conn::Sqlite(_) = self.db.conn {
            crate::db::search::flush_pending_if_due(self.db)?;
        }
        let after = Cached::of(&view);
        if after != before {
            write_cached(self.db, session, &after)?;
        }
        // Each time the session's seq passes a multiple of the snapshot
        // interval, its snapshot is folded forward in this transaction, so
        // a read never folds a long tail (and an append never asks where
        // the snapshot is).
        let every = crate::db::snapshot::SNAPSHOT_EVERY_EVENTS;
        if view.last_seq / every != head_seq / every {
            let folded = match live.take() {
                Some(live) => live,
                None => crate::db::snapshot::folded(&self.read(), &self.read().session_row(session)?)?,
            };
            crate::db::snapshot::write(self.db, &folded)?;
            live = Some(folded);
        }
        if let Some(live) = live {
            self.live_views.push(live);
        }
        if !appended.is_empty() {
            self.announce(session, ChangeKind::Updated, None)?;
        }
        // The head as this append leaves it, for the next one to guess.
        if let Conn::Postgres(conn) = self.db.conn {
            conn.leave_head(view);
        }
        Ok(appended)
    }

    /// Records a run as it starts (status [`seri_core::RunStatus::Running`]).
    pub fn start_run(&mut self, run: &crate::RunRecord) -> Result<()> {
        self.read().require_session(run.session_id)?;
        // Recorded already by a commit whose answer was lost (the store went
        // away as it committed): the run taking its session again is the
        // same run, and the insert does nothing (`ON CONFLICT`).
        crate::db::runs::insert(self.db, run)
    }

    /// Records how a run ended, with what the run loop reports of it. A run
    /// finishes once.
    pub fn finish_run(
        &mut self,
        run: seri_core::RunId,
        status: seri_core::RunStatus,
        result: &crate::RunResult,
    ) -> Result<()> {
        let at = self.now();
        crate::db::runs::finish(self.db, run, status, result, at)
    }

    /// Records a continuation edge. Both sessions (and the origin) must be
    /// this agent's, the initiating event must be the predecessor's, and the
    /// edge must agree with its manifest.
    pub fn insert_continuation(&mut self, edge: &ContinuationEdge) -> Result<()> {
        let read = self.read();
        for session in [edge.predecessor_session_id, edge.successor_session_id, edge.origin_session_id] {
            read.require_session(session)?;
        }
        let inconsistent =
            |problem| StoreError::Data(DataError::InconsistentContinuation { continuation_id: edge.id, problem });
        if edge.predecessor_session_id == edge.successor_session_id {
            return Err(inconsistent("a session cannot continue into itself"));
        }
        if edge.manifest.predecessor_session_id != edge.predecessor_session_id {
            return Err(inconsistent("the manifest names another predecessor"));
        }
        if edge.manifest.origin_session_id != edge.origin_session_id {
            return Err(inconsistent("the manifest names another origin"));
        }
        let initiating = read.event(edge.initiating_event_id)?;
        if initiating.session_id != edge.predecessor_session_id {
            return Err(StoreError::Lookup(LookupError::EventNotInSession {
                event_id: edge.initiating_event_id,
                session_id: edge.predecessor_session_id,
            }));
        }
        if read.continuation_by_tool_call(edge.predecessor_session_id, &edge.tool_call_id)?.is_some() {
            return Err(StoreError::Write(WriteError::ContinuationExists {
                predecessor: edge.predecessor_session_id,
                tool_call_id: edge.tool_call_id.clone(),
            }));
        }
        if read.continuation_into(edge.successor_session_id)?.is_some() {
            return Err(StoreError::Write(WriteError::SuccessorTaken { successor: edge.successor_session_id }));
        }
        let fail = self.db.fail("recording a continuation");
        let mut stmt = self
            .db
            .conn
            .prepare_cached(
                "INSERT INTO session_continuations (id, predecessor_session_id, successor_session_id, \
                 origin_session_id, tool_call_id, initiating_event_id, reason, manifest_cbor, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .map_err(&fail)?;
        stmt.execute(params![
            edge.id.to_string(),
            edge.predecessor_session_id.to_string(),
            edge.successor_session_id.to_string(),
            edge.origin_session_id.to_string(),
            edge.tool_call_id.as_str(),
            edge.initiating_event_id.to_string(),
            edge.reason.as_str(),
            rows::encode_manifest(&edge.manifest),
            edge.created_at.millis(),
        ])
        .map_err(&fail)?;
        self.announce(edge.predecessor_session_id, ChangeKind::Continued, Some(edge.successor_session_id))?;
        Ok(())
    }

    /// Makes attachment `attachment_id` of session `from` resolve in session
    /// `to` as well (a hard link, or a copy across file systems). If the
    /// transaction rolls back, the new file is removed again.
    pub fn link_attachment(&mut self, from: SessionId, to: SessionId, attachment_id: &str) -> Result<LinkOutcome> {
        let read = self.read();
        read.require_session(from)?;
        read.require_session(to)?;
        let root = self.store.attachments_dir().ok_or(StoreError::Attachment(AttachmentError::NoDir))?;
        // On this machine's cache first, if it was stored through another server.
        read.attachment_path(from, attachment_id)?;
        self.share_attachment(from, to, attachment_id)?;
        let (outcome, path) = attachments::link(root, from, to, attachment_id)?;
        if outcome != LinkOutcome::AlreadyPresent {
            self.created_files.push(path);
        }
        Ok(outcome)
    }

    /// The views folded in this transaction, handed over to be kept once it commits.
    /// What this transaction announced, for the store to tell once it commits.
    pub(crate) fn take_announced(&mut self) -> Vec<StoreChange> {
        std::mem::take(&mut self.announced)
    }

    pub(crate) fn take_live_views(&mut self) -> Vec<SessionInfo> {
        std::mem::take(&mut self.live_views)
    }

    /// The files linked so far, handed over so they can be removed if the
    /// transaction does not commit.
    pub(crate) fn take_created_files(&mut self) -> Vec<PathBuf> {
        std::mem::take(&mut self.created_files)
    }
}

/// One event's row.
const INSERT_EVENT: &str = "INSERT INTO session_events (id, session_id, seq, type, format_version, payload, created_at) \
                            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

/// [`INSERT_EVENT`] on PostgreSQL, with the event's search index row
/// (`?8`: its folded words, or NULL) in the same statement.
const INSERT_EVENT_INDEXED: &str = "WITH event AS (INSERT INTO session_events \
                                    (id, session_id, seq, type, format_version, payload, created_at) \
                                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)) \
                                    INSERT INTO event_search (session_id, seq, words) \
                                    VALUES (?2, ?3, to_tsvector('simple', CAST(?8 AS TEXT)))";

/// The rows of several events of one session, from arrays of their columns
/// (one element per event, in seq order), and their search index rows
/// (`?8`: each event's folded words, or NULL).
const INSERT_EVENTS: &str = "WITH event AS (INSERT INTO session_events \
                             (id, session_id, seq, type, format_version, payload, created_at) \
                             SELECT e.id, ?2, e.seq, e.type, ?3, e.payload, e.created_at \
                             FROM unnest(?1::text[], ?4::int8[], ?5::text[], ?6::text[], ?7::int8[]) \
                             AS e (id, seq, type, payload, created_at)) \
                             INSERT INTO event_search (session_id, seq, words) \
                             SELECT ?2, w.seq, to_tsvector('simple', w.words) \
                             FROM unnest(?4::int8[], ?8::text[]) AS w (seq, words)";

/// Where an append's rows go: an insert per event, or (several events on
/// PostgreSQL) the columns of one insert of them all.
enum EventSink<'a> {
    Rows(crate::db::sql::Statement<'a>),
    Arrays(&'a crate::db::postgres::connection::Connection, EventColumns),
}

/// The columns of an append's events, one array each ([`INSERT_EVENTS`]).
#[derive(Default)]
struct EventColumns {
    ids: Vec<String>,
    seqs: Vec<i64>,
    kinds: Vec<String>,
    payloads: Vec<String>,
    times: Vec<i64>,
    words: Vec<Option<String>>,
}

impl EventColumns {
    fn push(&mut self, event: &Event, payload: String) {
        self.ids.push(event.id.to_string());
        self.seqs.push(rows::int(event.seq.get()));
        self.kinds.push(event.body.kind().to_owned());
        self.payloads.push(payload);
        self.times.push(event.at.millis());
        self.words.push(crate::db::search::postgres_words(&event.body));
    }

    /// Sends the insert, without waiting for its answer.
    fn send(
        self,
        conn: &crate::db::postgres::connection::Connection,
        session: String,
    ) -> std::result::Result<(), crate::db::sql::SqlError> {
        let stmt = conn.statement(INSERT_EVENTS)?;
        conn.send_prepared_boxed(
            &stmt,
            vec![
                Box::new(self.ids),
                Box::new(session),
                Box::new(i64::from(EVENT_FORMAT_VERSION)),
                Box::new(self.seqs),
                Box::new(self.kinds),
                Box::new(self.payloads),
                Box::new(self.times),
                Box::new(self.words),
            ],
        );
        Ok(())
    }
}

/// Writes the cached columns of a session.
pub(crate) fn write_cached(db: Db<'_>, session: SessionId, cached: &Cached) -> Result<()> {
    let fail = db.fail("updating a session's cached columns");
    let mut stmt = db
        .conn
        .prepare_cached("UPDATE sessions SET title = ?2, description = ?3, title_source = ?4 WHERE id = ?1")
        .map_err(&fail)?;
    // Nothing later in the transaction reads its answer: on PostgreSQL it
    // goes out without waiting (a failure still fails the transaction).
    stmt.execute_pipelined(vec![
        Value::Text(session.to_string()),
        Value::Text(cached.title.clone()),
        Value::Text(cached.description.clone()),
        title_source_to_sql(cached.title_source).map_or(Value::Null, |s| Value::Text(s.to_owned())),
    ])
    .map_err(&fail)?;
    Ok(())
}
