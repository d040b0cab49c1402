//! Identifying and migrating an SQLite file: `sqlite-schema.sql`, applied
//! in order on `PRAGMA user_version`.
//!
//! Before anything is written, the file is identified: an SQLite file of
//! another application, or a seri database newer than this build, is
//! refused untouched.

use std::path::Path;

use rusqlite::Connection;

use crate::db::schema::{APPLICATION_ID, SCHEMA_VERSION, SQLITE_SEARCH_MIGRATION, migrations};
use crate::db::sqlite::error;
use crate::error::{OpenError, Result, StoreError};

/// What an opened file turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identity {
    /// An empty database: a new file, or one with nothing in it yet.
    Empty,
    /// A seri database at this schema version (or an older one, to migrate).
    Seri {
        /// Its `user_version`.
        version: i64,
    },
}

/// Reads the header facts of an open database and decides what it is.
/// Reads only: nothing is written to a file that might not be ours.
pub(crate) fn identify(conn: &Connection, path: &Path) -> Result<Identity> {
    let err = |e| error::sqlite(path, "reading the database header", e);
    let application_id: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0)).map_err(err)?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(err)?;
    let objects: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0)).map_err(err)?;
    classify(application_id, version, objects > 0).map_err(|refusal| match refusal {
        Refusal::Foreign => StoreError::Open(OpenError::ForeignDatabase { path: path.to_path_buf(), application_id }),
        Refusal::Newer => StoreError::Open(OpenError::NewerSchema {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        }),
    })
}

#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    Foreign,
    Newer,
}

fn classify(application_id: i32, version: i64, has_objects: bool) -> Result<Identity, Refusal> {
    match application_id {
        APPLICATION_ID if version > SCHEMA_VERSION => Err(Refusal::Newer),
        APPLICATION_ID => Ok(Identity::Seri { version }),
        0 if !has_objects && version == 0 => Ok(Identity::Empty),
        _ => Err(Refusal::Foreign),
    }
}

/// Brings the database to [`SCHEMA_VERSION`]. The caller holds a write
/// transaction, so the file is identified again here: another process may
/// have migrated it since the first look.
pub(crate) fn migrate(
    conn: &Connection,
    path: &Path,
    progress: Option<&crate::db::search::IndexProgress>,
) -> Result<()> {
    let from = match identify(conn, path)? {
        Identity::Empty => 0,
        Identity::Seri { version } => version,
    };
    for m in migrations()?.into_iter().filter(|m| m.version > from) {
        tracing::info!(path = %path.display(), version = m.version, title = m.title, "applying migration");
        conn.execute_batch(m.sql).map_err(|e| error::sqlite(path, "applying a schema migration", e))?;
        conn.pragma_update(None, "user_version", m.version)
            .map_err(|e| error::sqlite(path, "recording the schema version", e))?;
    }
    // The events written before the search index are indexed once every
    // migration has run (the index's later tables included), in the same
    // transaction.
    if from > 0 && from < SQLITE_SEARCH_MIGRATION {
        let db = crate::db::sql::Db { conn: crate::db::sql::Conn::Sqlite(conn), path };
        crate::db::search::backfill(db, progress)?;
    }
    if from == 0 {
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(|e| error::sqlite(path, "marking the file as a seri database", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_files_by_application_id_version_and_contents() {
        assert_eq!(classify(0, 0, false), Ok(Identity::Empty));
        assert_eq!(classify(APPLICATION_ID, 1, true), Ok(Identity::Seri { version: 1 }));
        assert_eq!(classify(APPLICATION_ID, SCHEMA_VERSION + 1, true), Err(Refusal::Newer));
        assert_eq!(classify(0, 0, true), Err(Refusal::Foreign));
        assert_eq!(classify(0, 3, false), Err(Refusal::Foreign));
        assert_eq!(classify(0x0f05_5112, 0, false), Err(Refusal::Foreign));
    }
}
