//! Retention over the trajectory tables: which sessions' trajectories are
//! old enough to delete, and which legacy imports to mark forgotten. The
//! rules are [`crate::trajectories::retention`]'s.

use std::path::PathBuf;

use crate::db::sql::params;
use seri_core::{SessionId, Timestamp};

use crate::db::read::Reader;
use crate::db::rows::query_all;
use crate::db::write::WriteTx;
use crate::error::{DataError, Result, StoreError};
use crate::trajectories::retention::{LegacyTrajectory, PruneReport, RetentionPolicy, file_modified};

impl WriteTx<'_> {
    /// Ages out this agent's trajectories; see the
    /// [retention rules](crate::trajectories::retention).
    pub fn prune_trajectories(&mut self, policy: &RetentionPolicy) -> Result<PruneReport> {
        let agent = self.read().agent_id().clone();
        let db = self.db();
        let now = self.now();
        let cutoff = policy.cutoff(now);
        let keep = policy.current_session.map(|s| s.to_string());
        let mut report = PruneReport::default();

        let newest = "SELECT t.session_id, max(CASE WHEN r.at > t.started_at THEN r.at ELSE t.started_at END) \
                FROM trajectories t JOIN sessions s ON s.id = t.session_id \
                LEFT JOIN trajectory_records r ON r.run_id = t.run_id \
                WHERE s.agent_id = ?1 GROUP BY t.session_id ORDER BY t.session_id";
        let sessions: Vec<(String, i64)> =
            query_all(db, "finding old trajectories", newest, params![agent.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let fail = db.fail("pruning trajectories");
        for (session, newest) in sessions {
            if newest >= cutoff.millis() || keep.as_deref() == Some(session.as_str()) {
                continue;
            }
            // Its runs may be recording still: held still, and asked again.
            let parsed: SessionId = session.parse().map_err(|_| {
                StoreError::Data(DataError::CorruptRow {
                    table: "trajectories",
                    id: session.clone(),
                    problem: "session_id is not an id".to_owned(),
                })
            })?;
            db.lock_session(parsed);
            let again = "SELECT max(CASE WHEN r.at > t.started_at THEN r.at ELSE t.started_at END) \
                FROM trajectories t LEFT JOIN trajectory_records r ON r.run_id = t.run_id WHERE t.session_id = ?1";
            let newest: Option<i64> =
                query_all(db, "finding old trajectories", again, params![session.clone()], |r| r.get(0))?
                    .into_iter()
                    .next()
                    .flatten();
            if newest.is_some_and(|newest| newest >= cutoff.millis()) {
                continue;
            }
            let records = db
                .conn
                .execute(
                    "DELETE FROM trajectory_records WHERE run_id IN \
                         (SELECT run_id FROM trajectories WHERE session_id = ?1)",
                    params![session],
                )
                .map_err(&fail)?;
            let runs =
                db.conn.execute("DELETE FROM trajectories WHERE session_id = ?1", params![session]).map_err(&fail)?;
            report.records += records;
            report.trajectories += runs;
            report.sessions.push(parsed);
        }

        let legacy = "SELECT l.id, l.path, l.modified_at, l.imported_at, l.session_id FROM legacy_imports l \
                WHERE l.agent_id = ?1 AND l.session_id IS NOT NULL \
                AND NOT EXISTS (SELECT 1 FROM trajectory_legacy_prunes p WHERE p.legacy_import_id = l.id) \
                ORDER BY l.path, l.imported_at";
        let files: Vec<(String, String, Option<i64>, i64, String)> =
            query_all(db, "finding old legacy files", legacy, params![agent.as_str()], |r| {
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
    }
}

impl Reader<'_> {
    /// Whether the session came from a legacy file, and if so whether
    /// retention has forgotten that file's trajectory.
    pub fn legacy_trajectory(&self, session: SessionId) -> Result<Option<LegacyTrajectory>> {
        self.require_session(session)?;
        let sql = "SELECT l.path, p.pruned_at, p.file_modified_at FROM legacy_imports l \
                LEFT JOIN trajectory_legacy_prunes p ON p.legacy_import_id = l.id \
                WHERE l.session_id = ?1 AND l.agent_id = ?2";
        let found = crate::db::rows::query_first(
            self.db(),
            "reading a legacy import",
            sql,
            params![session.to_string(), self.agent_id().as_str()],
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
    }
}
