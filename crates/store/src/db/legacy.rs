//! The `legacy_imports` table: which legacy files, by path and content
//! hash, an agent has imported, and into which session; and
//! `legacy_unreadable`: which versions of files it could not read.
//!
//! These records are the store's part of an import, and all an importer
//! (`seri-import`) needs besides [`WriteTx::append_dated`] and
//! [`WriteTx::fork_session_from`]: the store knows no file format.

use crate::db::sql::params;
use seri_core::{SessionId, Timestamp};

use crate::db::read::Reader;
use crate::db::rows::{self, RowError, corrupt, query_all, query_each, query_first};
use crate::db::write::WriteTx;
use crate::error::Result;

/// One file's import, as recorded ([`WriteTx::record_legacy_import`]).
#[derive(Debug, Clone)]
pub struct ImportRecord<'a> {
    /// The agent that imported it.
    pub agent: &'a seri_core::AgentId,
    /// The file's canonical absolute path.
    pub path: &'a str,
    /// The SHA-256 of the bytes imported, in hex.
    pub sha256: &'a str,
    /// Their size.
    pub bytes: u64,
    /// The file's modification time then.
    pub modified_at: Option<Timestamp>,
    /// The session id the file's header named (another agent's), if any.
    pub legacy_id: Option<&'a str>,
    /// The session it became (`None`: nothing importable).
    pub session_id: Option<SessionId>,
    /// How many events it became.
    pub events: u64,
    /// When.
    pub imported_at: Timestamp,
}

/// What an import of one file became and what the file was then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportHead {
    /// The session it became (`None`: nothing importable).
    pub session_id: Option<SessionId>,
    /// The SHA-256 of the bytes imported.
    pub sha256: String,
    /// Their size.
    pub bytes: u64,
    /// The file's modification time then, in milliseconds.
    pub modified_at: Option<Timestamp>,
}

/// One import record of a file of a folder ([`Reader::legacy_import_records`]).
#[derive(Debug, Clone)]
pub struct FolderImport {
    /// The file's name in the folder.
    pub name: String,
    /// When it was imported.
    pub imported_at: Timestamp,
    /// The record's id, which orders two imports of one instant.
    pub id: String,
    /// What it became.
    pub head: ImportHead,
}

impl WriteTx<'_> {
    /// Records that `version` of the legacy file at `path` could not be
    /// read; `false` when it was recorded before (it has been reported).
    pub fn record_legacy_unreadable(&mut self, path: &str, version: &str, error: &str) -> Result<bool> {
        let (agent, now) = (self.read().agent_id().clone(), self.now());
        let db = self.db();
        let fail = db.fail("recording an unreadable legacy file");
        let mut stmt = db
            .conn
            .prepare_cached(
                "INSERT INTO legacy_unreadable (agent_id, path, version, error, seen_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
            )
            .map_err(&fail)?;
        let inserted = stmt.execute(params![agent.as_str(), path, version, error, now.millis()]).map_err(&fail)?;
        Ok(inserted == 1)
    }

    /// Records one file's import, under an id of the store's making.
    pub fn record_legacy_import(&mut self, record: &ImportRecord<'_>) -> Result<()> {
        let id = self.store().new_record_id();
        let db = self.db();
        lock_imports(self.read().agent_id(), db);
        let fail = db.fail("recording a legacy import");
        let mut stmt = db
            .conn
            .prepare_cached(
                "INSERT INTO legacy_imports (id, agent_id, path, sha256, bytes, modified_at, legacy_id, session_id, \
             events, imported_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )
            .map_err(&fail)?;
        stmt.execute(params![
            id,
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
}

impl Reader<'_> {
    /// Whether the agent found `version` of the file at `path` unreadable
    /// before.
    pub fn legacy_unreadable_seen(&self, path: &str, version: &str) -> Result<bool> {
        let (db, agent) = (self.db(), self.agent_id());
        let sql = "SELECT 1 FROM legacy_unreadable WHERE agent_id = ?1 AND path = ?2 AND version = ?3";
        let found = query_first(
            db,
            "looking up an unreadable legacy file",
            sql,
            params![agent.as_str(), path, version],
            |_| Ok(()),
        )?;
        Ok(found.is_some())
    }

    /// Whether the agent imported these bytes at this path before: `Some` with
    /// the session they became (`None` inside when they held nothing importable).
    pub fn legacy_import_of(&self, path: &str, sha256: &str) -> Result<Option<Option<SessionId>>> {
        let (db, agent) = (self.db(), self.agent_id());
        lock_imports(agent, db);
        let sql = "SELECT id, session_id FROM legacy_imports WHERE agent_id = ?1 AND path = ?2 AND sha256 = ?3";
        query_first(db, "looking up a legacy import", sql, params![agent.as_str(), path, sha256], read_session)
    }

    /// The sessions the agent imported from files whose header named the
    /// session `legacy_id` (another agent's session id), oldest first:
    /// where a peer's file that moved (`codex archive`) was imported.
    pub fn legacy_imports_of_session(&self, legacy_id: &str) -> Result<Vec<Option<SessionId>>> {
        let (db, agent) = (self.db(), self.agent_id());
        lock_imports(agent, db);
        let sql = "SELECT id, session_id FROM legacy_imports WHERE agent_id = ?1 AND legacy_id = ?2 \
                   ORDER BY imported_at, id";
        query_all(db, "looking up the imports of a session", sql, params![agent.as_str(), legacy_id], read_session)
    }

    /// Every import record of a file of the folder `dir` (a canonical
    /// path) the agent imported, unordered: what a file must still match to
    /// be skipped unread is its newest. One query.
    pub fn legacy_import_records(&self, dir: &std::path::Path) -> Result<Vec<FolderImport>> {
        let (db, agent) = (self.db(), self.agent_id());
        // Unordered: sorting every import of the profile in SQL at every
        // start spilled to a temporary file once there were thousands.
        let sql = "SELECT id, session_id, path, sha256, bytes, modified_at, imported_at FROM legacy_imports \
             WHERE agent_id = ?1";
        // A path is the folder's canonical path, a `/` and the file's name,
        // so a record of this folder names a file without a `/` after that.
        let mut folder = dir.to_string_lossy().into_owned();
        if !folder.ends_with('/') {
            folder.push('/');
        }
        let mut records = Vec::new();
        query_each(db, "reading legacy imports", sql, params![agent.as_str()], |row| {
            let path = row.text(2)?;
            let Some(name) = path.strip_prefix(&folder).filter(|name| !name.contains('/')) else {
                return Ok(true);
            };
            let head = ImportHead {
                session_id: read_session(row)?,
                sha256: row.get(3)?,
                bytes: u64::try_from(row.get::<_, i64>(4)?).unwrap_or(0),
                modified_at: row.get::<_, Option<i64>>(5)?.map(Timestamp),
            };
            let (imported_at, id) = (Timestamp(row.get::<_, i64>(6)?), row.get::<_, String>(0)?);
            records.push(FolderImport { name: name.to_owned(), imported_at, id, head });
            Ok(true)
        })?;
        Ok(records)
    }

    /// Every earlier import of the path by the agent, oldest first, with the
    /// session each became.
    pub fn earlier_legacy_imports(&self, path: &str) -> Result<Vec<Option<SessionId>>> {
        let (db, agent) = (self.db(), self.agent_id());
        lock_imports(agent, db);
        let sql =
            "SELECT id, session_id FROM legacy_imports WHERE agent_id = ?1 AND path = ?2 ORDER BY imported_at, id";
        query_all(db, "looking up earlier legacy imports", sql, params![agent.as_str(), path], read_session)
    }
}

/// In a write transaction, the lock of the agent's import records
/// ([`crate::db::sql::Db::lock`]): a file is looked up and then imported,
/// so two processes starting on one folder import each file once.
fn lock_imports(agent: &seri_core::AgentId, db: crate::db::sql::Db<'_>) {
    db.lock(&format!("legacy:{agent}"));
}

fn read_session(row: &crate::db::sql::Row<'_>) -> std::result::Result<Option<SessionId>, RowError> {
    let Some(text) = row.text_or_null(1)? else {
        return Ok(None);
    };
    let corrupt_row = |id: &str| corrupt("legacy_imports", id, format!("`{text}` is not a session id"));
    text.parse().map(Some).map_err(|_| row.text(0).map_or_else(|e| e, corrupt_row))
}
