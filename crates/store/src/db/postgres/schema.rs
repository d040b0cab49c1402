//! Identifying and migrating a PostgreSQL schema: `postgres-schema.sql`,
//! applied in order on the version recorded in `seri_schema`.
//!
//! Before anything is written, the schema is identified, as an SQLite file
//! is: one holding tables but no `seri_schema` is another application's,
//! and one at a version newer than this build is refused untouched.

use crate::db::schema::{POSTGRES_SCHEMA_VERSION, POSTGRES_SEARCH_MIGRATION, postgres_migrations};
use crate::db::sql::{self, Conn, Db, params};
use crate::error::{OpenError, Result, StoreError};

/// Brings the connection's current schema to [`POSTGRES_SCHEMA_VERSION`].
/// The caller holds the write lock, so no other store migrates meanwhile.
pub(crate) fn migrate(db: Db<'_>, progress: Option<&crate::db::search::IndexProgress>) -> Result<()> {
    let context = "reading the schema version";
    let current: Option<String> =
        sql::query_first(db, context, "SELECT current_schema()", params![], |r| r.get(0))?.flatten();
    let schema = match current {
        Some(schema) => schema,
        None => create_first_schema(db)?,
    };
    let tables = "SELECT count(*), count(*) FILTER (WHERE table_name = 'seri_schema') \
                  FROM information_schema.tables WHERE table_schema = ?1";
    let (all, ours): (i64, i64) =
        sql::query_first(db, context, tables, params![schema.clone()], |r| Ok((r.get(0)?, r.get(1)?)))?
            .unwrap_or((0, 0));
    let from = match (all, ours) {
        (0, _) => 0,
        (_, 0) => return Err(StoreError::Open(OpenError::ForeignSchema { database: db.path.to_path_buf(), schema })),
        _ => sql::query_first(db, context, "SELECT version FROM seri_schema", params![], |r| r.get(0))?.unwrap_or(0),
    };
    if from > POSTGRES_SCHEMA_VERSION {
        return Err(StoreError::Open(OpenError::NewerSchema {
            path: db.path.to_path_buf(),
            found: from,
            supported: POSTGRES_SCHEMA_VERSION,
        }));
    }
    let Conn::Postgres(conn) = db.conn else { return Ok(()) };
    for m in postgres_migrations()?.into_iter().filter(|m| m.version > from) {
        tracing::info!(database = %db.path.display(), version = m.version, title = m.title, "applying migration");
        conn.batch(m.sql)
            .map_err(|e| crate::db::postgres::error::postgres(db.path, "applying a schema migration", e))?;
        sql::execute(db, "recording the schema version", "UPDATE seri_schema SET version = ?1", params![m.version])?;
        if m.version == POSTGRES_SEARCH_MIGRATION && from > 0 {
            crate::db::search::backfill(db, progress)?;
        }
    }
    Ok(())
}

/// Creates the first schema of the connection's `search_path` when none of
/// them exists yet (a URL with `options=-csearch_path%3Dteam_a` names a
/// schema of its own), and returns its name.
fn create_first_schema(db: Db<'_>) -> Result<String> {
    let context = "creating the store's schema";
    let path: String = sql::query_first(db, context, "SELECT current_setting('search_path')", params![], |r| r.get(0))?
        .unwrap_or_default();
    let first = path.split(',').next().unwrap_or("").trim().trim_matches('"').to_owned();
    if first.is_empty() || first == "$user" {
        return Err(StoreError::Open(OpenError::BadStoreUrl {
            url: db.path.display().to_string(),
            problem: format!("its search_path `{path}` names no schema to create the tables in"),
        }));
    }
    let quoted = format!("\"{}\"", first.replace('"', "\"\""));
    let Conn::Postgres(conn) = db.conn else { return Ok(first) };
    conn.batch(&format!("CREATE SCHEMA IF NOT EXISTS {quoted}"))
        .map_err(|e| crate::db::postgres::error::postgres(db.path, context, e))?;
    Ok(first)
}
