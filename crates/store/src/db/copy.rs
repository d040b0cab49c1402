//! [`Store::copy_into`]: every row of one store copied into another (a
//! profile's SQLite history into PostgreSQL, for `seri store migrate`), in
//! one transaction on each side, idempotently, and verified.
//!
//! Rows are copied table by table in the order their references need, each
//! row once (the copy is linear in the rows it copies), so that a second
//! copy finds everything already there and adds nothing. Into PostgreSQL a
//! table's rows go in bulk: streamed with one `COPY … FROM STDIN (FORMAT
//! binary)` into a temporary table of the same columns, then moved with one
//! `INSERT … SELECT … ON CONFLICT DO NOTHING`. Into SQLite, in the same
//! process, each row is its own `INSERT … ON CONFLICT DO NOTHING`. Events
//! and continuation edges never change, so one already in the target must
//! be the same row; an event whose seq the target holds with another id
//! means both stores were written since the last copy, and the copy stops
//! (rolled back) saying where. Other rows the target already has are kept
//! as they are there: a session's cached title or a run's status may have
//! moved on in it.
//!
//! Leases, their waiters and the shared queue's jobs are not copied: they
//! are the live coordination of processes on the source, whose holders
//! cannot hold a lease or claim a job on the target. Nor is
//! `session_last_events`, each session's newest event, which is derived
//! from the events: its trigger, which would rewrite a session's row once
//! per event inserted (on PostgreSQL each rewrite of a row leaves a version
//! the next one steps over, so a long session's copy grew with the square
//! of its events), is held aside for the copy's transaction (disabled on
//! PostgreSQL, dropped and created again as it was on SQLite), and the copy
//! writes each copied session's row once, after its events.
//!
//! A text value holding U+0000 goes into PostgreSQL with U+FFFD in its
//! place (its text cannot hold a NUL): only a cached title or description
//! an older build folded from a message holding one, which the fold now
//! shows the same way. JSON text (payloads) escapes NULs and is copied
//! exactly.
//!
//! Before the target commits, the counts must add up (each source row copied
//! or already there, and the target holding at least as many), every
//! session of the source is read back from the target and folded, and the
//! fold must equal the source's; and what the target derives from each of
//! those sessions' events (its newest event, its snapshot, its cached
//! title columns) must be what the fold of its events gives.

use std::collections::BTreeMap;

use seri_core::{Event, SessionInfo};

use crate::check::CheckMode;
use crate::db::connection::TxKind;
use crate::db::rows::{self, SESSION_COLUMNS, SessionRow};
use crate::db::sql::{self, Conn, Db, Param, Value, params};
use crate::error::{CopyError, Result, StoreError};
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
    Table {
        name: "session_pins",
        columns: &["session_id", "agent_id", "pinned_at"],
        key: &["session_id"],
        order: "session_id",
        immutable: false,
    },
    Table {
        name: "session_prunes",
        columns: &["session_id", "agent_id", "prune_id", "bytes", "reason", "pruned_at"],
        key: &["session_id"],
        order: "session_id",
        immutable: true,
    },
];

/// What [`Store::copy_into`] did, table by table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Per table: rows copied now, and rows the target already had.
    pub tables: BTreeMap<&'static str, CopiedRows>,
    /// Sessions whose newest event (`session_last_events`) the copy wrote,
    /// once each, after their events: the sessions of the source that
    /// have events.
    pub last_events_written: u64,
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
        writeln!(
            f,
            "  {:<26} {:>9} written once, after the events (each session's newest)",
            "session_last_events", self.last_events_written
        )?;
        let sessions = match self.sessions_verified {
            1 => "the 1 session folds".to_owned(),
            n => format!("all {n} sessions fold"),
        };
        write!(
            f,
            "verified: the counts add up, and {sessions} to the same view in both stores, \
             with the newest event, snapshot and title the target keeps for it"
        )
    }
}

impl Store {
    /// Copies every row of this store into `target` (see the module docs):
    /// one read snapshot here, one write transaction there, which commits
    /// only once every session of this store folds the same in `target`.
    /// Running it again copies nothing and reports everything already there.
    pub fn copy_into(&self, target: &Store) -> Result<CopyReport> {
        if self.path() == target.path() {
            return Err(StoreError::Copy(CopyError::OntoItself { path: self.path().to_path_buf() }));
        }
        self.read_transaction(|source| {
            target.transaction(TxKind::Exclusive, |into| {
                let mut report = CopyReport::default();
                let trigger = LastEventTrigger::set_aside(into)?;
                for table in TABLES {
                    let rows = match into.conn {
                        Conn::Postgres(conn) => copy_table_in_bulk(source, into, conn, table)?,
                        Conn::Sqlite(_) => copy_table(source, into, table)?,
                    };
                    report.tables.insert(table.name, rows);
                }
                report.last_events_written = write_last_events(source, into)?;
                // The search index is the target's own, made from the
                // events it now holds (the two backends' differ in form).
                crate::db::search::backfill(into, None)?;
                if let Conn::Postgres(_) = into.conn {
                    // The planner's statistics, which a bulk load leaves at
                    // nothing until autovacuum comes round: without them the
                    // first searches and lists join as if every table were
                    // empty.
                    let names: Vec<&str> = TABLES.iter().map(|t| t.name).chain(["event_search"]).collect();
                    sql::execute(
                        into,
                        "analyzing the copied tables",
                        &format!("ANALYZE {}", names.join(", ")),
                        params![],
                    )?;
                }
                trigger.restore(into)?;
                verify_counts(source, into, &report)?;
                report.sessions_verified = verify(source, into, target)?;
                Ok::<_, StoreError>(report)
            })
        })
    }
}

/// The trigger that keeps `session_last_events` as each event is inserted
/// (migration 13 of SQLite's schema, 4 of PostgreSQL's).
const LAST_EVENT_TRIGGER: &str = "session_events_move_the_last_event";

/// The trigger, held aside for a copy's transaction (see the module docs).
enum LastEventTrigger {
    /// Disabled, to be enabled again.
    Postgres,
    /// Dropped, to be created again from the SQL it was created with
    /// (`None`: there was none to drop).
    Sqlite(Option<String>),
}

impl LastEventTrigger {
    /// Holds the trigger aside until [`LastEventTrigger::restore`], in the
    /// copy's transaction: rolled back with it, and never seen by another
    /// writer (on PostgreSQL `ALTER TABLE … DISABLE TRIGGER` waits for and
    /// holds off writers of `session_events` but not its readers; on
    /// SQLite the copy holds the one write lock).
    fn set_aside(into: Db<'_>) -> Result<Self> {
        let context = "holding the newest-event trigger aside for the copy";
        match into.conn {
            Conn::Postgres(conn) => {
                conn.batch(&format!("ALTER TABLE session_events DISABLE TRIGGER {LAST_EVENT_TRIGGER}"))
                    .map_err(|e| into.fail(context)(e.into()))?;
                Ok(LastEventTrigger::Postgres)
            }
            Conn::Sqlite(conn) => {
                let find = "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = ?1";
                let created = sql::query_first(into, context, find, params![LAST_EVENT_TRIGGER], |r| r.get(0))?;
                if created.is_some() {
                    conn.execute_batch(&format!("DROP TRIGGER {LAST_EVENT_TRIGGER}"))
                        .map_err(|e| into.fail(context)(e.into()))?;
                }
                Ok(LastEventTrigger::Sqlite(created))
            }
        }
    }

    /// Puts the trigger back as it was.
    fn restore(self, into: Db<'_>) -> Result<()> {
        let context = "restoring the newest-event trigger after the copy";
        match (self, into.conn) {
            (LastEventTrigger::Postgres, Conn::Postgres(conn)) => conn
                .batch(&format!("ALTER TABLE session_events ENABLE TRIGGER {LAST_EVENT_TRIGGER}"))
                .map_err(|e| into.fail(context)(e.into())),
            (LastEventTrigger::Sqlite(Some(created)), Conn::Sqlite(conn)) => {
                conn.execute_batch(&created).map_err(|e| into.fail(context)(e.into()))
            }
            _ => Ok(()),
        }
    }
}

/// Writes `session_last_events` for every session of the source that has
/// events, from the target's events, once each: what the trigger would
/// have left after the last of them (a row only ever moves forward). The
/// statements are sent without waiting for each answer on PostgreSQL.
fn write_last_events(source: Db<'_>, into: Db<'_>) -> Result<u64> {
    let context = "writing each copied session's newest event";
    let ids = sql::query_all(
        source,
        context,
        "SELECT DISTINCT session_id FROM session_events ORDER BY session_id",
        params![],
        |r| r.get::<_, String>(0),
    )?;
    let write = "INSERT INTO session_last_events (session_id, agent_id, seq, created_at) \
                 SELECT e.session_id, s.agent_id, e.seq, e.created_at FROM session_events e \
                 JOIN sessions s ON s.id = e.session_id WHERE e.session_id = ?1 ORDER BY e.seq DESC LIMIT 1 \
                 ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, created_at = excluded.created_at \
                 WHERE excluded.seq > session_last_events.seq";
    let mut statement = into.conn.prepare_cached(write).map_err(into.fail(context))?;
    for id in &ids {
        statement.execute_pipelined(vec![Value::Text(id.clone())]).map_err(into.fail(context))?;
    }
    Ok(ids.len() as u64)
}

/// One table into SQLite: row by row, in this process.
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
                failure =
                    Some(StoreError::Copy(CopyError::Diverged { table: table.name, row: describe(table, &values) }));
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

/// One table into PostgreSQL, in bulk: the source's rows streamed with one
/// `COPY` into a temporary table of the same columns, then moved into the
/// table with one `INSERT … SELECT`, which leaves out every row the
/// table already holds. Of an immutable table, a row left out must be
/// there as it is in the source.
fn copy_table_in_bulk(
    source: Db<'_>,
    into: Db<'_>,
    conn: &crate::db::postgres::Connection,
    table: &Table,
) -> Result<CopiedRows> {
    let context = "copying a table";
    let fail = |e| into.fail(context)(crate::db::sql::SqlError::from(e));
    let columns = table.columns.join(", ");
    let staged = format!("seri_copy_{}", table.name);
    conn.batch(&format!("CREATE TEMPORARY TABLE {staged} (LIKE {})", table.name)).map_err(fail)?;
    let mut writer = conn.copy_in(&format!("pg_temp.{staged}"), table.columns).map_err(fail)?;
    let select = format!("SELECT {columns} FROM {} ORDER BY {}", table.name, table.order);
    let mut rows_staged = 0u64;
    sql::query_each(source, context, &select, params![], |row| {
        let values = (0..table.columns.len())
            .map(|i| row.value(i).map(|v| v.storable_in(into)))
            .collect::<Result<Vec<Value>, _>>()?;
        writer.write(&values).map_err(|e| crate::db::sql::RowError::Store(fail(e)))?;
        rows_staged += 1;
        Ok(true)
    })?;
    writer.finish().map_err(fail)?;
    let insert = format!(
        "INSERT INTO {name} ({columns}) SELECT {columns} FROM pg_temp.{staged} ON CONFLICT DO NOTHING",
        name = table.name
    );
    let copied = sql::execute(into, context, &insert, params![])?;
    if table.immutable && copied < rows_staged {
        // Every staged row that was not inserted must be in the table as it is.
        let on: Vec<String> = table.key.iter().map(|k| format!("t.{k} = s.{k}")).collect();
        let ours: Vec<String> = table.columns.iter().map(|c| format!("s.{c}")).collect();
        let theirs: Vec<String> = table.columns.iter().map(|c| format!("t.{c}")).collect();
        let differing = format!(
            "SELECT {ours} FROM pg_temp.{staged} AS s LEFT JOIN {name} AS t ON {on} \
             WHERE t.{key} IS NULL OR ({ours}) IS DISTINCT FROM ({theirs}) ORDER BY {order} LIMIT 1",
            ours = ours.join(", "),
            theirs = theirs.join(", "),
            name = table.name,
            on = on.join(" AND "),
            key = table.key[0],
            order = ours_order(table),
        );
        let found = sql::query_first(into, "comparing the copied rows", &differing, params![], |r| {
            (0..table.columns.len()).map(|i| r.value(i)).collect::<Result<Vec<Value>, _>>()
        })?;
        if let Some(values) = found {
            return Err(StoreError::Copy(CopyError::Diverged { table: table.name, row: describe(table, &values) }));
        }
    }
    conn.batch(&format!("DROP TABLE pg_temp.{staged}")).map_err(fail)?;
    Ok(CopiedRows { copied, already_there: rows_staged - copied })
}

/// A table's copy order, of its staged rows (`s.`).
fn ours_order(table: &Table) -> String {
    table.order.split(',').map(|c| format!("s.{}", c.trim())).collect::<Vec<_>>().join(", ")
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
            return Err(StoreError::Copy(CopyError::Diverged {
                table: table.name,
                row: format!("its count ({theirs} rows in the source, {ours} in the copy)"),
            }));
        }
    }
    Ok(())
}

/// Folds every session of `source` in both stores; they must agree. And
/// what the target derives from each of them (its newest event, snapshot
/// and cached title columns) must be what the fold of its events there
/// gives.
fn verify(source: Db<'_>, into: Db<'_>, target: &Store) -> Result<u64> {
    let sql = format!("SELECT {SESSION_COLUMNS} FROM session_heads ORDER BY id");
    let sessions = sql::query_all(source, "verifying a copy", &sql, params![], SessionRow::read)?;
    let theirs_sql = format!("SELECT {SESSION_COLUMNS} FROM session_heads WHERE id = ?1");
    for row in &sessions {
        let seed = row.seed()?;
        let theirs = events(source, row, row.last_seq)?;
        let ours = events(into, row, row.last_seq)?;
        let (a, b) = (SessionInfo::fold(&seed, &theirs), SessionInfo::fold(&seed, &ours));
        if theirs.len() != ours.len() || a != b {
            return Err(StoreError::Copy(CopyError::Diverged {
                table: "session_events",
                row: format!("session_id {}: its events fold differently in the copy", row.id),
            }));
        }
        let there =
            sql::query_first(into, "verifying a copy", &theirs_sql, params![row.id.to_string()], SessionRow::read)?;
        let Some(there) = there else {
            return Err(StoreError::Copy(CopyError::Diverged { table: "sessions", row: format!("id {}", row.id) }));
        };
        let checked = crate::db::check::check_session(into, target, &there, CheckMode::Report)?;
        // A NUL an older build cached is copied verbatim into SQLite (a
        // stale cache `store check --repair` mends); the fold spells it
        // U+FFFD. Only a real difference stops the copy.
        let stale_nul = |m: &crate::check::CacheMismatch| m.cached.replace('\0', "\u{fffd}") == m.folded;
        if let Some(found) = checked.mismatches.into_iter().find(|m| !stale_nul(m)) {
            return Err(StoreError::Copy(CopyError::CacheDiffers {
                session_id: found.session_id,
                column: found.column,
                cached: found.cached,
                folded: found.folded,
            }));
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
    /// copy writes from the target's events: never copied.
    const NOT_COPIED: [&str; 4] = ["run_jobs", "session_last_events", "session_leases", "session_waiters"];

    /// The search index, which a copy makes anew from the target's events
    /// (`search_docs`, and the FTS5 table with its shadow tables).
    fn is_search_index(table: &str) -> bool {
        table.starts_with("search_")
    }

    #[test]
    fn every_table_and_column_is_copied_but_the_coordination_ones() {
        // A column added by a later migration and forgotten here would be
        // dropped by every copy without a word.
        let store = Store::open_in_memory().unwrap();
        store
            .read_transaction(|db| {
                let names = "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name";
                let tables = sql::query_all(db, "listing tables", names, params![], |r| r.get::<_, String>(0))?;
                for table in tables.iter().filter(|t| !NOT_COPIED.contains(&t.as_str()) && !is_search_index(t)) {
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
                let index = tables.iter().filter(|t| is_search_index(t)).count();
                assert_eq!(TABLES.len() + NOT_COPIED.len() + index, tables.len(), "{tables:?}");
                Ok::<_, StoreError>(())
            })
            .unwrap();
    }
}
