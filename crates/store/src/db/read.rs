//! [`Reader`]: every read of one agent's sessions, events and edges.
//!
//! Each query names the agent, so a session of another agent is not merely
//! filtered out afterwards: it is never selected. Asking for one gets
//! [`LookupError::UnknownSession`], exactly as for an id that does not exist.

use std::path::PathBuf;

use crate::db::sql::params;
use seri_core::{
    AgentId, ContinuationEdge, Event, EventBody, EventId, Seq, SessionContinuationLink, SessionId, SessionInfo,
    SessionSeed, Timestamp, ToolCallId,
};

use crate::attachments;
use crate::db::rows::{
    self, Db, EDGE_COLUMNS, EVENT_COLUMNS, HEAD_COLUMNS, RowError, SESSION_COLUMNS, SessionRow, query_all, query_each,
    query_first,
};
use crate::error::{AttachmentError, DataError, LookupError, MAX_LISTED_CANDIDATES, Result, StoreError};
use crate::prefix;
use crate::sessions::{SeqRange, SessionQuery, SessionSummary};
use crate::store::Store;

mod links;
#[cfg(test)]
use sessions::list_sql;
mod sessions;

/// How far behind the server that queued a job another server's clock may
/// run and still find the job's message: ten minutes.
const CLOCK_SKEW_MARGIN_MS: i64 = 10 * 60 * 1000;

/// The rows of a newest-first read's first page, and of its largest.
const NEWEST_FIRST_PAGE: i64 = 16;
const NEWEST_FIRST_MAX_PAGE: i64 = 1024;

/// How many events a read of a range whose length it does not know (see
/// [`Reader::events_page`]) makes room for at first.
const GUESSED_ROWS_MAX: u64 = 256;

/// Reads of one agent's data, inside one transaction (one consistent snapshot).
pub struct Reader<'a> {
    db: Db<'a>,
    agent: &'a AgentId,
    store: &'a Store,
}

/// Past this many stretches of time among the ids to shorten, one read of
/// every id of the agent costs less than a ranged read of each stretch.
const WINDOWS_READ_APART: usize = 32;

impl<'a> Reader<'a> {
    pub(crate) fn new(db: Db<'a>, agent: &'a AgentId, store: &'a Store) -> Self {
        Self { db, agent, store }
    }

    /// A session's runs, oldest first.
    pub fn runs(&self, session: SessionId) -> Result<Vec<crate::RunRecord>> {
        self.require_session(session)?;
        crate::db::runs::of_session(self.db, session)
    }

    /// The runs `parent` delegated (its child runs), oldest first. A run of
    /// another agent has no children here.
    pub fn child_runs(&self, parent: seri_core::RunId) -> Result<Vec<crate::RunRecord>> {
        crate::db::runs::children_of(self.db, self.agent, parent)
    }

    /// One run by id; `None` when there is none in this agent's sessions.
    pub fn run(&self, id: seri_core::RunId) -> Result<Option<crate::RunRecord>> {
        crate::db::runs::by_id(self.db, self.agent, id)
    }

    /// How many of this agent's open jobs of `session` a message posted
    /// directly must wait for: those accepted at or before `at`, and those
    /// whose message is posted already (a server took the session first;
    /// its answer must not be overtaken).
    pub fn jobs_ahead_of_direct_message(&self, session: SessionId, at: seri_core::Timestamp) -> Result<u64> {
        self.db.lock_session(session);
        let sql = "SELECT count(*) FROM run_jobs WHERE session_id = ?1 AND agent_id = ?2 AND state <> 'done' \
                   AND (enqueued_at <= ?3 OR posted_event_id IS NOT NULL)";
        let params = params![session.to_string(), self.agent.as_str(), at.millis()];
        query_first(self.db, "counting the messages to answer first", sql, params, |r| Ok(rows::uint(r.get(0)?)))
            .map(Option::unwrap_or_default)
    }

    /// The connection, for the store's own modules that read other tables.
    pub(crate) fn db(&self) -> Db<'a> {
        self.db
    }

    /// The agent whose data this reads.
    pub fn agent_id(&self) -> &AgentId {
        self.agent
    }

    pub(crate) fn session_row(&self, id: SessionId) -> Result<SessionRow> {
        self.db.lock_session(id);
        let sql = format!("SELECT {SESSION_COLUMNS} FROM session_heads WHERE id = ?1 AND agent_id = ?2");
        let row = query_first(
            self.db,
            "reading a session",
            &sql,
            params![id.to_string(), self.agent.as_str()],
            SessionRow::read,
        )?
        .ok_or(StoreError::Lookup(LookupError::UnknownSession { session_id: id }))?;
        self.db.learn_session(self.agent, id);
        Ok(row)
    }

    /// [`Reader::session_row`] without the seed: what an append needs.
    pub(crate) fn session_head(&self, id: SessionId) -> Result<SessionRow> {
        self.db.lock_session(id);
        let sql = format!("SELECT {HEAD_COLUMNS} FROM session_heads WHERE id = ?1 AND agent_id = ?2");
        let params = params![id.to_string(), self.agent.as_str()];
        let row = query_first(self.db, "reading a session's head", &sql, params, SessionRow::read_head)?
            .ok_or(StoreError::Lookup(LookupError::UnknownSession { session_id: id }))?;
        self.db.learn_session(self.agent, id);
        Ok(row)
    }

    /// Fails with [`LookupError::UnknownSession`] unless the session is this agent's.
    pub(crate) fn require_session(&self, id: SessionId) -> Result<()> {
        self.db.lock_session(id);
        if self.db.session_known(self.agent, id) {
            return Ok(());
        }
        let sql = "SELECT 1 FROM sessions WHERE id = ?1 AND agent_id = ?2";
        query_first(self.db, "looking up a session", sql, params![id.to_string(), self.agent.as_str()], |_| Ok(()))?
            .ok_or(StoreError::Lookup(LookupError::UnknownSession { session_id: id }))?;
        self.db.learn_session(self.agent, id);
        Ok(())
    }

    /// The session's creation facts.
    pub fn seed(&self, id: SessionId) -> Result<SessionSeed> {
        self.session_row(id)?.seed()
    }

    /// The session as clients see it: the fold of its seed and all its
    /// events, with `continuedFrom` and `continuedTo` from the edges. The
    /// fold starts from the session's snapshot, so it reads fewer than
    /// [`SNAPSHOT_EVERY_EVENTS`](crate::SNAPSHOT_EVERY_EVENTS) events
    /// however long the history.
    pub fn info(&self, id: SessionId) -> Result<SessionInfo> {
        let row = self.session_row(id)?;
        let info = crate::db::snapshot::folded(self, &row)?;
        let (from, to) = self.links(id)?;
        let mut info = info.with_links(from, to);
        info.forked_from = self.fork_link(id)?;
        Ok(info)
    }

    /// The session as lists show it, from the cached columns.
    pub fn summary(&self, id: SessionId) -> Result<SessionSummary> {
        let row = self.session_row(id)?;
        self.summarize(row)
    }

    fn summarize(&self, row: SessionRow) -> Result<SessionSummary> {
        let (continued_from, continued_to) = self.links(row.id)?;
        let parent_run_id = row.parent_run_id();
        let parent_session_id = match parent_run_id {
            Some(run) => crate::db::runs::by_id(self.db, &row.agent_id, run)?.map(|r| r.session_id),
            None => None,
        };
        Ok(SessionSummary {
            id: row.id,
            agent_id: row.agent_id,
            cwd: row.cwd,
            title: row.cached.title,
            description: row.cached.description,
            title_source: row.cached.title_source,
            created_at: row.created_at,
            updated_at: row.updated_at,
            last_seq: row.last_seq,
            continued_from,
            continued_to,
            parent_run_id,
            parent_session_id,
            forked_from: self.fork_link(row.id)?,
        })
    }

    /// The session's events in `range`, in seq order.
    pub fn events(&self, id: SessionId, range: SeqRange) -> Result<Vec<Event>> {
        self.events_page(id, range, None)
    }

    /// The first `limit` (all, for `None`) of the session's events in
    /// `range`, in seq order: a page of a long range. A fork's events up to
    /// its fork point are its parent's, read where they are (never copied)
    /// and shown under the fork's id and numbering.
    pub fn events_page(&self, id: SessionId, range: SeqRange, limit: Option<u64>) -> Result<Vec<Event>> {
        // The head both proves the session is this agent's and says how
        // many rows are coming: a long history is read into one allocation
        // instead of being copied each time the vector doubles. Where
        // asking is a round trip of its own and the session is known to be
        // the agent's (PostgreSQL, see `Db::session_known`), it is not
        // asked: the rows come into a vector that grows as they do.
        let expected = if self.db.session_known(self.agent, id) {
            self.db.lock_session(id);
            let wanted = range.to.get().saturating_add(1).saturating_sub(range.from.get().max(1));
            limit.map_or(wanted, |l| l.min(wanted)).min(GUESSED_ROWS_MAX)
        } else {
            let head = self.event_count(id)?;
            let expected = range.to.get().min(head).saturating_add(1).saturating_sub(range.from.get().max(1));
            limit.map_or(expected, |l| l.min(expected))
        };
        let mut events = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM session_events \
             WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq LIMIT ?4"
        );
        for (segment, range) in self.clipped(id, range)? {
            let left = limit.map_or(u64::MAX, |l| l.saturating_sub(events.len() as u64));
            if left == 0 {
                break;
            }
            let params = params![segment.to_string(), clamp(range.from.get()), clamp(range.to.get()), clamp(left)];
            query_each(self.db, "reading events", &sql, params, |row| {
                let mut event = rows::read_event(row)?;
                event.session_id = id;
                events.push(event);
                Ok(true)
            })?;
        }
        self.store.count_events_read(events.len());
        Ok(events)
    }

    /// The parts of `range` of the session's history, each with the
    /// session whose rows hold it, oldest first.
    fn clipped(&self, id: SessionId, range: SeqRange) -> Result<Vec<(SessionId, SeqRange)>> {
        Ok(self
            .segments(id)?
            .into_iter()
            .filter_map(|segment| {
                let from = range.from.get().max(segment.from.get());
                let to = segment.to.map_or(range.to.get(), |to| to.get().min(range.to.get()));
                (from <= to).then(|| (segment.session, SeqRange::between(Seq(from), Seq(to))))
            })
            .collect())
    }

    /// Hands `visit` the seq and body of each of the session's events in
    /// `range`, in seq order, one at a time as they are decoded: a caller
    /// that takes each apart (the working context) never holds a long
    /// history twice, and the columns a body does not need (ids, time) are
    /// not read.
    pub fn each_body(
        &self,
        id: SessionId,
        range: SeqRange,
        visit: &mut (dyn FnMut(Seq, EventBody) + Send),
    ) -> Result<()> {
        self.require_session(id)?;
        let sql = "SELECT seq, type, format_version, payload FROM session_events \
             WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq";
        for (segment, range) in self.clipped(id, range)? {
            let params = params![segment.to_string(), clamp(range.from.get()), clamp(range.to.get())];
            // A long read decodes on a second core while this one reads.
            let read = crate::db::pipeline::decode_rows(segment, visit, |each| {
                query_each(self.db, "reading events", sql, params, each)
            })?;
            self.store.count_events_read(read);
        }
        Ok(())
    }

    /// The newest `limit` of the session's context marks (its
    /// `context_compacted` and `context_rewound` events) with seq at most
    /// `upto`, in seq order. They are read from an index that holds only
    /// them, so finding a long history's newest recap costs a few rows.
    pub fn context_marks(&self, id: SessionId, upto: Seq, limit: u64) -> Result<Vec<Event>> {
        self.require_session(id)?;
        // Newest first: the fork's own marks, then its parent's before the
        // fork point (a compaction there applies to the fork as it did to
        // the parent), until `limit` are found.
        let mut marks = Vec::new();
        for (segment, range) in self.clipped(id, SeqRange::between(Seq::FIRST, upto))?.into_iter().rev() {
            let left = limit.saturating_sub(marks.len() as u64);
            if left == 0 {
                break;
            }
            let params = params![segment.to_string(), clamp(range.to.get()), clamp(left)];
            marks.extend(query_all(self.db, "reading context marks", &context_marks_sql(), params, |row| {
                let mut event = rows::read_event(row)?;
                event.session_id = id;
                Ok(event)
            })?);
        }
        marks.reverse();
        self.store.count_events_read(marks.len());
        Ok(marks)
    }

    /// How many events the session has: its newest seq, since seqs run
    /// from 1 without gaps (one index lookup, not a count).
    pub fn event_count(&self, id: SessionId) -> Result<u64> {
        self.db.lock_session(id);
        let sql = "SELECT last_seq FROM session_heads WHERE id = ?1 AND agent_id = ?2";
        let params = params![id.to_string(), self.agent.as_str()];
        query_first(self.db, "counting events", sql, params, |r| Ok(rows::uint(r.get(0)?)))?
            .ok_or(StoreError::Lookup(LookupError::UnknownSession { session_id: id }))
    }

    /// One event of one of this agent's sessions, by id.
    pub fn event(&self, id: EventId) -> Result<Event> {
        // The columns of EVENT_COLUMNS, qualified.
        let sql = "SELECT e.id, e.session_id, e.seq, e.type, e.format_version, e.payload, e.created_at \
             FROM session_events e JOIN sessions s ON s.id = e.session_id WHERE e.id = ?1 AND s.agent_id = ?2";
        query_first(self.db, "reading an event", sql, params![id.to_string(), self.agent.as_str()], rows::read_event)?
            .ok_or(StoreError::Lookup(LookupError::UnknownEvent { event_id: id }))
    }

    /// The newest message written by a person or a trigger: what a run
    /// answers, and what a continuation carries into its successor.
    pub fn newest_user_message(&self, id: SessionId) -> Result<Option<Event>> {
        self.newest_message(id, "finding the newest user message", |m| m.is_from_user_or_trigger())
    }

    /// The message a server posted for shared-queue job `job`
    /// ([`seri_core::MessageMeta::queued_as`]), newest first, among the
    /// messages appended since `since` (the job's `enqueued_at`): a job's
    /// message is never older than the job, so the read stops there instead
    /// of visiting the whole transcript.
    pub fn message_queued_as(&self, id: SessionId, job: &str, since: seri_core::Timestamp) -> Result<Option<Event>> {
        self.require_session(id)?;
        // Servers' clocks differ a little; a job's message may be stamped
        // by one running behind the server that queued it.
        let since = since.0.saturating_sub(CLOCK_SKEW_MARGIN_MS);
        let mut found = None;
        self.newest_messages_first("finding a queued message", id, SeqRange::ALL, since, |row| {
            let event = rows::read_event(row)?;
            self.store.count_events_read(1);
            if event.body.as_message().is_some_and(|m| m.meta().queued_as.as_deref() == Some(job)) {
                found = Some(event);
                return Ok(false);
            }
            Ok(true)
        })?;
        Ok(found)
    }

    /// The session's newest assistant message: where the newest model turn
    /// starts (its tool calls follow it).
    pub fn newest_assistant_message(&self, id: SessionId) -> Result<Option<Event>> {
        self.newest_message(id, "finding the newest assistant message", |m| m.role == seri_core::Role::Assistant)
    }

    /// The glob rules that have fired in the session: the `rule` of each
    /// message the runtime wrote for one ([`seri_core::MessageMeta::rule`]).
    /// Only those messages are read, from an index that holds nothing else,
    /// so a long transcript costs nothing here.
    pub fn fired_rules(&self, id: SessionId) -> Result<std::collections::BTreeSet<String>> {
        self.fired_rules_since(id, Seq::FIRST)
    }

    /// [`Reader::fired_rules`] among the messages from seq `since` on: the
    /// rules whose text is still in a working context that starts there (a
    /// compaction's recap replaced the older ones, and a rule must be in the
    /// context whenever it applies).
    pub fn fired_rules_since(&self, id: SessionId, since: Seq) -> Result<std::collections::BTreeSet<String>> {
        self.require_session(id)?;
        let sql = fired_rules_sql(self.db);
        let mut rules = std::collections::BTreeSet::new();
        for (segment, range) in self.clipped(id, SeqRange::starting_at(since))? {
            let params = params![segment.to_string(), clamp(range.from.get()), clamp(range.to.get())];
            rules.extend(query_all(self.db, "listing the session's fired rules", &sql, params, |row| {
                row.get::<_, String>(0)
            })?);
        }
        Ok(rules)
    }

    /// Which of `ids` a tool call already recorded in the session has: a
    /// model that sends an id again (in a later turn) must get a fresh one,
    /// or a result would pair with the wrong call. Read from an index of the
    /// calls' ids, so a long history costs one lookup per id.
    pub fn tool_call_ids_used(
        &self,
        id: SessionId,
        ids: &[seri_core::ToolCallId],
    ) -> Result<Vec<seri_core::ToolCallId>> {
        self.require_session(id)?;
        self.tool_call_ids_within(id, SeqRange::ALL, ids)
    }

    /// Which of `ids` a tool call among the session's events in `range`
    /// has (through its history segments, as [`Reader::tool_call_ids_used`]).
    pub(crate) fn tool_call_ids_within(
        &self,
        id: SessionId,
        range: SeqRange,
        ids: &[seri_core::ToolCallId],
    ) -> Result<Vec<seri_core::ToolCallId>> {
        let sql = tool_call_id_sql(self.db);
        let segments = self.clipped(id, range)?;
        let mut used = Vec::new();
        for call in ids {
            for (segment, range) in &segments {
                // The seqs of the segment's calls with this id (one, or a
                // few in a history older than the rule), checked against
                // the range here: a seq bound in the query would lead the
                // planner away from the ids' index.
                let params = params![segment.to_string(), call.0.as_str()];
                let seqs = query_all(self.db, "looking up a tool call id", &sql, params, |r| {
                    Ok(rows::uint(r.get::<_, i64>(0)?))
                })?;
                if seqs.iter().any(|seq| (range.from.get()..=range.to.get()).contains(seq)) {
                    used.push(call.clone());
                    break;
                }
            }
        }
        Ok(used)
    }

    /// The session's newest message `wanted` accepts. Newest first,
    /// stopping at the first match: a long tail of other messages is
    /// decoded, the rest of the transcript is not.
    fn newest_message(
        &self,
        id: SessionId,
        context: &'static str,
        wanted: impl Fn(&seri_core::Message) -> bool,
    ) -> Result<Option<Event>> {
        self.require_session(id)?;
        let mut found = None;
        for (segment, range) in self.clipped(id, SeqRange::ALL)?.into_iter().rev() {
            self.newest_messages_first(context, segment, range, i64::MIN, |row| {
                let mut event = rows::read_event(row)?;
                self.store.count_events_read(1);
                if event.body.as_message().is_some_and(&wanted) {
                    event.session_id = id;
                    found = Some(event);
                    return Ok(false);
                }
                Ok(true)
            })?;
            if found.is_some() {
                break;
            }
        }
        Ok(found)
    }

    /// Hands `each` the message rows ([`EVENT_COLUMNS`]) of `session`'s own
    /// events in `range` stamped at or after `since`, newest first, until it
    /// returns `false`. They are read a page at a time, each page a query
    /// bounded by `LIMIT` (the first small, the next ones larger), so a
    /// match near the head costs a page whatever the transcript's length:
    /// PostgreSQL sends every row a query selects, however few are read.
    fn newest_messages_first(
        &self,
        context: &'static str,
        session: SessionId,
        range: SeqRange,
        since: i64,
        mut each: impl FnMut(&crate::db::sql::Row<'_>) -> std::result::Result<bool, RowError>,
    ) -> Result<()> {
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM session_events \
             WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 AND type = 'message' AND created_at >= ?4 \
             ORDER BY seq DESC LIMIT ?5"
        );
        let (from, mut to, mut page) = (clamp(range.from.get()), clamp(range.to.get()), NEWEST_FIRST_PAGE);
        let session = session.to_string();
        while from <= to {
            let (mut rows, mut oldest, mut stopped) = (0, to, false);
            let params = params![session.clone(), from, to, since, page];
            query_each(self.db, context, &sql, params, |row| {
                rows += 1;
                oldest = row.get(2)?;
                stopped = !each(row)?;
                Ok(!stopped)
            })?;
            if stopped || rows < page {
                break;
            }
            to = oldest - 1;
            page = (page * 4).min(NEWEST_FIRST_MAX_PAGE);
        }
        Ok(())
    }
}

/// Continuation links by the session they belong to.
type LinksBySession = std::collections::HashMap<SessionId, SessionContinuationLink>;

/// The newest context marks of a session up to a seq. The type list is the
/// `session_events_context_marks` index's condition, word for word: a
/// partial index serves a query only when the query states its condition.
fn context_marks_sql() -> String {
    format!(
        "SELECT {EVENT_COLUMNS} FROM session_events \
         WHERE session_id = ?1 AND seq <= ?2 AND type IN ('context_compacted', 'context_rewound') \
         ORDER BY seq DESC LIMIT ?3"
    )
}

/// The rule of each of a session's rule messages. The condition is the
/// `session_events_rule_messages` index's, word for word, on each backend.
fn fired_rules_sql(db: Db<'_>) -> String {
    let rule = crate::db::sql::json_text(db, "payload", &["meta", "rule"]);
    format!(
        "SELECT {rule} FROM session_events \
         WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 AND type = 'message' AND {rule} IS NOT NULL"
    )
}

/// A tool call of a session with a given id. The expression and condition
/// are the `session_events_call_ids` index's, word for word, on each backend.
fn tool_call_id_sql(db: Db<'_>) -> String {
    let call_id = crate::db::sql::json_text(db, "payload", &["id"]);
    format!("SELECT seq FROM session_events WHERE session_id = ?1 AND type = 'tool_call' AND {call_id} = ?2")
}

/// Seqs and limits past `i64::MAX` mean "no bound".
fn clamp(n: u64) -> i64 {
    rows::int(n)
}

/// The parameters of a query that names the agent (`?1`) and, given
/// `only`, those sessions (`?2`, `?3`, …), with the placeholders of the
/// sessions as one list for `IN (…)`.
pub(crate) fn id_list(agent: &AgentId, only: Option<&[SessionId]>) -> (String, Vec<Box<dyn crate::db::sql::Param>>) {
    let mut values: Vec<Box<dyn crate::db::sql::Param>> = vec![Box::new(agent.as_str().to_owned())];
    let mut placeholders = Vec::new();
    for id in only.unwrap_or_default() {
        values.push(Box::new(id.to_string()));
        placeholders.push(format!("?{}", values.len()));
    }
    (placeholders.join(", "), values)
}

#[cfg(test)]
mod tests;
