//! How SQLite's answers become [`StoreError`]s: a full disk, a read-only
//! file and a lock held too long get their own variants, whatever else
//! SQLite says is carried as a [`DatabaseError`].

use std::path::Path;
use std::time::Duration;

use rusqlite::ErrorCode;

use crate::error::{DatabaseError, EngineError, OpenError, StoreError};

impl From<rusqlite::Error> for DatabaseError {
    fn from(e: rusqlite::Error) -> Self {
        DatabaseError::new(e)
    }
}

/// Turns a rusqlite error into a [`StoreError`] naming the file and what was being done.
///
/// A full disk, a read-only file and a lock held too long get their own
/// variants because a caller (and a user) acts differently on each.
pub(crate) fn sqlite(path: &Path, context: &'static str, source: rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    match source.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => StoreError::Engine(EngineError::DiskFull { path, context }),
        Some(ErrorCode::ReadOnly) => StoreError::Engine(EngineError::ReadOnly { path, context }),
        Some(ErrorCode::NotADatabase) => StoreError::Open(OpenError::NotADatabase { path }),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            StoreError::Engine(EngineError::Locked { path, context, waited: Duration::ZERO })
        }
        _ => StoreError::Engine(EngineError::Sqlite { path, context, source: DatabaseError::from(source) }),
    }
}

/// Whether SQLite said the database is busy or locked (worth waiting for).
pub(crate) fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(error.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}
