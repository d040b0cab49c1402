//! The `legacy_imports` table: which legacy files, by path and content
//! hash, an agent has imported, and into which session.

use rusqlite::params;
use seri_core::{AgentId, SessionId, Timestamp};

use crate::error::Result;
use crate::rows::{self, Db, RowError, corrupt, query_all, query_first};

/// One file's import, as recorded.
pub(crate) struct ImportRecord<'a> {
    pub(crate) id: String,
    pub(crate) agent: &'a AgentId,
    /// The canonical absolute path.
    pub(crate) path: &'a str,
    pub(crate) sha256: &'a str,
    pub(crate) bytes: u64,
    pub(crate) modified_at: Option<Timestamp>,
    pub(crate) legacy_id: Option<&'a str>,
    pub(crate) session_id: Option<SessionId>,
    pub(crate) events: u64,
    pub(crate) imported_at: Timestamp,
}

pub(crate) fn insert(db: Db<'_>, record: &ImportRecord<'_>) -> Result<()> {
    let fail = db.fail("recording a legacy import");
    let mut stmt = db
        .conn
        .prepare_cached(
            "INSERT INTO legacy_imports (id, agent_id, path, sha256, bytes, modified_at, legacy_id, session_id, \
             events, imported_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .map_err(&fail)?;
    stmt.execute(params![
        record.id,
        record.agent.as_str(),
        record.path,
        record.sha256,
        rows::int(record.bytes),
        record.modified_at.map(Timestamp::millis),
        record.legacy_id,
        record.session_id.map(|id| id.to_string()),
        rows::int(record.events),
        record.imported_at.millis(),
    ])
    .map_err(&fail)?;
    Ok(())
}

/// Whether the agent imported these bytes at this path before: `Some` with
/// the session they became (`None` inside when they held nothing importable).
pub(crate) fn find(db: Db<'_>, agent: &AgentId, path: &str, sha256: &str) -> Result<Option<Option<SessionId>>> {
    let sql = "SELECT id, session_id FROM legacy_imports WHERE agent_id = ?1 AND path = ?2 AND sha256 = ?3";
    query_first(db, "looking up a legacy import", sql, params![agent.as_str(), path, sha256], read_session)
}

/// Every earlier import of the path by the agent, oldest first, with the
/// session each became.
pub(crate) fn earlier(db: Db<'_>, agent: &AgentId, path: &str) -> Result<Vec<Option<SessionId>>> {
    let sql = "SELECT id, session_id FROM legacy_imports WHERE agent_id = ?1 AND path = ?2 ORDER BY imported_at, id";
    query_all(db, "looking up earlier legacy imports", sql, params![agent.as_str(), path], read_session)
}

fn read_session(row: &rusqlite::Row<'_>) -> std::result::Result<Option<SessionId>, RowError> {
    let id: String = row.get(0)?;
    let session: Option<String> = row.get(1)?;
    session
        .map(|text| text.parse().map_err(|_| corrupt("legacy_imports", &id, format!("`{text}` is not a session id"))))
        .transpose()
}
