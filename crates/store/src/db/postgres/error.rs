//! How PostgreSQL's answers become [`StoreError`]s: the same few variants
//! SQLite's get (a full disk, a read-only database, a lock held too long),
//! by SQLSTATE; anything else is carried as a [`DatabaseError`].

use std::path::Path;
use std::time::Duration;

use tokio_postgres::error::SqlState;

use crate::error::{DatabaseError, StoreError};

/// Turns a tokio-postgres error into a [`StoreError`] naming the database
/// and what was being done.
pub(crate) fn postgres(database: &Path, context: &'static str, source: tokio_postgres::Error) -> StoreError {
    let path = database.to_path_buf();
    match source.code() {
        Some(code) if *code == SqlState::DISK_FULL || *code == SqlState::PROGRAM_LIMIT_EXCEEDED => {
            StoreError::DiskFull { path, context }
        }
        Some(code) if *code == SqlState::READ_ONLY_SQL_TRANSACTION => StoreError::ReadOnlyDatabase { path, context },
        Some(code) if *code == SqlState::LOCK_NOT_AVAILABLE || *code == SqlState::QUERY_CANCELED => {
            StoreError::Locked { path, context, waited: Duration::ZERO }
        }
        _ => StoreError::Postgres { database: path, context, source: DatabaseError::new(source) },
    }
}
