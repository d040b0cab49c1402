//! Opening a database file and running transactions on it.
//!
//! Every write runs in `BEGIN IMMEDIATE`: the write lock is taken before the
//! first read, so two writers never both read and then race to upgrade (the
//! deadlock SQLite answers with SQLITE_BUSY at once, busy timeout or not).
//! Waiting for the lock is SQLite's busy timeout; on top of it, the few
//! SQLITE_BUSY answers that bypass the busy handler are retried here until
//! the same timeout, so no caller ever sees BUSY unless a writer really held
//! the database that long.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use rusqlite::config::DbConfig;

use crate::db::connection::{OpenSettings, TxKind};
use crate::db::sql::{Conn, Db};
use crate::db::sqlite::error::{self, is_busy};
use crate::db::sqlite::schema;
use crate::error::{EngineError, OpenError, Result, StoreError};

/// SQLite's default page size, used to turn a byte limit into pages.
const PAGE_SIZE: u64 = 4096;

/// Prepared statements kept per connection: every statement the store runs fits.
const STATEMENT_CACHE: usize = 64;

/// One open SQLite database: its one connection (used by one thread at a
/// time), the file it is on, and how long a transaction waits for the lock.
#[derive(Debug)]
pub(crate) struct Database {
    conn: Mutex<Connection>,
    path: PathBuf,
    busy_timeout: Duration,
}

impl Database {
    /// Opens (creating if needed), identifies, configures and migrates the file at `path`.
    pub(crate) fn open_file(path: &Path, settings: OpenSettings) -> Result<Self> {
        let busy_timeout = settings.busy_timeout;
        let conn = open_file(path, settings)?;
        Ok(Self { conn: Mutex::new(conn), path: path.to_path_buf(), busy_timeout })
    }

    /// A private database in memory with the full schema; `path` names it in errors.
    pub(crate) fn open_memory(path: &Path, settings: OpenSettings) -> Result<Self> {
        let busy_timeout = settings.busy_timeout;
        let conn = open_memory(path, settings)?;
        Ok(Self { conn: Mutex::new(conn), path: path.to_path_buf(), busy_timeout })
    }

    /// Runs `f` in a transaction of the given kind. The transaction commits
    /// when `f` returns `Ok` and rolls back otherwise (and when `f` panics).
    pub(crate) fn transaction<T, E>(
        &self,
        kind: TxKind,
        f: impl FnOnce(Db<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E>
    where
        E: From<StoreError>,
    {
        let conn = self.lock();
        let tx = Tx::begin(&conn, &self.path, kind, self.busy_timeout)?;
        let value = f(Db { conn: Conn::Sqlite(&conn), path: &self.path })?;
        tx.commit()?;
        Ok(value)
    }

    /// Runs `f` on the connection outside any transaction: for what SQLite
    /// refuses inside one (`VACUUM`).
    pub(crate) fn without_transaction<T>(&self, f: impl FnOnce(&Connection, &Path) -> Result<T>) -> Result<T> {
        let conn = self.lock();
        f(&conn, &self.path)
    }

    /// Up to `bytes` of the file's pages kept in this connection's cache
    /// (SQLite's default is 2 MiB).
    pub(crate) fn keep_pages_cached(&self, bytes: u64) -> Result<()> {
        let kib = i64::try_from(bytes / 1024).unwrap_or(i64::MAX).max(1);
        // A negative size is in KiB, whatever the page size.
        self.lock()
            .pragma_update(None, "cache_size", -kib)
            .map_err(|e| error::sqlite(&self.path, "sizing the page cache", e))
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic inside a transaction rolled it back as the guard unwound,
        // so the connection behind a poisoned lock is still sound.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Opens (creating if needed), identifies, configures and migrates a database file.
fn open_file(path: &Path, settings: OpenSettings) -> Result<Connection> {
    let conn = Connection::open(path).map_err(|source| match source.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => {
            StoreError::Open(OpenError::NotADatabase { path: path.to_path_buf() })
        }
        _ => StoreError::Open(OpenError::Open { path: path.to_path_buf(), source: source.into() }),
    })?;
    conn.busy_timeout(settings.busy_timeout).map_err(|e| error::sqlite(path, "setting the busy timeout", e))?;
    // Identify before changing anything: WAL mode would rewrite a foreign file's header.
    // The header facts are read in one transaction: read one by one, a
    // process creating the same new profile could commit its first
    // migration between two of them (no application id yet, but tables
    // already), and a seri file would look like another application's.
    let header = Tx::begin(&conn, path, TxKind::Read, settings.busy_timeout)?;
    let identity = schema::identify(&conn, path)?;
    header.commit()?;
    // A new file gives pruned pages back by incremental vacuum (see
    // `space.rs`); the mode can only be chosen before the first table.
    if identity == schema::Identity::Empty {
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
            .map_err(|e| error::sqlite(path, "choosing incremental vacuum", e))?;
    }
    retry_busy(path, "switching to WAL mode", settings.busy_timeout, || {
        conn.pragma_update_and_check(None, "journal_mode", "wal", |r| r.get::<_, String>(0))
    })?;
    configure(&conn, path, &settings)?;
    // Closing does not checkpoint: a checkpoint on close syncs the
    // write-ahead log and the database and deletes the log, and the next
    // process to write creates it again and syncs its new header and the
    // folder: four syncs per `seri` command, most of a short command's
    // time where a sync is slow. The log is checkpointed as it grows
    // instead (SQLite's automatic checkpoint, every 1000 pages). As with
    // NORMAL for a process that runs on, a power cut may lose the last
    // transactions, never corrupt them (the kernel writes the log back
    // within seconds); a crash of the process loses nothing.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
        .map_err(|e| error::sqlite(path, "configuring the connection", e))?;
    migrate(&conn, path, &settings)?;
    Ok(conn)
}

/// Opens a private in-memory database with the full schema.
fn open_memory(path: &Path, settings: OpenSettings) -> Result<Connection> {
    let conn = Connection::open_in_memory()
        .map_err(|source| StoreError::Open(OpenError::Open { path: path.to_path_buf(), source: source.into() }))?;
    configure(&conn, path, &settings)?;
    migrate(&conn, path, &settings)?;
    Ok(conn)
}

fn configure(conn: &Connection, path: &Path, settings: &OpenSettings) -> Result<()> {
    let err = |e| error::sqlite(path, "configuring the connection", e);
    conn.pragma_update(None, "foreign_keys", true).map_err(err)?;
    // In WAL mode NORMAL keeps the database consistent through any crash; a
    // power cut may lose the last transactions, never corrupt them.
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(err)?;
    // Reads copy pages into SQLite's bounded page cache rather than map the
    // file: a map puts every page a read touches (and the kernel's
    // read-around of it) into the process's memory for as long as it
    // runs. Measured on a 100k-event resume and a 10k-session list, the
    // map was no faster, and the resume's peak memory halved without it.
    conn.pragma_update(None, "mmap_size", 0).map_err(err)?;
    if let Some(bytes) = settings.size_limit_bytes {
        let pages = i64::try_from(bytes / PAGE_SIZE).unwrap_or(i64::MAX).max(1);
        conn.pragma_update(None, "max_page_count", pages).map_err(err)?;
    }
    // The query planner stability guarantee: a plan never depends on the
    // values bound to it. Without it, SQLite (built with STAT4) marks
    // statements that filter on `session_events.session_id = ?` to be
    // re-prepared whenever the bound session changes, which made every
    // cached statement parse its SQL again and halved append throughput.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).map_err(err)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(())
}

fn migrate(conn: &Connection, path: &Path, settings: &OpenSettings) -> Result<()> {
    let tx = Tx::begin(conn, path, TxKind::Write, settings.busy_timeout)?;
    schema::migrate(conn, path, settings.index_progress.as_ref())?;
    tx.commit()
}

/// An open transaction. Dropping it without [`Tx::commit`] rolls it back.
#[derive(Debug)]
pub(crate) struct Tx<'c> {
    conn: &'c Connection,
    path: &'c Path,
    open: bool,
}

impl<'c> Tx<'c> {
    pub(crate) fn begin(conn: &'c Connection, path: &'c Path, kind: TxKind, busy_timeout: Duration) -> Result<Self> {
        let sql = match kind {
            TxKind::Read | TxKind::ReadOne => "BEGIN",
            TxKind::Write | TxKind::Exclusive | TxKind::Queue | TxKind::Single => "BEGIN IMMEDIATE",
        };
        retry_busy(path, "starting a transaction", busy_timeout, || conn.execute_batch(sql))?;
        Ok(Self { conn, path, open: true })
    }

    pub(crate) fn commit(mut self) -> Result<()> {
        self.open = false;
        match self.conn.execute_batch("COMMIT") {
            Ok(()) => Ok(()),
            Err(e) => {
                // A failed COMMIT (a full disk) may leave the transaction open; end it.
                if !self.conn.is_autocommit() {
                    let _ = self.conn.execute_batch("ROLLBACK");
                }
                Err(error::sqlite(self.path, "committing a transaction", e))
            }
        }
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open && !self.conn.is_autocommit() {
            // Nothing more can be done about a failed rollback here; SQLite
            // rolls back by itself when the connection closes.
            if let Err(e) = self.conn.execute_batch("ROLLBACK") {
                tracing::warn!(path = %self.path.display(), error = %e, "rollback failed");
            }
        }
    }
}

/// Runs `op` until it stops answering BUSY or `timeout` has passed.
fn retry_busy<T>(
    path: &Path,
    context: &'static str,
    timeout: Duration,
    mut op: impl FnMut() -> rusqlite::Result<T>,
) -> Result<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match op() {
            Ok(value) => return Ok(value),
            Err(e) if is_busy(&e) => {
                let waited = start.elapsed();
                if waited >= timeout {
                    return Err(StoreError::Engine(EngineError::Locked { path: path.to_path_buf(), context, waited }));
                }
                tracing::debug!(path = %path.display(), context, "database busy, retrying");
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(error::sqlite(path, context, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_cache_takes_the_size_asked_for() {
        let settings =
            OpenSettings { busy_timeout: Duration::from_secs(1), size_limit_bytes: None, index_progress: None };
        let db = Database::open_memory(Path::new(":memory:"), settings).unwrap();
        let size = |db: &Database| db.lock().pragma_query_value(None, "cache_size", |r| r.get::<_, i64>(0)).unwrap();
        assert_eq!(size(&db), -2000, "SQLite's default, 2 MiB");
        db.keep_pages_cached(32 * 1024 * 1024).unwrap();
        assert_eq!(size(&db), -32 * 1024, "in KiB");
    }
}
