//! How PostgreSQL's answers become [`StoreError`]s: the same few variants
//! SQLite's get (a full disk, a read-only database, a lock held too long),
//! by SQLSTATE; anything else is carried as a [`DatabaseError`].

use std::path::Path;
use std::time::Duration;

use tokio_postgres::error::SqlState;

use crate::error::{DatabaseError, EngineError, StoreError};

/// Turns a tokio-postgres error into a [`StoreError`] naming the database
/// and what was being done.
pub(crate) fn postgres(database: &Path, context: &'static str, source: tokio_postgres::Error) -> StoreError {
    let path = database.to_path_buf();
    match source.code() {
        Some(code) if *code == SqlState::DISK_FULL || *code == SqlState::PROGRAM_LIMIT_EXCEEDED => {
            StoreError::Engine(EngineError::DiskFull { path, context })
        }
        Some(code) if *code == SqlState::READ_ONLY_SQL_TRANSACTION => {
            StoreError::Engine(EngineError::ReadOnly { path, context })
        }
        // Two writers each waiting for a lock the other holds: the server
        // ends one of them, which is told the store was busy.
        Some(code)
            if *code == SqlState::LOCK_NOT_AVAILABLE
                || *code == SqlState::QUERY_CANCELED
                || *code == SqlState::T_R_DEADLOCK_DETECTED =>
        {
            StoreError::Engine(EngineError::Locked { path, context, waited: Duration::ZERO })
        }
        _ if unreachable(&source) => StoreError::Engine(EngineError::Unreachable {
            database: path,
            context,
            source: DatabaseError::new(Said(source)),
        }),
        _ => StoreError::Engine(EngineError::Postgres {
            database: path,
            context,
            source: DatabaseError::new(Said(source)),
        }),
    }
}

/// Whether `error` says the server is out of reach rather than that it
/// refused what was asked: the connection is closed, the socket failed, or
/// the server is shutting down or starting up (SQLSTATE class 08, 57P01–03).
fn unreachable(error: &tokio_postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    if let Some(code) = error.code() {
        let code = code.code();
        return code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03");
    }
    let mut cause = std::error::Error::source(error);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            // A certificate TLS refuses is no outage: waiting will not change it.
            return !io.get_ref().is_some_and(|inner| inner.is::<rustls::Error>());
        }
        cause = e.source();
    }
    false
}

/// What the server said, in its words: tokio-postgres's own `Display` is
/// only "db error", with the message in its source.
#[derive(Debug)]
struct Said(tokio_postgres::Error);

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_db_error() {
            Some(db) => {
                write!(f, "{}: {} (SQLSTATE {})", db.severity(), db.message(), db.code().code())?;
                if let Some(detail) = db.detail() {
                    write!(f, "; {detail}")?;
                }
                Ok(())
            }
            None => {
                write!(f, "{}", self.0)?;
                let mut cause = std::error::Error::source(&self.0);
                while let Some(e) = cause {
                    write!(f, ": {e}")?;
                    cause = e.source();
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Said {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Whether `error` is the server refusing an event's seq as taken (the
/// `UNIQUE (session_id, seq)` of `session_events`, or the same key of its
/// search index row, which the same statement inserts and the server may
/// check first): an append that guessed
/// its session's head wrongly (see `WriteTx::guess_head`), whose
/// transaction the server rolled back whole.
pub(crate) fn seq_taken(error: &StoreError) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if let Some(db) = e.downcast_ref::<tokio_postgres::error::DbError>() {
            return *db.code() == SqlState::UNIQUE_VIOLATION
                && matches!(
                    (db.table(), db.constraint()),
                    (Some("session_events"), Some("session_events_session_id_seq_key"))
                        | (Some("event_search"), Some("event_search_pkey"))
                );
        }
        cause = e.source();
    }
    false
}
