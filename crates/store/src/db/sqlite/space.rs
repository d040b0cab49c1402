//! The SQLite file's space: its size, its indexes (`dbstat`), its free
//! pages, and giving free pages back to the file system after a prune.
//!
//! A new file is made with `auto_vacuum = INCREMENTAL` (see
//! `connection.rs`), so a prune's free pages are returned by
//! `PRAGMA incremental_vacuum` in moments. A file made before that has
//! `auto_vacuum = NONE`, which only a `VACUUM` can change: the first prune
//! that frees anything in such a file turns incremental vacuum on and
//! rewrites the file once ([`return_space`]).

use std::path::Path;

use rusqlite::Connection;

use crate::db::sqlite::error;
use crate::error::Result;
use crate::usage::DatabaseSpace;

fn pragma(conn: &Connection, path: &Path, name: &str) -> Result<i64> {
    conn.pragma_query_value(None, name, |r| r.get(0)).map_err(|e| error::sqlite(path, "measuring the database", e))
}

/// The file's size, free pages, index pages and vacuum mode.
pub(crate) fn measure(conn: &Connection, path: &Path) -> Result<DatabaseSpace> {
    let page = u64::try_from(pragma(conn, path, "page_size")?).unwrap_or(0);
    let pages = u64::try_from(pragma(conn, path, "page_count")?).unwrap_or(0);
    let free = u64::try_from(pragma(conn, path, "freelist_count")?).unwrap_or(0);
    let mode = auto_vacuum(conn, path)?;
    // `dbstat` is compiled into the bundled SQLite; a build without it
    // reports the index figure as unknown rather than zero.
    let index_bytes = conn
        .query_row(
            "SELECT sum(pgsize) FROM dbstat WHERE name IN \
             (SELECT name FROM sqlite_schema WHERE type = 'index')",
            [],
            |r| r.get::<_, Option<i64>>(0),
        )
        .ok()
        .map(|n| n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0));
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal_bytes = std::fs::metadata(&wal).ok().map(|m| m.len());
    Ok(DatabaseSpace {
        backend: "sqlite",
        bytes: pages.saturating_mul(page),
        wal_bytes,
        index_bytes,
        reclaimable_bytes: Some(free.saturating_mul(page)),
        auto_vacuum: Some(mode),
    })
}

fn auto_vacuum(conn: &Connection, path: &Path) -> Result<&'static str> {
    Ok(match pragma(conn, path, "auto_vacuum")? {
        1 => "full",
        2 => "incremental",
        _ => "none",
    })
}

/// How a prune gave space back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Returned {
    /// `PRAGMA incremental_vacuum`: the free pages were cut off the file.
    Incremental,
    /// The file had no incremental vacuum: it was turned on and the file rewritten once.
    Rewritten,
}

/// Gives the file's free pages back. Runs outside any transaction (a
/// `VACUUM` cannot run inside one).
pub(crate) fn return_space(conn: &Connection, path: &Path) -> Result<Returned> {
    let err = |e| error::sqlite(path, "giving freed space back", e);
    if auto_vacuum(conn, path)? == "incremental" {
        // Each step of the pragma frees one page: stepped to the end.
        let mut statement = conn.prepare("PRAGMA incremental_vacuum").map_err(err)?;
        let mut pages = statement.query([]).map_err(err)?;
        while pages.next().map_err(err)?.is_some() {}
        return Ok(Returned::Incremental);
    }
    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM").map_err(err)?;
    Ok(Returned::Rewritten)
}
