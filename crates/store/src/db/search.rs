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

/// The SQLite index rows of one event, written in its append's
/// transaction, right after the event's own row (`write.rs`).
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
            .prepare_cached("INSERT INTO search_text (rowid, text) VALUES (last_insert_rowid(), ?1)")
            .map_err(&fail)?
            .execute_pipelined(vec![Value::Text(text)])
            .map_err(&fail)?;
    }
    Ok(())
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
    pub fn search(&self, request: &SearchRequest) -> Result<Vec<SearchHit>> {
        let db = self.db();
        let context = "searching";
        let limit = rows::int(request.limit.min(crate::search::MAX_SEARCH_LIMIT));
        let (folder, only_folder) = match &request.scope {
            SearchScope::All => (None, false),
            SearchScope::FolderFirst(cwd) => (Some(cwd.clone()), false),
            SearchScope::Folder(cwd) => (Some(cwd.clone()), true),
        };
        let since = request.since.map(Timestamp::millis);
        // ?1 the query, ?2 the agent, ?3 the folder (first, or only when
        // ?6 is 1), ?4 since, ?5 the limit. Every one is used whatever the
        // request, so both engines can type and bind them all.
        let filters = "s.agent_id = ?2 AND (CAST(?4 AS BIGINT) IS NULL OR e.created_at >= CAST(?4 AS BIGINT)) \
                       AND (CAST(?6 AS BIGINT) = 0 OR s.cwd = ?3)";
        let folder_first = "CASE WHEN s.cwd = ?3 THEN 0 ELSE 1 END";
        let sql = match db.conn {
            Conn::Sqlite(_) => format!(
                "SELECT e.id, e.session_id, e.seq, e.type, e.format_version, e.payload, e.created_at, \
                        -bm25(search_text), s.title, s.cwd \
                 FROM search_text \
                 JOIN search_docs d ON d.doc = search_text.rowid \
                 JOIN session_events e ON e.session_id = d.session_id AND e.seq = d.seq \
                 JOIN sessions s ON s.id = d.session_id \
                 WHERE search_text MATCH ?1 AND {filters} \
                 ORDER BY {folder_first}, bm25(search_text), e.id LIMIT ?5"
            ),
            Conn::Postgres(_) => format!(
                "SELECT e.id, e.session_id, e.seq, e.type, e.format_version, e.payload, e.created_at, \
                        ts_rank_cd(d.words, q)::float8 AS score, s.title, s.cwd \
                 FROM event_search d \
                 CROSS JOIN to_tsquery('simple', ?1) AS q \
                 JOIN session_events e ON e.session_id = d.session_id AND e.seq = d.seq \
                 JOIN sessions s ON s.id = d.session_id \
                 WHERE d.words @@ q AND {filters} \
                 ORDER BY {folder_first}, score DESC, e.id LIMIT ?5"
            ),
        };
        let rendered = match db.conn {
            Conn::Sqlite(_) => request.query.to_fts5(),
            Conn::Postgres(_) => request.query.to_tsquery(),
        };
        let params = params![rendered, self.agent_id().as_str(), folder, since, limit, i64::from(only_folder)];
        let found = sql::query_all(db, context, &sql, params, |row| {
            let event = rows::read_event(row)?;
            let score: f64 = row.get(7)?;
            let title: String = row.get(8)?;
            let cwd: String = row.get(9)?;
            Ok((event, score, title, cwd))
        })?;
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
                shared_with: self.forks_sharing(event.session_id, event.seq)?,
                continued_in: self.successor_of(event.session_id)?,
                title,
                cwd,
            });
        }
        Ok(hits)
    }

    /// The forks whose history holds `session`'s event `seq` by reference:
    /// forks of it made at or after `seq`, and their forks made at or after
    /// it again, nearest first.
    fn forks_sharing(&self, session: SessionId, seq: Seq) -> Result<Vec<SessionId>> {
        let sql = "WITH RECURSIVE sharing (session_id, depth) AS ( \
                       SELECT session_id, 1 FROM session_forks WHERE parent_session_id = ?1 AND fork_seq >= ?2 \
                       UNION ALL \
                       SELECT f.session_id, s.depth + 1 FROM session_forks f \
                       JOIN sharing s ON f.parent_session_id = s.session_id WHERE f.fork_seq >= ?2 \
                   ) SELECT session_id FROM sharing ORDER BY depth, session_id";
        let params = params![session.to_string(), rows::int(seq.get())];
        sql::query_all(self.db(), "finding the forks that share a hit", sql, params, |row| {
            let id: String = row.get(0)?;
            rows::parse_id(&id, "session_forks", &id)
        })
    }

    /// The successor of `session`'s first continuation, if it was continued.
    fn successor_of(&self, session: SessionId) -> Result<Option<SessionId>> {
        let sql = "SELECT successor_session_id FROM session_continuations WHERE predecessor_session_id = ?1 \
                   ORDER BY created_at, id LIMIT 1";
        sql::query_first(self.db(), "finding a hit's successor", sql, params![session.to_string()], |row| {
            let id: String = row.get(0)?;
            rows::parse_id(&id, "session_continuations", &id)
        })
    }
}
