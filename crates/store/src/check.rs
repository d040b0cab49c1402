//! The cached-column check: refold every session from its seed and events
//! and compare the result with the cached columns of `sessions`.
//!
//! Cached columns exist only because a fold can rebuild them; this is that
//! rebuild. Appends keep them right by construction (they fold the new
//! events onto the cached values in the same transaction), so a mismatch
//! means someone edited the database by hand, or a bug.

use rusqlite::params;
use seri_core::{SessionId, SessionInfo};

use crate::connection::TxKind;
use crate::error::{Result, StoreError};
use crate::rows::{self, Cached, Db, SESSION_COLUMNS, SessionRow};
use crate::store::Store;
use crate::write::write_cached;

/// Whether the check only reports or also rewrites what it found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckMode {
    /// Report mismatches; change nothing.
    Report,
    /// Report mismatches and overwrite the cached columns with the fold.
    Repair,
}

/// One cached column that disagrees with the fold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheMismatch {
    /// The session.
    pub session_id: SessionId,
    /// The column of `sessions`.
    pub column: &'static str,
    /// What the column holds.
    pub cached: String,
    /// What the fold of seed and events says.
    pub folded: String,
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// How many sessions were folded.
    pub sessions: u64,
    /// How many events were folded.
    pub events: u64,
    /// Every disagreement, by session then column.
    pub mismatches: Vec<CacheMismatch>,
    /// Whether the mismatches were overwritten with the fold.
    pub repaired: bool,
}

impl CheckReport {
    /// Whether every cached column matched.
    pub fn is_clean(&self) -> bool {
        self.mismatches.is_empty()
    }
}

impl Store {
    /// Refolds every session of every agent and compares the cached columns
    /// (`title`, `description`, `title_source`) with the fold; with [`CheckMode::Repair`], rewrites the ones that differ.
    /// Runs in one write transaction, so the report is of one moment.
    pub fn check_cached_columns(&self, mode: CheckMode) -> Result<CheckReport> {
        self.transaction(TxKind::Write, |db| {
            let sql = format!("SELECT {SESSION_COLUMNS} FROM session_heads ORDER BY id");
            let sessions = rows::query_all(db, "checking cached columns", &sql, [], SessionRow::read)?;
            let mut report =
                CheckReport { sessions: sessions.len() as u64, events: 0, mismatches: Vec::new(), repaired: false };
            for row in sessions {
                let (folded, events) = fold(db, &row)?;
                report.events += events;
                let found = compare(row.id, &row.cached, &folded);
                if !found.is_empty() && mode == CheckMode::Repair {
                    write_cached(db, row.id, &folded)?;
                    report.repaired = true;
                }
                report.mismatches.extend(found);
            }
            Ok::<_, StoreError>(report)
        })
    }
}

fn fold(db: Db<'_>, row: &SessionRow) -> Result<(Cached, u64)> {
    let seed = row.seed()?;
    let sql = format!("SELECT {} FROM session_events WHERE session_id = ?1 ORDER BY seq", rows::EVENT_COLUMNS);
    let events = rows::query_all(db, "checking cached columns", &sql, params![row.id.to_string()], rows::read_event)?;
    Ok((Cached::of(&SessionInfo::fold(&seed, &events)), events.len() as u64))
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
