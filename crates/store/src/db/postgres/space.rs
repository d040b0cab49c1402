//! The PostgreSQL store's space: every table of the store's schema with
//! its indexes and TOAST (`pg_total_relation_size`), and the indexes
//! alone (`pg_indexes_size`). Space freed by a prune is reused by the
//! server for new rows once its autovacuum has passed; giving it back to
//! the file system takes a `VACUUM FULL`, which locks each table while it
//! runs, so seri leaves that to the database's operator.

use crate::db::rows::{self, Db, query_first};
use crate::db::sql::params;
use crate::error::Result;
use crate::usage::DatabaseSpace;

/// The schema's tables and indexes, in bytes.
pub(crate) fn measure(db: Db<'_>) -> Result<DatabaseSpace> {
    let sql = "SELECT CAST(coalesce(sum(pg_total_relation_size(c.oid)), 0) AS BIGINT), \
                      CAST(coalesce(sum(pg_indexes_size(c.oid)), 0) AS BIGINT) \
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
               WHERE n.nspname = current_schema() AND c.relkind = 'r'";
    let (bytes, indexes) = query_first(db, "measuring the database", sql, params![], |r| {
        Ok((rows::uint(r.get(0)?), rows::uint(r.get(1)?)))
    })?
    .unwrap_or((0, 0));
    Ok(DatabaseSpace {
        backend: "postgres",
        bytes,
        wal_bytes: None,
        index_bytes: Some(indexes),
        reclaimable_bytes: None,
        auto_vacuum: None,
    })
}
