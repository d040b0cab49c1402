//! [`Store::copy_into`]: every row of one store copied into another (a
//! profile's SQLite history into PostgreSQL, for `seri store migrate`), in
//! one transaction on each side, idempotently, and verified.
//!
//! Rows are copied table by table in the order their references need, each
//! with `INSERT … ON CONFLICT DO NOTHING`, so a second copy finds everything
//! already there and adds nothing. Events and continuation edges never
//! change, so one already in the target must be the same row; an event
//! whose seq the target holds with another id means both stores were
//! written since the last copy, and the copy stops (rolled back) saying
//! where. Other rows the target already has are kept as they are there: a
//! session's cached title or a run's status may have moved on in it.
//!
//! Leases, their waiters and the shared queue's jobs are not copied: they
//! are the live coordination of processes on the source, whose holders
//! cannot hold a lease or claim a job on the target. Nor is
//! `session_last_events`: the target's own trigger writes it as each event
//! is inserted there.
//!
//! A text value holding U+0000 goes into PostgreSQL with U+FFFD in its
//! place (its text cannot hold a NUL): only a cached title or description
//! an older build folded from a message holding one, which the fold now
//! shows the same way. JSON text (payloads) escapes NULs and is copied
//! exactly.
//!
//! Before the target commits, the counts must add up (each source row copied
//! or already there, and the target holding at least as many), and every
//! session of the source is read back from the target and folded, and the
//! fold must equal the source's.

use std::collections::BTreeMap;

use seri_core::{Event, SessionInfo};

use crate::db::connection::TxKind;
use crate::db::rows::{self, SESSION_COLUMNS, SessionRow};
use crate::db::sql::{self, Db, Param, Value, params};
use crate::error::{Result, StoreError};
use crate::store::Store;

/// One table and how its rows are copied.
struct Table {
    name: &'static str,
    columns: &'static [&'static str],
    /// Its primary key's columns.
    key: &'static [&'static str],
    /// The order rows are copied in: referenced rows first.
    order: &'static str,
    /// Rows never change once written: one already in the target must be identical.
    immutable: bool,
}

/// Every table that is copied, in an order that satisfies their references.
const TABLES: &[Table] = &[
    Table {
        name: "sessions",
        columns: &[
            "id",
            "agent_id",
            "cwd",
            "created_at",
            "seed",
            "title",
            "description",
            "title_source",
            "parent_run_id",
        ],
        key: &["id"],
        order: "created_at, id",
        immutable: false,
    },
    Table {
        name: "session_forks",
        columns: &["session_id", "parent_session_id", "fork_seq", "created_at", "via"],
        key: &["session_id"],
        order: "created_at, session_id",
        immutable: true,
    },
    Table {
        name: "session_events",
        columns: &["id", "session_id", "seq", "type", "format_version", "payload", "created_at"],
        key: &["id"],
        order: "session_id, seq",
        immutable: true,
    },
    Table {
        name: "runs",
        columns: &[
            "id",
            "session_id",
            "kind",
            "lane",
            "parent_run_id",
            "status",
            "result",
            "started_at",
            "finished_at",
        ],
        key: &["id"],
        order: "started_at, id",
        immutable: false,
    },
    Table {
        name: "session_continuations",
        columns: &[
            "id",
            "predecessor_session_id",
            "successor_session_id",
            "origin_session_id",
            "tool_call_id",
            "initiating_event_id",
            "reason",
            "manifest_cbor",
            "created_at",
        ],
        key: &["id"],
        order: "created_at, id",
        immutable: true,
    },
    Table {
        name: "legacy_imports",
        columns: &[
            "id",
            "agent_id",
            "path",
            "sha256",
            "bytes",
            "modified_at",
            "legacy_id",
            "session_id",
            "events",
            "imported_at",
        ],
        key: &["id"],
        order: "imported_at, id",
        immutable: false,
    },
    Table {
        name: "trajectories",
        columns: &["run_id", "session_id", "header", "started_at"],
        key: &["run_id"],
        order: "started_at, run_id",
        immutable: false,
    },
    Table {
        name: "trajectory_records",
        columns: &["run_id", "ord", "kind", "data", "at"],
        key: &["run_id", "ord"],
        order: "run_id, ord",
        immutable: false,
    },
    Table {
        name: "trajectory_legacy_prunes",
        columns: &["legacy_import_id", "file_modified_at", "pruned_at"],
        key: &["legacy_import_id"],
        order: "legacy_import_id",
        immutable: false,
    },
    Table {
        name: "checkpoint_blobs",
        columns: &["sha256", "bytes", "content"],
        key: &["sha256"],
        order: "sha256",
        immutable: false,
    },
    Table {
        name: "checkpoint_sessions",
        columns: &["session_id", "cwd", "touched_at", "live", "covers_from_seq", "retired_at"],
        key: &["session_id"],
        order: "session_id",
        immutable: false,
    },
    Table {
        name: "checkpoint_files",
        columns: &[
            "id",
            "session_id",
            "turn_seq",
            "run_id",
            "tool_call_id",
            "path",
            "before_sha256",
            "before_bytes",
            "before_kept",
            "after_state",
            "after_sha256",
            "after_bytes",
            "created_at",
        ],
        key: &["id"],
        order: "created_at, id",
        immutable: false,
    },
    Table {
        name: "settings",
        columns: &["agent_id", "key", "value", "updated_at"],
        key: &["agent_id", "key"],
        order: "agent_id, key",
        immutable: false,
    },
    Table {
        name: "server_tokens",
        columns: &["token_sha256", "agent_id", "created_at"],
        key: &["token_sha256"],
        order: "created_at, token_sha256",
        immutable: false,
    },
    Table {
        name: "legacy_unreadable",
        columns: &["agent_id", "path", "version", "error", "seen_at"],
        key: &["agent_id", "path", "version"],
        order: "agent_id, path, version",
        immutable: false,
    },
    Table {
        name: "session_snapshots",
        columns: &["session_id", "seq", "info"],
        key: &["session_id"],
        order: "session_id",
        immutable: false,
    },
    Table {
        name: "attachment_blobs",
        columns: &["sha256", "bytes"],
        key: &["sha256"],
        order: "sha256",
        immutable: true,
    },
    Table {
        name: "session_attachments",
        columns: &["session_id", "attachment_id", "sha256"],
        key: &["session_id", "attachment_id"],
        order: "session_id, attachment_id",
        immutable: true,
    },
];

/// What [`Store::copy_into`] did, table by table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Per table: rows copied now, and rows the target already had.
    pub tables: BTreeMap<&'static str, CopiedRows>,
    /// Sessions whose fold was checked to be the same in both stores.
    pub sessions_verified: u64,
}

/// Rows of one table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopiedRows {
    /// Inserted by this copy.
    pub copied: u64,
    /// Already in the target (an earlier copy, or written there since).
    pub already_there: u64,
}

impl CopyReport {
    /// Rows copied now, over every table.
    pub fn copied(&self) -> u64 {
        self.tables.values().map(|t| t.copied).sum()
    }
}

impl std::fmt::Display for CopyReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for table in TABLES {
            let rows = self.tables.get(table.name).copied().unwrap_or_default();
            writeln!(f, "  {:<26} {:>9} copied  {:>9} already there", table.name, rows.copied, rows.already_there)?;
        }
        let sessions = match self.sessions_verified {
            1 => "the 1 session folds".to_owned(),
            n => format!("all {n} sessions fold"),
        };
        write!(f, "verified: the counts add up, and {sessions} to the same view in both stores")
    }
}

impl Store {
    /// Copies every row of this store into `target` (see the module docs):
    /// one read snapshot here, one write transaction there, which commits
    /// only once every session of this store folds the same in `target`.
    /// Running it again copies nothing and reports everything already there.
    pub fn copy_into(&self, target: &Store) -> Result<CopyReport> {
        if self.path() == target.path() {
            return Err(StoreError::CopyOntoItself { path: self.path().to_path_buf() });
        }
        self.transaction(TxKind::Read, |source| {
            target.transaction(TxKind::Exclusive, |into| {
                let mut report = CopyReport::default();
                for table in TABLES {
                    let rows = copy_table(source, into, table)?;
                    report.tables.insert(table.name, rows);
                }
                verify_counts(source, into, &report)?;
                report.sessions_verified = verify(source, into)?;
                Ok::<_, StoreError>(report)
            })
        })
    }
}

fn copy_table(source: Db<'_>, into: Db<'_>, table: &Table) -> Result<CopiedRows> {
    let columns = table.columns.join(", ");
    let select = format!("SELECT {columns} FROM {} ORDER BY {}", table.name, table.order);
    let placeholders: Vec<String> = (1..=table.columns.len()).map(|i| format!("?{i}")).collect();
    let insert =
        format!("INSERT INTO {} ({columns}) VALUES ({}) ON CONFLICT DO NOTHING", table.name, placeholders.join(", "));
    // The key's columns, and where each is among the copied ones.
    let key_at: Vec<usize> = table.key.iter().filter_map(|k| table.columns.iter().position(|c| c == k)).collect();
    let key_filter: Vec<String> = table.key.iter().enumerate().map(|(i, k)| format!("{k} = ?{}", i + 1)).collect();
    let existing = format!("SELECT {columns} FROM {} WHERE {}", table.name, key_filter.join(" AND "));
    let mut rows = CopiedRows::default();
    let mut failure = None;
    sql::query_each(source, "copying a table", &select, params![], |row| {
        let values = (0..table.columns.len())
            .map(|i| row.value(i).map(|v| v.storable_in(into)))
            .collect::<Result<Vec<Value>, _>>()?;
        let params: Vec<&dyn Param> = values.iter().map(|v| v as &dyn Param).collect();
        let inserted =
            sql::execute(into, "copying a row", &insert, &params).map_err(crate::db::sql::RowError::Store)?;
        if inserted == 1 {
            rows.copied += 1;
            return Ok(true);
        }
        rows.already_there += 1;
        if table.immutable {
            // Keyed by id but also unique by other columns ((session_id, seq)):
            // the row there must be this very row.
            let key: Vec<&dyn Param> = key_at.iter().filter_map(|&at| params.get(at).copied()).collect();
            let there = sql::query_first(into, "comparing a copied row", &existing, &key, |r| {
                (0..table.columns.len()).map(|i| r.value(i)).collect::<Result<Vec<Value>, _>>()
            })
            .map_err(crate::db::sql::RowError::Store)?;
            if there.as_ref() != Some(&values) {
                failure = Some(StoreError::CopyDiverged { table: table.name, row: describe(table, &values) });
                return Ok(false);
            }
        }
        Ok(true)
    })?;
    match failure {
        Some(error) => Err(error),
        None => Ok(rows),
    }
}

/// A row as people can find it: its key, and the session and seq of an event.
fn describe(table: &Table, values: &[Value]) -> String {
    let show = |name: &str| {
        let at = table.columns.iter().position(|c| *c == name)?;
        match values.get(at)? {
            Value::Text(text) => Some(format!("{name} {text}")),
            Value::Int(n) => Some(format!("{name} {n}")),
            _ => None,
        }
    };
    let names: &[&str] = if table.name == "session_events" { &["session_id", "seq", "id"] } else { table.key };
    names.iter().filter_map(|n| show(n)).collect::<Vec<_>>().join(", ")
}

/// Every table's rows: each of the source's was copied or found there, and
/// the target holds at least as many (more when it was written since).
fn verify_counts(source: Db<'_>, into: Db<'_>, report: &CopyReport) -> Result<()> {
    for table in TABLES {
        let sql = format!("SELECT count(*) FROM {}", table.name);
        let count = |db| -> Result<u64> {
            Ok(sql::query_first(db, "counting a copy", &sql, params![], |r| r.get::<_, i64>(0))?.map_or(0, rows::uint))
        };
        let (theirs, ours) = (count(source)?, count(into)?);
        let rows = report.tables.get(table.name).copied().unwrap_or_default();
        if rows.copied + rows.already_there != theirs || ours < theirs {
            return Err(StoreError::CopyDiverged {
                table: table.name,
                row: format!("its count ({theirs} rows in the source, {ours} in the copy)"),
            });
        }
    }
    Ok(())
}

/// Folds every session of `source` in both stores; they must agree.
fn verify(source: Db<'_>, into: Db<'_>) -> Result<u64> {
    let sql = format!("SELECT {SESSION_COLUMNS} FROM session_heads ORDER BY id");
    let sessions = sql::query_all(source, "verifying a copy", &sql, params![], SessionRow::read)?;
    for row in &sessions {
        let seed = row.seed()?;
        let theirs = events(source, row, row.last_seq)?;
        let ours = events(into, row, row.last_seq)?;
        let (a, b) = (SessionInfo::fold(&seed, &theirs), SessionInfo::fold(&seed, &ours));
        if theirs.len() != ours.len() || a != b {
            return Err(StoreError::CopyDiverged {
                table: "session_events",
                row: format!("session_id {}: its events fold differently in the copy", row.id),
            });
        }
    }
    Ok(sessions.len() as u64)
}

fn events(db: Db<'_>, row: &SessionRow, upto: u64) -> Result<Vec<Event>> {
    let sql =
        format!("SELECT {} FROM session_events WHERE session_id = ?1 AND seq <= ?2 ORDER BY seq", rows::EVENT_COLUMNS);
    sql::query_all(db, "verifying a copy", &sql, params![row.id.to_string(), rows::int(upto)], rows::read_event)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables that are live coordination, not history, and the cache the
    /// target's trigger fills as the events arrive: never copied.
    const NOT_COPIED: [&str; 4] = ["run_jobs", "session_last_events", "session_leases", "session_waiters"];

    #[test]
    fn every_table_and_column_is_copied_but_the_coordination_ones() {
        // A column added by a later migration and forgotten here would be
        // dropped by every copy without a word.
        let store = Store::open_in_memory().unwrap();
        store
            .transaction(TxKind::Read, |db| {
                let names = "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name";
                let tables = sql::query_all(db, "listing tables", names, params![], |r| r.get::<_, String>(0))?;
                for table in tables.iter().filter(|t| !NOT_COPIED.contains(&t.as_str())) {
                    let spec =
                        TABLES.iter().find(|t| t.name == table).unwrap_or_else(|| panic!("{table} is not copied"));
                    let columns = "SELECT name FROM pragma_table_info(?1)";
                    let mut found =
                        sql::query_all(db, "listing columns", columns, params![table], |r| r.get::<_, String>(0))?;
                    let mut copied: Vec<String> = spec.columns.iter().map(|c| (*c).to_owned()).collect();
                    found.sort();
                    copied.sort();
                    assert_eq!(copied, found, "the columns of {table}");
                }
                assert_eq!(TABLES.len() + NOT_COPIED.len(), tables.len(), "{tables:?}");
                Ok::<_, StoreError>(())
            })
            .unwrap();
    }
}
