//! [`Store::check_consistency`]: the checks `seri store check` runs, each a
//! query for what should not exist (a session listed without its events,
//! an edge to a session that is gone), then the cached-column check.
//!
//! A check is one entry of [`CHECKS`]: a name, what it looks at, and a
//! function from the connection to the problems it found. A table added
//! beside the events (a search index) adds its check there.

use crate::check::{CheckMode, CheckOutcome, ConsistencyReport, Inconsistency};
use crate::db::connection::TxKind;
use crate::db::rows::{self, Db, query_all, query_first};
use crate::db::sql::params;
use crate::error::Result;
use crate::store::Store;

/// A check's function: the problems it found, as (subject, problem).
type Run = fn(Db<'_>) -> Result<Vec<(String, String)>>;

/// Every check but the cached columns', in the order they run.
const CHECKS: &[(&str, &str, Run)] = &[
    ("session-events", "every listed session has its events, numbered without gaps", session_events),
    ("orphan-events", "every event belongs to a session", orphan_events),
    ("continuations", "every continuation edge names sessions and an event that exist", continuations),
    ("forks", "every fork edge names a parent that exists and holds the fork point", forks),
    ("attachments", "every attachment link names a stored content", attachments),
    ("search-index", "every event has its row in the search index, and every row its event", search_index),
];

impl Store {
    /// Runs every consistency check (events, edges, forks, attachments, the
    /// search index) and the cached-column check
    /// ([`Store::check_cached_columns`], reporting only), and reports
    /// what each found. Reads only.
    pub fn check_consistency(&self) -> Result<ConsistencyReport> {
        let (mut checks, mut problems, sessions) = self.transaction(TxKind::Read, |db| {
            let (mut checks, mut problems) = (Vec::new(), Vec::new());
            for (name, about, run) in CHECKS {
                let found = run(db)?;
                checks.push(CheckOutcome { name, about, problems: found.len() as u64 });
                problems.extend(found.into_iter().map(|(subject, problem)| Inconsistency {
                    check: name,
                    subject,
                    problem,
                }));
            }
            let sessions = query_first(db, "counting sessions", "SELECT count(*) FROM sessions", params![], |r| {
                Ok(rows::uint(r.get(0)?))
            })?
            .unwrap_or(0);
            Ok::<_, crate::StoreError>((checks, problems, sessions))
        })?;
        let cached = self.check_cached_columns(CheckMode::Report)?;
        checks.push(CheckOutcome {
            name: "cached-columns",
            about: "the cached columns, snapshots and list heads are the fold of the events",
            problems: cached.mismatches.len() as u64,
        });
        problems.extend(cached.mismatches.into_iter().map(|m| Inconsistency {
            check: "cached-columns",
            subject: m.session_id.to_string(),
            problem: format!("{} is {:?} but the events say {:?}", m.column, m.cached, m.folded),
        }));
        Ok(ConsistencyReport { sessions, events: cached.events, checks, problems })
    }
}

fn pairs(db: Db<'_>, sql: &str) -> Result<Vec<(String, String)>> {
    query_all(db, "checking the store", sql, params![], |r| Ok((r.get(0)?, r.get(1)?)))
}

/// A listed session's own events must be `fork_seq + 1 ..= seq` of its
/// list row, one each.
fn session_events(db: Db<'_>) -> Result<Vec<(String, String)>> {
    let sql = "SELECT s.id, l.seq, coalesce(f.fork_seq, 0), \
                      (SELECT count(*) FROM session_events e WHERE e.session_id = s.id), \
                      (SELECT max(seq) FROM session_events e WHERE e.session_id = s.id) \
               FROM sessions s LEFT JOIN session_last_events l ON l.session_id = s.id \
               LEFT JOIN session_forks f ON f.session_id = s.id ORDER BY s.id";
    // (session, listed seq, fork seq, own events, newest own seq)
    type Found = (String, Option<i64>, i64, i64, Option<i64>);
    let found: Vec<Found> = query_all(db, "checking sessions' events", sql, params![], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })?;
    let mut problems = Vec::new();
    for (id, listed, fork_seq, count, newest) in found {
        let Some(listed) = listed else {
            problems.push((id, "is not in the session list (session_last_events has no row)".to_owned()));
            continue;
        };
        let head = newest.unwrap_or(fork_seq);
        if listed > head {
            problems.push((id, format!("is listed up to seq {listed}, but its events end at {head}")));
        } else if newest.is_some() && count != head - fork_seq {
            let from = fork_seq + 1;
            problems.push((id, format!("has {count} events where seqs {from}..={head} need {}", head - fork_seq)));
        }
    }
    Ok(problems)
}

fn orphan_events(db: Db<'_>) -> Result<Vec<(String, String)>> {
    pairs(
        db,
        "SELECT e.session_id, CAST(count(*) AS TEXT) FROM session_events e \
         LEFT JOIN sessions s ON s.id = e.session_id WHERE s.id IS NULL GROUP BY e.session_id",
    )
    .map(|found| found.into_iter().map(|(id, n)| (id, format!("has {n} events but no session row"))).collect())
}

fn continuations(db: Db<'_>) -> Result<Vec<(String, String)>> {
    let sql = "SELECT c.id, \
                      CASE WHEN p.id IS NULL THEN 'its predecessor ' || c.predecessor_session_id || ' is missing' \
                           WHEN s.id IS NULL THEN 'its successor ' || c.successor_session_id || ' is missing' \
                           WHEN o.id IS NULL THEN 'its origin ' || c.origin_session_id || ' is missing' \
                           ELSE 'its initiating event ' || c.initiating_event_id || ' is missing' END \
               FROM session_continuations c \
               LEFT JOIN sessions p ON p.id = c.predecessor_session_id \
               LEFT JOIN sessions s ON s.id = c.successor_session_id \
               LEFT JOIN sessions o ON o.id = c.origin_session_id \
               LEFT JOIN session_events e ON e.id = c.initiating_event_id \
               WHERE p.id IS NULL OR s.id IS NULL OR o.id IS NULL OR e.id IS NULL ORDER BY c.id";
    pairs(db, sql).map(|found| found.into_iter().map(|(id, p)| (format!("continuation {id}"), p)).collect())
}

fn forks(db: Db<'_>) -> Result<Vec<(String, String)>> {
    let sql = "SELECT f.session_id, \
                      CASE WHEN p.id IS NULL THEN 'its parent ' || f.parent_session_id || ' is missing' \
                           ELSE 'its fork point ' || CAST(f.fork_seq AS TEXT) || ' is past its parent''s events' END \
               FROM session_forks f \
               LEFT JOIN sessions p ON p.id = f.parent_session_id \
               LEFT JOIN session_last_events l ON l.session_id = f.parent_session_id \
               WHERE p.id IS NULL OR f.fork_seq > coalesce(l.seq, 0) ORDER BY f.session_id";
    pairs(db, sql).map(|found| found.into_iter().map(|(id, p)| (format!("fork {id}"), p)).collect())
}

fn attachments(db: Db<'_>) -> Result<Vec<(String, String)>> {
    let sql = "SELECT a.session_id || '/' || a.attachment_id, 'names content ' || a.sha256 || ' that is not stored' \
               FROM session_attachments a LEFT JOIN attachment_blobs b ON b.sha256 = a.sha256 \
               WHERE b.sha256 IS NULL ORDER BY a.session_id, a.attachment_id";
    pairs(db, sql)
}

fn search_index(db: Db<'_>) -> Result<Vec<(String, String)>> {
    let index = match db.conn {
        crate::db::sql::Conn::Sqlite(_) => "search_docs",
        crate::db::sql::Conn::Postgres(_) => "event_search",
    };
    let unindexed = format!(
        "SELECT e.session_id || '#' || CAST(e.seq AS TEXT), 'is an event the search index does not hold' \
         FROM session_events e WHERE NOT EXISTS \
         (SELECT 1 FROM {index} d WHERE d.session_id = e.session_id AND d.seq = e.seq) ORDER BY e.session_id, e.seq"
    );
    let stray = format!(
        "SELECT d.session_id || '#' || CAST(d.seq AS TEXT), 'is in the search index but is no event' \
         FROM {index} d WHERE NOT EXISTS \
         (SELECT 1 FROM session_events e WHERE e.session_id = d.session_id AND e.seq = d.seq) \
         ORDER BY d.session_id, d.seq"
    );
    let mut found = pairs(db, &unindexed)?;
    found.extend(pairs(db, &stray)?);
    let mut found: Vec<(String, String)> =
        found.into_iter().map(|(event, problem)| (format!("event {event}"), problem)).collect();
    if let crate::db::sql::Conn::Sqlite(_) = db.conn {
        // A document waiting for FTS5 is some event's.
        let orphan = "SELECT 'document ' || CAST(p.doc AS TEXT), 'waits to be indexed but is no event''s' \
                      FROM search_pending p WHERE NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.doc = p.doc) \
                      ORDER BY p.doc";
        found.extend(pairs(db, orphan)?);
    }
    Ok(found)
}
