//! The database a store stands on, whichever backend it is, and the two
//! kinds of transaction every backend runs.

use std::time::Duration;

use crate::db::sql::Db;
use crate::db::{postgres, sqlite};
use crate::error::StoreError;

/// How a database is opened.
#[derive(Debug, Clone)]
pub(crate) struct OpenSettings {
    /// How long a write waits for another writer.
    pub(crate) busy_timeout: Duration,
    /// SQLite only: refuse to grow the file past this many bytes.
    pub(crate) size_limit_bytes: Option<u64>,
    /// Told how far the migration that makes the search index got.
    pub(crate) index_progress: Option<crate::db::search::IndexProgress>,
}

/// Whether a transaction reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TxKind {
    /// A consistent snapshot for several reads.
    Read,
    /// One read statement, which is a snapshot by itself: on PostgreSQL
    /// sent without `BEGIN` and `COMMIT` (two statements fewer for the
    /// server to run); on SQLite like [`TxKind::Read`]. For a closure that
    /// runs exactly one statement.
    ReadOne,
    /// Writes: on SQLite it holds the database's one write lock from the
    /// start (writers run one at a time, as SQLite always runs them); on
    /// PostgreSQL it shares the store's lock with every other writer and
    /// takes a lock per session (and per other thing it reads and then
    /// writes) as it first touches it, so writers of different sessions
    /// never wait for each other.
    Write,
    /// Writes that must see the whole store hold still (migrations, the
    /// cached-column check, a copy into the store): on PostgreSQL the
    /// store's lock held alone, so no other writer runs meanwhile; on
    /// SQLite like [`TxKind::Write`].
    Exclusive,
    /// Writes only the shared queue of runs (`run_jobs`): on PostgreSQL
    /// without the write lock (rows are claimed with `FOR UPDATE SKIP
    /// LOCKED`), on SQLite like [`TxKind::Write`].
    Queue,
    /// One statement of the shared queue of runs, which is a transaction
    /// by itself: on PostgreSQL sent without `BEGIN` and `COMMIT` (it
    /// commits as it runs, one round trip); on SQLite like
    /// [`TxKind::Write`]. For a closure that runs exactly one statement and
    /// fails only when that statement does: what ran is not rolled back.
    Single,
}

/// One open database of either backend.
#[derive(Debug)]
pub(crate) enum Database {
    Sqlite(sqlite::Database),
    Postgres(Box<postgres::Database>),
}

impl Database {
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
        // Each kind a span of its own: where a request's wall time goes, by kind.
        let _span = match kind {
            TxKind::Read | TxKind::ReadOne => tracing::debug_span!("store.tx.read"),
            TxKind::Write => tracing::debug_span!("store.tx.write"),
            TxKind::Exclusive => tracing::debug_span!("store.tx.exclusive"),
            TxKind::Queue | TxKind::Single => tracing::debug_span!("store.tx.queue"),
        }
        .entered();
        match self {
            Database::Sqlite(db) => db.transaction(kind, f),
            Database::Postgres(db) => db.transaction(kind, f),
        }
    }

    /// How long a read waits for a database server out of reach (a
    /// PostgreSQL restart); `None` for SQLite, which is never out of reach.
    pub(crate) fn outage_patience(&self) -> Option<std::time::Duration> {
        match self {
            Database::Sqlite(_) => None,
            Database::Postgres(db) => Some(db.outage_patience()),
        }
    }

    /// Whether this is a PostgreSQL database.
    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self, Database::Postgres(_))
    }

    /// On SQLite, up to `bytes` of the file's pages kept in memory; nothing
    /// on PostgreSQL, whose server keeps its own.
    pub(crate) fn keep_pages_cached(&self, bytes: u64) -> crate::Result<()> {
        match self {
            Database::Sqlite(db) => db.keep_pages_cached(bytes),
            Database::Postgres(_) => Ok(()),
        }
    }
}

impl crate::store::Store {
    /// Runs `f` in a transaction of the given kind on the store's database;
    /// see [`Database::transaction`].
    pub(crate) fn transaction<T, E>(
        &self,
        kind: TxKind,
        f: impl FnOnce(Db<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E>
    where
        E: From<StoreError>,
    {
        self.database().transaction(kind, f)
    }

    /// Runs `f` in a read transaction. A read whose connection was lost
    /// (the database restarted, its backend was terminated) changed
    /// nothing, so it runs again on a new connection, for the busy timeout
    /// at most: a brief outage delays a read instead of failing the run or
    /// the request that asked.
    pub(crate) fn read_transaction<T>(&self, f: impl FnMut(Db<'_>) -> crate::Result<T>) -> crate::Result<T> {
        self.read_patiently(TxKind::Read, f)
    }

    /// [`Store::read_transaction`] for a closure that runs exactly one
    /// statement ([`TxKind::ReadOne`]).
    pub(crate) fn read_one<T>(&self, f: impl FnMut(Db<'_>) -> crate::Result<T>) -> crate::Result<T> {
        self.read_patiently(TxKind::ReadOne, f)
    }

    fn read_patiently<T>(&self, kind: TxKind, mut f: impl FnMut(Db<'_>) -> crate::Result<T>) -> crate::Result<T> {
        let deadline = self.database().outage_patience().map(|p| std::time::Instant::now() + p);
        loop {
            match self.transaction(kind, &mut f) {
                Err(e)
                    if e.kind() == crate::StoreErrorKind::Unavailable
                        && deadline.is_some_and(|d| std::time::Instant::now() < d) =>
                {
                    tracing::info!(error = %e, "a read lost the database; reading again");
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                other => return other,
            }
        }
    }
}
