//! The search index: written with each event, in the append's own
//! transaction; filled for older events by the migration that made it (and
//! for copied ones by a copy); read by [`Reader::search`].
//!
//! Every event has one row in the index's key table, whether or not it has
//! text to find, so "not indexed yet" is one index lookup:
//!
//! - SQLite: `search_docs (doc, session_id, seq)` and the contentless FTS5
//!   table `search_text`, whose rowid is the doc (ranked by `bm25`);
//! - PostgreSQL: `event_search (session_id, seq, words)`, the `tsvector` of
//!   the event's folded words (NULL without text) under a GIN index
//!   (ranked by `ts_rank_cd`), written by the event's own insert statement
//!   (`write.rs`), so an append costs no statement more.
//!
//! What is indexed of an event, and the snippet of a hit, are the pure
//! [`crate::search`]'s.

use std::collections::{BTreeSet, HashMap};

use seri_core::{EventBody, Seq, SessionId, Timestamp};

use crate::db::read::Reader;
use crate::db::rows::{self, Db};
use crate::db::sql::{self, Conn, Value, params};
use crate::error::Result;
use crate::search::document::{document, index_words};
use crate::search::{SearchHit, SearchRequest, SearchScope, snippet::snippet};

/// Events read per batch when indexing older events.
const BACKFILL_BATCH: i64 = 2000;

/// Called as older events are indexed: how many of how many are done.
#[derive(Clone)]
pub struct IndexProgress(pub std::sync::Arc<dyn Fn(u64, u64) + Send + Sync>);

impl std::fmt::Debug for IndexProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IndexProgress")
    }
}

/// How many documents gather in `search_pending` before they go into FTS5
/// together: FTS5 writes a segment of its index at each commit, a cost
/// of its own that a batch pays once (`cargo xtask bench`, "append with
/// the search index"). A search moves a smaller batch before it reads.
pub(crate) const PENDING_BATCH: i64 = 1024;

/// The SQLite index rows of one event, written in its append's
/// transaction, right after the event's own row (`write.rs`): its key, and
/// its text among the pending documents, which
/// [`flush_pending_if_due`] moves into FTS5 with the others.
pub(crate) fn index_sqlite(db: Db<'_>, session: SessionId, seq: Seq, body: &EventBody) -> Result<()> {
    let fail = db.fail("indexing an event for search");
    let text = document(body).map(|(_, text)| text);
    db.conn
        .prepare_cached("INSERT INTO search_docs (session_id, seq) VALUES (?1, ?2)")
        .map_err(&fail)?
        .execute_pipelined(vec![Value::Text(session.to_string()), Value::Int(rows::int(seq.get()))])
        .map_err(&fail)?;
    if let Some(text) = text {
        db.conn
            .prepare_cached("INSERT INTO search_pending (doc, text) VALUES (last_insert_rowid(), ?1)")
            .map_err(&fail)?
            .execute_pipelined(vec![Value::Text(text)])
            .map_err(&fail)?;
    }
    Ok(())
}

/// After an SQLite append: the pending documents into FTS5 once a batch
/// has gathered. Documents are numbered in the order they are written, so
/// the span of the pending ones bounds how many there are.
pub(crate) fn flush_pending_if_due(db: Db<'_>) -> Result<()> {
    let span: Option<i64> = sql::query_first(
        db,
        "indexing events for search",
        "SELECT (SELECT max(doc) FROM search_pending) - (SELECT min(doc) FROM search_pending) + 1",
        params![],
        |r| r.get(0),
    )?
    .flatten();
    if span.is_some_and(|span| span >= PENDING_BATCH) {
        flush_pending(db)?;
    }
    Ok(())
}

/// Every pending document into FTS5, in one statement, and out of
/// `search_pending`: the number moved.
pub(crate) fn flush_pending(db: Db<'_>) -> Result<u64> {
    let context = "indexing events for search";
    let moved = sql::execute(
        db,
        context,
        "INSERT INTO search_text (rowid, text) SELECT doc, text FROM search_pending ORDER BY doc",
        params![],
    )?;
    if moved > 0 {
        sql::execute(db, context, "DELETE FROM search_pending", params![])?;
    }
    Ok(moved)
}

/// Whether any document waits for FTS5 (SQLite only).
pub(crate) fn any_pending(db: Db<'_>) -> Result<bool> {
    let sql = "SELECT 1 FROM search_pending LIMIT 1";
    Ok(sql::query_first(db, "looking for events to index", sql, params![], |r| r.get::<_, i64>(0))?.is_some())
}

/// What PostgreSQL's index holds of an event: its folded words, or none.
pub(crate) fn postgres_words(body: &EventBody) -> Option<String> {
    document(body).map(|(_, text)| index_words(&text))
}

/// Indexes every event that has no index row yet, oldest session first,
/// telling `progress` how far it got. Run by the migration that makes the
/// index (in its transaction) and after a copy. The number indexed.
pub(crate) fn backfill(db: Db<'_>, progress: Option<&IndexProgress>) -> Result<u64> {
    let context = "indexing older events for search";
    let total: i64 =
        sql::query_first(db, context, "SELECT count(*) FROM session_events", params![], |r| r.get(0))?.unwrap_or(0);
    let total = u64::try_from(total).unwrap_or_default();
    let indexed_table = match db.conn {
        Conn::Sqlite(_) => "search_docs",
        Conn::Postgres(_) => "event_search",
    };
    let batch_sql = format!(
        "SELECT e.session_id, e.seq, e.type, e.format_version, e.payload FROM session_events e \
         WHERE (e.session_id, e.seq) > (?1, ?2) \
         AND NOT EXISTS (SELECT 1 FROM {indexed_table} d WHERE d.session_id = e.session_id AND d.seq = e.seq) \
         ORDER BY e.session_id, e.seq LIMIT ?3"
    );
    let (mut after_session, mut after_seq) = (String::new(), 0i64);
    let mut done = 0u64;
    if let Some(progress) = progress {
        (progress.0)(0, total);
    }
    loop {
        let batch: Vec<(SessionId, Seq, EventBody)> = sql::query_all(
            db,
            context,
            &batch_sql,
            params![after_session.clone(), after_seq, BACKFILL_BATCH],
            |row| {
                let session: String = row.get(0)?;
                let session_id: SessionId = rows::parse_id(&session, "session_events", &session)?;
                let seq = Seq(rows::uint(row.get(1)?));
                let body = rows::decode_body(session_id, seq, row.text(2)?, row.get(3)?, row.text_bytes(4)?)?;
                Ok((session_id, seq, body))
            },
        )?;
        let Some(last) = batch.last() else { break };
        after_session = last.0.to_string();
        after_seq = rows::int(last.1.get());
        done += batch.len() as u64;
        match db.conn {
            Conn::Sqlite(_) => {
                for (session_id, seq, body) in &batch {
                    index_sqlite(db, *session_id, *seq, body)?;
                }
                flush_pending(db)?;
            }
            Conn::Postgres(_) => {
                let (mut sessions, mut seqs, mut words) = (Vec::new(), Vec::new(), Vec::new());
                for (session_id, seq, body) in &batch {
                    sessions.push(session_id.to_string());
                    seqs.push(rows::int(seq.get()));
                    words.push(postgres_words(body));
                }
                postgres_insert_many(db, sessions, seqs, words)?;
            }
        }
        if let Some(progress) = progress {
            (progress.0)(done, total.max(done));
        }
    }
    Ok(done)
}

/// Inserts index rows of events of any sessions on PostgreSQL.
fn postgres_insert_many(db: Db<'_>, sessions: Vec<String>, seqs: Vec<i64>, words: Vec<Option<String>>) -> Result<()> {
    let Conn::Postgres(conn) = db.conn else { return Ok(()) };
    let fail = db.fail("indexing older events for search");
    let stmt = conn
        .statement(
            "INSERT INTO event_search (session_id, seq, words) \
             SELECT d.session_id, d.seq, to_tsvector('simple', d.words) \
             FROM unnest($1::text[], $2::int8[], $3::text[]) AS d (session_id, seq, words)",
        )
        .map_err(|e| fail(e.into()))?;
    conn.send_prepared_boxed(&stmt, vec![Box::new(sessions), Box::new(seqs), Box::new(words)]);
    Ok(())
}

impl Reader<'_> {
    /// The events of this agent's sessions that match `request`, best
    /// first: ranked by the engine (BM25 on SQLite, `ts_rank_cd` on
    /// PostgreSQL), this folder's first when the scope says so. Each hit
    /// names the forks that share it and the successor that carries its
    /// session on.
    ///
    /// On SQLite the newest documents may still wait outside FTS5:
    /// [`AgentStore::search`](crate::AgentStore::search) moves them in
    /// before it reads, which is why this is not public.
    pub(crate) fn search(&self, request: &SearchRequest) -> Result<Vec<SearchHit>> {
        let limit = rows::int(request.limit.min(crate::search::MAX_SEARCH_LIMIT));
        let found = match self.best_of_all(request, limit)? {
            Some(found) => found,
            None => self.ranked(request, limit)?,
        };
        let sessions: BTreeSet<SessionId> = found.iter().map(|(event, ..)| event.session_id).collect();
        let lineage = self.lineage_of(&sessions)?;
        let wanted = request.query.wanted_terms();
        let mut hits = Vec::with_capacity(found.len());
        for (event, score, title, cwd) in found {
            let Some((kind, text)) = document(&event.body) else { continue };
            hits.push(SearchHit {
                session_id: event.session_id,
                seq: event.seq,
                event_id: event.id,
                kind,
                snippet: snippet(&text, &wanted),
                at: event.at,
                score,
                shared_with: lineage.forks_sharing(event.session_id, event.seq),
                continued_in: lineage.successors.get(&event.session_id).copied(),
                title,
                cwd,
            });
        }
        Ok(hits)
    }

    /// The best `limit` matches of `request`, ranked by the database over
    /// every match: the query every search can run.
    fn ranked(&self, request: &SearchRequest, limit: i64) -> Result<Vec<Found>> {
        let db = self.db();
        let context = "searching";
        let (folder, only_folder) = match &request.scope {
            SearchScope::All => (None, false),
            SearchScope::FolderFirst(cwd) => (Some(cwd.clone()), false),
            SearchScope::Folder(cwd) => (Some(cwd.clone()), true),
        };
        let since = request.since.map(Timestamp::millis);
        // ?1 the query, ?2 the agent, ?3 the folder (first, or only when
        // ?6 is 1), ?4 since, ?5 the limit. Every one is used whatever the
        // request, so both engines can type and bind them all.
        //
        // The inner query ranks the matches from the index and the
        // sessions alone and keeps the best `limit`; only those are joined
        // to their events (payloads are the large rows). An event's time
        // is looked up for every match only when the request has `since`.
        let since_filter = if since.is_some() {
            "EXISTS (SELECT 1 FROM session_events t WHERE t.session_id = d.session_id AND t.seq = d.seq \
             AND t.created_at >= CAST(?4 AS BIGINT))"
        } else {
            "CAST(?4 AS BIGINT) IS NULL"
        };
        let filters = format!("s.agent_id = ?2 AND {since_filter} AND (CAST(?6 AS BIGINT) = 0 OR s.cwd = ?3)");
        // Equal scores are ordered by `tie_a, tie_b`: on SQLite the newest
        // event first (by its index key, in the order written), on
        // PostgreSQL by session and event. [`Reader::best_of_all`] orders
        // its candidates the same way.
        let (matches, score, ties) = match db.conn {
            Conn::Sqlite(_) => (
                "FROM search_text JOIN search_docs d ON d.doc = search_text.rowid \
                 JOIN sessions s ON s.id = d.session_id WHERE search_text MATCH ?1",
                "-bm25(search_text)",
                "-d.doc AS tie_a, 0 AS tie_b",
            ),
            Conn::Postgres(_) => (
                "FROM event_search d CROSS JOIN to_tsquery('simple', ?1) AS q \
                 JOIN sessions s ON s.id = d.session_id WHERE d.words @@ q",
                "ts_rank_cd(d.words, q)::float8",
                "d.session_id AS tie_a, d.seq AS tie_b",
            ),
        };
        let sql = format!(
            "SELECT e.id, e.session_id, e.seq, e.type, e.format_version, e.payload, e.created_at, \
                    h.score, h.title, h.cwd \
             FROM (SELECT d.session_id, d.seq, {score} AS score, s.title, s.cwd, {ties}, \
                          CASE WHEN s.cwd = ?3 THEN 0 ELSE 1 END AS elsewhere \
                   {matches} AND {filters} \
                   ORDER BY elsewhere, score DESC, tie_a, tie_b LIMIT ?5) h \
             JOIN session_events e ON e.session_id = h.session_id AND e.seq = h.seq \
             ORDER BY h.elsewhere, h.score DESC, h.tie_a, h.tie_b"
        );
        let rendered = match db.conn {
            Conn::Sqlite(_) => request.query.to_fts5(),
            Conn::Postgres(_) => request.query.to_tsquery(),
        };
        let params = params![rendered, self.agent_id().as_str(), folder, since, limit, i64::from(only_folder)];
        sql::query_all(db, context, &sql, params, |row| {
            let event = rows::read_event(row)?;
            let score: f64 = row.get(7)?;
            let title: String = row.get(8)?;
            let cwd: String = row.get(9)?;
            Ok((event, score, title, cwd))
        })
    }

    /// A search of every session by a shorter way: the engine ranks the
    /// matches without joining each to its session (FTS5 even sorts them
    /// itself) and keeps the best few more than `limit`, in
    /// [`Reader::ranked`]'s order, and only those are joined to their
    /// sessions and events. `None` when too few of them were this agent's
    /// (or recent enough) and more matches were left.
    fn best_of_all(&self, request: &SearchRequest, limit: i64) -> Result<Option<Vec<Found>>> {
        if request.scope != SearchScope::All {
            return Ok(None);
        }
        let db = self.db();
        let context = "searching";
        let fetch = limit * 2 + 20;
        let (sql, rendered) = match db.conn {
            // `CROSS JOIN` keeps SQLite's join order, here and below: the
            // fetched keys first. Planned without the bound values, the
            // join below would otherwise start from the agent's sessions and
            // read every event of each (60 ms against 0.5 at a million).
            Conn::Sqlite(_) => (
                "SELECT d.session_id, d.seq, c.score \
                 FROM (SELECT rowid AS doc, -rank AS score FROM search_text \
                       WHERE search_text MATCH ?1 ORDER BY rank, rowid DESC LIMIT ?2) c \
                 CROSS JOIN search_docs d ON d.doc = c.doc \
                 ORDER BY c.score DESC, c.doc DESC",
                request.query.to_fts5(),
            ),
            Conn::Postgres(_) => (
                "SELECT d.session_id, d.seq, ts_rank_cd(d.words, q)::float8 AS score \
                 FROM event_search d CROSS JOIN to_tsquery('simple', ?1) AS q \
                 WHERE d.words @@ q ORDER BY score DESC, d.session_id, d.seq LIMIT ?2",
                request.query.to_tsquery(),
            ),
        };
        let candidates: Vec<(String, i64, f64)> = sql::query_all(db, context, sql, params![rendered, fetch], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?;
        if candidates.is_empty() {
            return Ok(Some(Vec::new()));
        }
        // Each candidate's place in the order, and its score.
        let placed: HashMap<(&str, i64), (usize, f64)> =
            candidates.iter().enumerate().map(|(n, (s, q, score))| ((s.as_str(), *q), (n, *score))).collect();
        let (agent, since) = (self.agent_id().as_str(), request.since.map(Timestamp::millis));
        let mut params: Vec<&dyn sql::Param> = vec![&agent, &since];
        for (session, seq, _) in &candidates {
            params.push(session);
            params.push(seq);
        }
        let keys = (0..candidates.len()).map(|n| format!("(?{}, ?{})", 3 + 2 * n, 4 + 2 * n)).collect::<Vec<_>>();
        // PostgreSQL has no `CROSS JOIN … ON`, and plans from the values.
        let join = match db.conn {
            Conn::Sqlite(_) => "CROSS JOIN",
            Conn::Postgres(_) => "JOIN",
        };
        let sql = format!(
            "SELECT e.id, e.session_id, e.seq, e.type, e.format_version, e.payload, e.created_at, s.title, s.cwd \
             FROM session_events e {join} sessions s ON s.id = e.session_id \
             WHERE (e.session_id, e.seq) IN ({keys}) AND s.agent_id = ?1 \
             AND (CAST(?2 AS BIGINT) IS NULL OR e.created_at >= CAST(?2 AS BIGINT))",
            keys = keys.join(", ")
        );
        let mut found = sql::query_all(db, context, &sql, &params, |row| {
            let event = rows::read_event(row)?;
            let (session, seq): (String, i64) = (row.get(1)?, row.get(2)?);
            let (place, score) = placed.get(&(session.as_str(), seq)).copied().unwrap_or((usize::MAX, f64::NAN));
            let title: String = row.get(7)?;
            let cwd: String = row.get(8)?;
            Ok((place, (event, score, title, cwd)))
        })?;
        let every_match_fetched = i64::try_from(candidates.len()).unwrap_or(i64::MAX) < fetch;
        if !every_match_fetched && (found.len() as i64) < limit {
            return Ok(None);
        }
        found.sort_by_key(|(place, _)| *place);
        found.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(Some(found.into_iter().map(|(_, hit)| hit).collect()))
    }

    /// The fork edges below `sessions` (their forks, and their forks'
    /// forks) and each one's first successor: two statements for all of a
    /// search's hits, whatever their number.
    fn lineage_of(&self, sessions: &BTreeSet<SessionId>) -> Result<HitLineage> {
        let mut lineage = HitLineage::default();
        if sessions.is_empty() {
            return Ok(lineage);
        }
        let ids: Vec<String> = sessions.iter().map(ToString::to_string).collect();
        let params: Vec<&dyn sql::Param> = ids.iter().map(|id| id as &dyn sql::Param).collect();
        let list = (1..=ids.len()).map(|n| format!("?{n}")).collect::<Vec<_>>().join(", ");
        let forks = format!(
            "WITH RECURSIVE below (session_id) AS ( \
                 SELECT id FROM sessions WHERE id IN ({list}) \
                 UNION \
                 SELECT f.session_id FROM session_forks f JOIN below b ON f.parent_session_id = b.session_id \
             ) SELECT f.parent_session_id, f.session_id, f.fork_seq \
               FROM session_forks f JOIN below b ON f.parent_session_id = b.session_id"
        );
        for (parent, child, at) in
            sql::query_all(self.db(), "finding the forks that share hits", &forks, &params, |row| {
                let (parent, child): (String, String) = (row.get(0)?, row.get(1)?);
                let parent: SessionId = rows::parse_id(&parent, "session_forks", &child)?;
                let child: SessionId = rows::parse_id(&child, "session_forks", &child)?;
                Ok((parent, child, Seq(rows::uint(row.get(2)?))))
            })?
        {
            lineage.forks.entry(parent).or_default().push((child, at));
        }
        let successors = format!(
            "SELECT predecessor_session_id, successor_session_id FROM session_continuations \
             WHERE predecessor_session_id IN ({list}) ORDER BY created_at DESC, id DESC"
        );
        for (predecessor, successor) in
            sql::query_all(self.db(), "finding the successors of hits", &successors, &params, |row| {
                let (predecessor, successor): (String, String) = (row.get(0)?, row.get(1)?);
                Ok((
                    rows::parse_id::<SessionId>(&predecessor, "session_continuations", &successor)?,
                    rows::parse_id::<SessionId>(&successor, "session_continuations", &successor)?,
                ))
            })?
        {
            // Newest first, so the first continuation is the one kept.
            lineage.successors.insert(predecessor, successor);
        }
        Ok(lineage)
    }
}

/// A matching event, its score, and its session's title and folder.
type Found = (seri_core::Event, f64, String, String);

/// The forks and successors of a search's hit sessions.
#[derive(Default)]
struct HitLineage {
    /// Each session's forks and the event each was made at.
    forks: HashMap<SessionId, Vec<(SessionId, Seq)>>,
    /// Each session's first successor.
    successors: HashMap<SessionId, SessionId>,
}

impl HitLineage {
    /// The forks whose history holds `session`'s event `seq` by reference:
    /// forks of it made at or after `seq`, and their forks made at or after
    /// it again, nearest first (by id within a generation).
    fn forks_sharing(&self, session: SessionId, seq: Seq) -> Vec<SessionId> {
        let mut sharing = Vec::new();
        let mut generation = vec![session];
        while !generation.is_empty() {
            let mut next: Vec<SessionId> = generation
                .iter()
                .filter_map(|parent| self.forks.get(parent))
                .flatten()
                .filter(|(_, at)| *at >= seq)
                .map(|(child, _)| *child)
                .collect();
            next.sort_by_key(ToString::to_string);
            sharing.extend(next.iter().copied());
            generation = next;
        }
        sharing
    }
}
