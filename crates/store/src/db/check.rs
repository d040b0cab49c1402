//! [`Store::check_cached_columns`] over SQLite: every session row and its
//! events, read and refolded in one write transaction.

use crate::db::sql::params;
use seri_core::{SessionId, SessionInfo};

use crate::check::{CacheMismatch, CheckMode, CheckReport};
use crate::db::connection::TxKind;
use crate::db::rows::{self, Cached, Db, SESSION_COLUMNS, SessionRow};
use crate::db::snapshot;
use crate::db::write::write_cached;
use crate::error::{Result, StoreError};
use crate::store::Store;

impl Store {
    /// Refolds every session of every agent and compares the cached columns
    /// (`title`, `description`, `title_source`), the folded snapshot
    /// (`session_snapshots`) and the newest event lists show
    /// (`session_last_events`) with the fold; with [`CheckMode::Repair`],
    /// rewrites the ones that differ.
    /// Runs in one write transaction, so the report is of one moment.
    pub fn check_cached_columns(&self, mode: CheckMode) -> Result<CheckReport> {
        self.transaction(TxKind::Exclusive, |db| {
            let sql = format!("SELECT {SESSION_COLUMNS} FROM session_heads ORDER BY id");
            let sessions = rows::query_all(db, "checking cached columns", &sql, params![], SessionRow::read)?;
            let mut report =
                CheckReport { sessions: sessions.len() as u64, events: 0, mismatches: Vec::new(), repaired: false };
            for row in sessions {
                let checked = check_session(db, self, &row, mode)?;
                report.events += checked.events;
                report.mismatches.extend(checked.mismatches);
                report.repaired |= checked.repaired;
            }
            Ok::<_, StoreError>(report)
        })
    }
}

/// What [`check_session`] found of one session.
pub(crate) struct Checked {
    /// The session's own events folded.
    pub(crate) events: u64,
    /// What disagrees with the fold, column by column.
    pub(crate) mismatches: Vec<CacheMismatch>,
    /// Whether a mismatch was overwritten with the fold.
    pub(crate) repaired: bool,
}

/// One session's cached columns, newest event (`session_last_events`) and
/// snapshot, compared with the fold of its seed and events; with
/// [`CheckMode::Repair`], those that differ rewritten. A copy into the
/// store checks each session it copied this way (`copy.rs`).
pub(crate) fn check_session(db: Db<'_>, store: &Store, row: &SessionRow, mode: CheckMode) -> Result<Checked> {
    let (folded, events, own_from) = fold(db, store, row)?;
    let mut checked = Checked {
        events: events.iter().filter(|e| e.seq.get() >= own_from).count() as u64,
        mismatches: compare(row.id, &row.cached, &Cached::of(&folded)),
        repaired: false,
    };
    if !checked.mismatches.is_empty() && mode == CheckMode::Repair {
        write_cached(db, row.id, &Cached::of(&folded))?;
        checked.repaired = true;
    }
    // The cached head must be the newest own event's seq and time; a
    // session without events of its own has its fork point (0 for none)
    // and its creation time. (A fork's inherited events are its parent's rows.)
    let last = Some(match events.last().filter(|e| e.seq.get() >= own_from) {
        Some(e) => (e.seq.get(), e.at.millis()),
        None => (own_from - 1, row.created_at.millis()),
    });
    let cached = read_last_event(db, row.id)?;
    if cached != last {
        checked.mismatches.push(CacheMismatch {
            session_id: row.id,
            column: "session_last_events",
            cached: show_last_event(cached),
            folded: show_last_event(last),
        });
        if mode == CheckMode::Repair {
            write_last_event(db, row.id, last)?;
            checked.repaired = true;
        }
    }
    // The snapshot must be the fold of the events up to its seq.
    if let Some((seq, snapshot)) = snapshot::read(db, row.id)? {
        let seed = row.seed()?;
        let upto = events.iter().take_while(|e| e.seq.get() <= seq);
        let expected = SessionInfo::fold(&seed, upto);
        if snapshot != expected {
            checked.mismatches.push(CacheMismatch {
                session_id: row.id,
                column: "session_snapshots.info",
                cached: serde_json::to_string(&snapshot).unwrap_or_default(),
                folded: serde_json::to_string(&expected).unwrap_or_default(),
            });
            if mode == CheckMode::Repair {
                snapshot::write(db, &expected)?;
                checked.repaired = true;
            }
        }
    }
    Ok(checked)
}

/// The fold of a session's seed and whole history (a fork's includes its
/// parent's events up to the fork point), the history, and the first seq
/// of the session's own rows.
fn fold(db: Db<'_>, store: &Store, row: &SessionRow) -> Result<(SessionInfo, Vec<seri_core::Event>, u64)> {
    let seed = row.seed()?;
    let reader = crate::db::read::Reader::new(db, &row.agent_id, store);
    let events = reader.events(row.id, seri_core::SeqRange::ALL)?;
    let own_from = crate::db::forks::chain(db, row.id)?.first().map_or(1, |edge| edge.fork_seq.get() + 1);
    Ok((SessionInfo::fold(&seed, &events), events, own_from))
}

/// A session's cached newest event: its seq and time.
type LastEvent = Option<(u64, i64)>;

fn read_last_event(db: Db<'_>, session_id: SessionId) -> Result<LastEvent> {
    let sql = "SELECT seq, created_at FROM session_last_events WHERE session_id = ?1";
    rows::query_first(db, "checking cached columns", sql, params![session_id.to_string()], |row| {
        Ok((rows::uint(row.get(0)?), row.get::<_, i64>(1)?))
    })
}

fn write_last_event(db: Db<'_>, session_id: SessionId, last: LastEvent) -> Result<()> {
    let context = "repairing a session's newest event";
    let id = session_id.to_string();
    match last {
        Some((seq, at)) => crate::db::sql::execute(
            db,
            context,
            "INSERT INTO session_last_events (session_id, agent_id, seq, created_at) \
             SELECT id, agent_id, ?2, ?3 FROM sessions WHERE id = ?1 \
             ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, created_at = excluded.created_at",
            params![id, rows::int(seq), at],
        )?,
        None => {
            crate::db::sql::execute(db, context, "DELETE FROM session_last_events WHERE session_id = ?1", params![id])?
        }
    };
    Ok(())
}

fn show_last_event(last: LastEvent) -> String {
    match last {
        Some((seq, at)) => format!("seq {seq} at {at}"),
        None => "(none)".to_owned(),
    }
}

fn compare(session_id: SessionId, cached: &Cached, folded: &Cached) -> Vec<CacheMismatch> {
    type Show = fn(&Cached) -> String;
    let columns: [(&'static str, Show); 3] = [
        ("title", |c| c.title.clone()),
        ("description", |c| c.description.clone()),
        ("title_source", |c| rows::title_source_to_sql(c.title_source).unwrap_or("(none)").to_owned()),
    ];
    columns
        .into_iter()
        .filter_map(|(column, show)| {
            let (cached, folded) = (show(cached), show(folded));
            (cached != folded).then_some(CacheMismatch { session_id, column, cached, folded })
        })
        .collect()
}
