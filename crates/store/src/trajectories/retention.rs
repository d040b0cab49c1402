//! Retention: trajectories age out; conversations never do.
//!
//! [`AgentStore::prune_trajectories`] runs at the start of each session
//! (the command line calls it when it opens a runtime). With a window of
//! `N` days:
//!
//! - A session recorded in `seri.db` is pruned once its most recent
//!   trajectory record (or header, for a run that wrote no record) is older
//!   than the window: every trajectory of that session, header and records,
//!   is deleted. Its runs (`runs`), its events and its checkpoints stay.
//! - A session imported from an older release's `.jsonl` file goes by the
//!   file's modification time instead (read from the file when it is still
//!   there, else the time recorded when it was imported). The only
//!   trajectory such a file holds is the tool calls and results it brought
//!   in, so pruning it means seri *forgets that trajectory*: a row in
//!   `trajectory_legacy_prunes` says so, and `seri trajectory show` stops
//!   presenting the imported calls as one. The file is never written,
//!   moved or deleted, and the imported session keeps every event:
//!   `seri thread` still shows the whole conversation. Runs recorded in
//!   that session since (after a `--resume`) are seri's own and follow the
//!   first rule.
//! - The session being recorded ([`RetentionPolicy::current_session`]) is
//!   never pruned, however old its records are.
//!
//! Everything is decided against the store's clock, so tests move a
//! [`crate::ManualClock`] instead of waiting.

use std::path::PathBuf;
use std::time::UNIX_EPOCH;

use rusqlite::params;
use seri_core::{SessionId, Timestamp};

use crate::agent::AgentStore;
use crate::error::{Result, StoreError};
use crate::rows::query_all;

/// How many days recordings are kept when `trajectories.retentionDays` is not set.
pub const DEFAULT_RETENTION_DAYS: u32 = 30;

const DAY_MILLIS: i64 = 86_400_000;

/// What to prune.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Recordings older than this many days go.
    pub days: u32,
    /// The session being recorded, if any: never pruned.
    pub current_session: Option<SessionId>,
}

impl RetentionPolicy {
    /// The default window, keeping `current_session`.
    pub fn new(current_session: Option<SessionId>) -> Self {
        Self { days: DEFAULT_RETENTION_DAYS, current_session }
    }

    /// The oldest time that is still inside the window, seen from `now`.
    pub fn cutoff(&self, now: Timestamp) -> Timestamp {
        Timestamp(now.millis().saturating_sub(i64::from(self.days).saturating_mul(DAY_MILLIS)))
    }
}

/// What a pruning removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Sessions whose trajectories were deleted, oldest id first.
    pub sessions: Vec<SessionId>,
    /// Trajectories (runs) deleted.
    pub trajectories: u64,
    /// Records deleted with them.
    pub records: u64,
    /// Legacy files whose trajectory was forgotten.
    pub legacy_files: Vec<PathBuf>,
}

impl PruneReport {
    /// Whether nothing was pruned.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty() && self.legacy_files.is_empty()
    }
}

impl AgentStore<'_> {
    /// Ages out this agent's trajectories; see the [module doc](self).
    /// One transaction: everything it decides is pruned, or nothing.
    pub fn prune_trajectories(&self, policy: &RetentionPolicy) -> Result<PruneReport> {
        let agent = self.agent_id().clone();
        self.write(|tx| {
            let db = tx.db();
            let now = tx.now();
            let cutoff = policy.cutoff(now);
            let keep = policy.current_session.map(|s| s.to_string());
            let mut report = PruneReport::default();

            let newest = "SELECT t.session_id, max(max(t.started_at, coalesce(r.at, t.started_at))) \
                FROM trajectories t JOIN sessions s ON s.id = t.session_id \
                LEFT JOIN trajectory_records r ON r.run_id = t.run_id \
                WHERE s.agent_id = ?1 GROUP BY t.session_id ORDER BY t.session_id";
            let sessions: Vec<(String, i64)> =
                query_all(db, "finding old trajectories", newest, [agent.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let fail = db.fail("pruning trajectories");
            for (session, newest) in sessions {
                if newest >= cutoff.millis() || keep.as_deref() == Some(session.as_str()) {
                    continue;
                }
                let records = db
                    .conn
                    .execute(
                        "DELETE FROM trajectory_records WHERE run_id IN \
                         (SELECT run_id FROM trajectories WHERE session_id = ?1)",
                        [&session],
                    )
                    .map_err(&fail)?;
                let runs =
                    db.conn.execute("DELETE FROM trajectories WHERE session_id = ?1", [&session]).map_err(&fail)?;
                report.records += records as u64;
                report.trajectories += runs as u64;
                report.sessions.push(session.parse().map_err(|_| StoreError::CorruptRow {
                    table: "trajectories",
                    id: session.clone(),
                    problem: "session_id is not an id".to_owned(),
                })?);
            }

            let legacy = "SELECT l.id, l.path, l.modified_at, l.imported_at, l.session_id FROM legacy_imports l \
                WHERE l.agent_id = ?1 AND l.session_id IS NOT NULL \
                AND NOT EXISTS (SELECT 1 FROM trajectory_legacy_prunes p WHERE p.legacy_import_id = l.id) \
                ORDER BY l.path, l.imported_at";
            let files: Vec<(String, String, Option<i64>, i64, String)> =
                query_all(db, "finding old legacy files", legacy, [agent.as_str()], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?;
            for (id, path, recorded, imported_at, session) in files {
                if keep.as_deref() == Some(session.as_str()) {
                    continue;
                }
                let path = PathBuf::from(path);
                let modified = file_modified(&path).or(recorded).unwrap_or(imported_at);
                if modified >= cutoff.millis() {
                    continue;
                }
                db.conn
                    .execute(
                        "INSERT INTO trajectory_legacy_prunes (legacy_import_id, file_modified_at, pruned_at) \
                         VALUES (?1, ?2, ?3)",
                        params![id, modified, now.millis()],
                    )
                    .map_err(&fail)?;
                report.legacy_files.push(path);
            }
            Ok(report)
        })
    }

    /// Whether the session came from a legacy file, and if so whether
    /// retention has forgotten that file's trajectory.
    pub fn legacy_trajectory(&self, session: SessionId) -> Result<Option<LegacyTrajectory>> {
        self.read(|r| {
            r.require_session(session)?;
            let sql = "SELECT l.path, p.pruned_at, p.file_modified_at FROM legacy_imports l \
                LEFT JOIN trajectory_legacy_prunes p ON p.legacy_import_id = l.id \
                WHERE l.session_id = ?1 AND l.agent_id = ?2";
            let found = crate::rows::query_first(
                r.db(),
                "reading a legacy import",
                sql,
                params![session.to_string(), r.agent_id().as_str()],
                |row| {
                    let path: String = row.get(0)?;
                    let pruned: Option<i64> = row.get(1)?;
                    let modified: Option<i64> = row.get(2)?;
                    Ok(LegacyTrajectory {
                        path: PathBuf::from(path),
                        pruned_at: pruned.map(Timestamp),
                        file_modified_at: modified.map(Timestamp),
                    })
                },
            )?;
            Ok(found)
        })
    }
}

/// A session imported from a legacy file, as trajectories see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyTrajectory {
    /// The file.
    pub path: PathBuf,
    /// When retention forgot its trajectory, if it did.
    pub pruned_at: Option<Timestamp>,
    /// The modification time that decision went by.
    pub file_modified_at: Option<Timestamp>,
}

/// A file's modification time in Unix milliseconds, if the file is there
/// and the file system keeps one.
fn file_modified(path: &std::path::Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let millis = modified.duration_since(UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(millis).ok()
}
