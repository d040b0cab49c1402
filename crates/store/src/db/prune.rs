//! [`Store::prune`]: the plan of `crate::prune` carried out in one
//! transaction, then the space given back.
//!
//! The transaction holds the whole store still ([`TxKind::Exclusive`]),
//! so no run can take a lease on a session between the plan that saw it
//! free and the delete. Every session that goes is first recorded in
//! `session_prunes` (the record that nothing went silently, and the key
//! the append-only tables' triggers ask for); then each step of
//! [`PRUNE_STEPS`] deletes that prune's rows of one table, set-wise, by
//! the tables' session indexes, so a prune costs what it removes.

use std::collections::HashMap;

use seri_core::{SessionId, Timestamp};

use crate::db::connection::{Database, TxKind};
use crate::db::rows::{self, Db};
use crate::db::sql::{execute, params};
use crate::db::usage::prune_graph;
use crate::error::Result;
use crate::prune::{PruneOptions, PruneReason, PrunedLineage, SpaceReturned, StorePruneReport, plan};
use crate::store::Store;
use crate::usage::SessionUsage;

/// The sessions of the prune `?1`.
const PRUNED: &str = "(SELECT session_id FROM session_prunes WHERE prune_id = ?1)";

/// The deletes of one prune, in an order every reference allows: what
/// names a session's runs and events before them, the session last. A
/// table that names sessions gets its step here (a search index, say).
const PRUNE_STEPS: &[(&str, &str)] = &[
    (
        "trajectory_records",
        "DELETE FROM trajectory_records WHERE run_id IN \
         (SELECT run_id FROM trajectories WHERE session_id IN {PRUNED})",
    ),
    ("trajectories", "DELETE FROM trajectories WHERE session_id IN {PRUNED}"),
    ("run_jobs", "DELETE FROM run_jobs WHERE session_id IN {PRUNED}"),
    ("checkpoint_files", "DELETE FROM checkpoint_files WHERE session_id IN {PRUNED}"),
    ("checkpoint_sessions", "DELETE FROM checkpoint_sessions WHERE session_id IN {PRUNED}"),
    ("session_waiters", "DELETE FROM session_waiters WHERE session_id IN {PRUNED}"),
    ("session_leases", "DELETE FROM session_leases WHERE session_id IN {PRUNED}"),
    ("runs", "DELETE FROM runs WHERE session_id IN {PRUNED}"),
    ("session_attachments", "DELETE FROM session_attachments WHERE session_id IN {PRUNED}"),
    // The legacy file stays recorded as read, so it is not imported again.
    ("legacy_imports", "UPDATE legacy_imports SET session_id = NULL WHERE session_id IN {PRUNED}"),
    ("session_snapshots", "DELETE FROM session_snapshots WHERE session_id IN {PRUNED}"),
    ("session_last_events", "DELETE FROM session_last_events WHERE session_id IN {PRUNED}"),
    ("session_pins", "DELETE FROM session_pins WHERE session_id IN {PRUNED}"),
    ("session_forks", "DELETE FROM session_forks WHERE session_id IN {PRUNED}"),
    ("session_continuations", "DELETE FROM session_continuations WHERE successor_session_id IN {PRUNED}"),
    ("session_continuations", "DELETE FROM session_continuations WHERE predecessor_session_id IN {PRUNED}"),
    ("session_events", "DELETE FROM session_events WHERE session_id IN {PRUNED}"),
    ("sessions", "DELETE FROM sessions WHERE id IN {PRUNED}"),
];

/// The search index's rows of a prune's sessions, first (they name the
/// sessions): on SQLite the FTS5 rows by their documents' rowids, then the
/// documents.
const SQLITE_SEARCH_STEPS: &[(&str, &str)] = &[
    (
        "search_text",
        "DELETE FROM search_text WHERE rowid IN (SELECT doc FROM search_docs WHERE session_id IN {PRUNED})",
    ),
    ("search_docs", "DELETE FROM search_docs WHERE session_id IN {PRUNED}"),
];

/// The search index's rows of a prune's sessions, on PostgreSQL.
const POSTGRES_SEARCH_STEPS: &[(&str, &str)] =
    &[("event_search", "DELETE FROM event_search WHERE session_id IN {PRUNED}")];

impl Store {
    /// Removes whole lineages as `options` says (see [`crate::prune`]),
    /// or with `dry_run` only says which: the same plan, by the same code,
    /// so a dry run's report is the real run's (but for `space`).
    ///
    /// One transaction, which holds the whole store still; then, on
    /// SQLite, the freed pages are given back (see `db/sqlite/space.rs`),
    /// and each removed session's attachment folder is deleted.
    pub fn prune(&self, options: &PruneOptions) -> Result<StorePruneReport> {
        let now = self.now();
        let prune_id = self.new_record_id();
        let kind = if options.dry_run { TxKind::Read } else { TxKind::Exclusive };
        let mut report = self.transaction(kind, |db| {
            let (mut graph, usage) = prune_graph(db, now)?;
            if let Some(keep) = options.keep {
                graph.sessions.iter_mut().filter(|s| s.id == keep).for_each(|s| s.held = true);
            }
            let plan = plan(&graph, &options.policy);
            let report = report_of(&plan, &usage, options.dry_run);
            if !options.dry_run && !report.sessions.is_empty() {
                remove(db, &report, &usage, &prune_id, now)?;
            }
            Ok::<_, crate::StoreError>(report)
        })?;
        if options.dry_run || report.sessions.is_empty() {
            return Ok(report);
        }
        tracing::info!(sessions = report.sessions.len(), bytes = report.bytes, prune = %prune_id, "pruned");
        for session in &report.sessions {
            self.take_live_view(*session);
            if let Some(root) = self.attachments_dir() {
                let dir = crate::attachments::session_dir(root, *session);
                if let Err(e) = std::fs::remove_dir_all(&dir)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    tracing::warn!(path = %dir.display(), error = %e, "could not remove a pruned session's attachments");
                }
            }
        }
        report.space = Some(self.return_space()?);
        Ok(report)
    }

    /// Gives the space a prune freed back, and says how much the database
    /// took before and after.
    fn return_space(&self) -> Result<SpaceReturned> {
        let before = self.database_space()?.bytes;
        let (how, problem) = match self.database() {
            Database::Sqlite(db) => match db.without_transaction(crate::db::sqlite::space::return_space) {
                Ok(crate::db::sqlite::space::Returned::Incremental) => ("incremental", None),
                Ok(crate::db::sqlite::space::Returned::Rewritten) => ("rewritten", None),
                Err(e) => {
                    tracing::warn!(error = %e, "a prune's space was not given back");
                    ("none", Some(e.to_string()))
                }
            },
            Database::Postgres(_) => ("reused", None),
        };
        let after = self.database_space().ok().map(|s| s.bytes);
        Ok(SpaceReturned { before, after, how, problem })
    }
}

/// The report of `plan`: its lineages with their titles, and the bytes it
/// frees (an attachment counted only when no kept session names it).
fn report_of(plan: &crate::prune::PrunePlan, usage: &[SessionUsage], dry_run: bool) -> StorePruneReport {
    let by_id: HashMap<SessionId, &SessionUsage> = usage.iter().map(|s| (s.id, s)).collect();
    let sessions = plan.sessions();
    let gone: std::collections::HashSet<SessionId> = sessions.iter().copied().collect();
    let mut bytes = 0u64;
    // Each content: its size, and whether every session naming it goes.
    let mut blobs: HashMap<&str, (u64, bool)> = HashMap::new();
    for s in usage {
        let going = gone.contains(&s.id);
        if going {
            bytes = bytes.saturating_add(s.event_bytes).saturating_add(s.trajectory_bytes);
        }
        for (sha, size) in &s.attachments {
            let entry = blobs.entry(sha.as_str()).or_insert((*size, true));
            entry.1 &= going;
        }
    }
    bytes = bytes.saturating_add(blobs.values().filter(|(_, all)| *all).map(|(size, _)| size).sum());
    let lineages = plan
        .lineages
        .iter()
        .map(|l| {
            let newest = l.sessions.iter().filter_map(|s| by_id.get(s)).max_by_key(|s| (s.last_active, s.id));
            PrunedLineage {
                sessions: l.sessions.clone(),
                title: newest.map(|s| s.title.clone()).unwrap_or_default(),
                cwd: newest.map(|s| s.cwd.clone()).unwrap_or_default(),
                last_active: l.last_active,
                bytes: l.bytes,
                reason: l.reason,
            }
        })
        .collect();
    StorePruneReport {
        dry_run,
        sessions,
        bytes,
        lineages,
        kept_pinned: plan.kept_pinned,
        kept_held: plan.kept_held,
        kept_shared: plan.kept_shared,
        space: None,
    }
}

/// Records and deletes the report's sessions, in the caller's transaction.
fn remove(db: Db<'_>, report: &StorePruneReport, usage: &[SessionUsage], prune_id: &str, now: Timestamp) -> Result<()> {
    let by_id: HashMap<SessionId, &SessionUsage> = usage.iter().map(|s| (s.id, s)).collect();
    let fail = db.fail("recording a prune");
    let mut insert = db
        .conn
        .prepare_cached(
            "INSERT INTO session_prunes (session_id, agent_id, prune_id, bytes, reason, pruned_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(&fail)?;
    for lineage in &report.lineages {
        let reason = match lineage.reason {
            PruneReason::Age => "age",
            PruneReason::Budget => "budget",
        };
        for session in &lineage.sessions {
            let Some(s) = by_id.get(session) else { continue };
            let bytes = rows::int(s.event_bytes.saturating_add(s.trajectory_bytes));
            insert
                .execute(params![session.to_string(), s.agent.as_str(), prune_id, bytes, reason, now.millis()])
                .map_err(&fail)?;
        }
    }
    // The contents the removed sessions name: those no kept session names
    // go after the links.
    let mut contents: Vec<&str> = report
        .sessions
        .iter()
        .filter_map(|s| by_id.get(s))
        .flat_map(|s| s.attachments.keys().map(String::as_str))
        .collect();
    contents.sort_unstable();
    contents.dedup();
    let search_steps = match db.conn {
        crate::db::sql::Conn::Sqlite(_) => SQLITE_SEARCH_STEPS,
        crate::db::sql::Conn::Postgres(_) => POSTGRES_SEARCH_STEPS,
    };
    if let crate::db::sql::Conn::Sqlite(_) = db.conn {
        // FTS5 deletes what it holds: the documents still pending go in first.
        crate::db::search::flush_pending(db)?;
    }
    for (table, step) in search_steps.iter().chain(PRUNE_STEPS) {
        let sql = step.replace("{PRUNED}", PRUNED);
        tracing::debug!(table, "pruning");
        execute(db, "pruning sessions", &sql, params![prune_id])?;
    }
    let mut drop_blob = db
        .conn
        .prepare_cached(
            "DELETE FROM attachment_blobs WHERE sha256 = ?1 \
             AND NOT EXISTS (SELECT 1 FROM session_attachments WHERE sha256 = ?1)",
        )
        .map_err(db.fail("pruning attachments"))?;
    for sha in contents {
        drop_blob.execute(params![sha]).map_err(db.fail("pruning attachments"))?;
    }
    crate::db::checkpoints::collect_blobs(db)?;
    Ok(())
}
