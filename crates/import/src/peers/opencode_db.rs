//! opencode's own storage, read: its SQLite database
//! (`$XDG_DATA_HOME/opencode/opencode.db`, by default
//! `~/.local/share/opencode/opencode.db`), where opencode 1.18 keeps every
//! session. Table `session` has a column for each field of a session's
//! `info`; each row of `message` and `part` holds its object as JSON in
//! `data`, its ids in columns of their own.
//!
//! The one place of [`crate::peers`] that opens a file. Each session's rows
//! are put back together as the document `opencode export <id>` writes
//! (`{info, messages: [{info, parts}]}`), so the export's reader reads
//! both, and a session reads the same from either (a test holds the
//! recorded database to the recorded exports). The database is opened
//! read-only, never written; all of it is read in one transaction, so a
//! running opencode writing meanwhile is seen before or after, never half.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::OpenFlags;
use serde_json::{Map, Value, json};

/// The database's file name.
pub const FILE_NAME: &str = "opencode.db";

/// How long a read waits for opencode to finish a write.
const BUSY_WAIT: Duration = Duration::from_secs(5);

/// One session of the database, as its export.
#[derive(Debug, Clone, PartialEq)]
pub struct DbSession {
    /// opencode's id of the session (`ses_…`).
    pub id: String,
    /// When opencode last changed it, in milliseconds.
    pub updated_at: Option<i64>,
    /// The document `opencode export <id>` writes, as JSON bytes: what
    /// [`super::parse`] reads as [`super::Format::Opencode`].
    pub document: Vec<u8>,
}

/// Why the database could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// opencode held a lock longer than the read waits.
    #[error("opencode's database {path} is busy (opencode is writing to it): try again once it is idle")]
    Busy {
        /// The database.
        path: PathBuf,
    },
    /// Not a database of opencode's, or one of a shape this reader does not know.
    #[error("cannot read {path} as opencode's database: {source}")]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
}

/// Whether `path` names opencode's database, by its file name.
pub fn is_database(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == FILE_NAME)
}

/// Every session of the database at `path`, oldest first, each as its export.
pub fn read(path: &Path) -> Result<Vec<DbSession>, DbError> {
    let error = |source: rusqlite::Error| match source.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            DbError::Busy { path: path.to_path_buf() }
        }
        _ => DbError::Sqlite { path: path.to_path_buf(), source },
    };
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut db = rusqlite::Connection::open_with_flags(path, flags).map_err(error)?;
    db.busy_timeout(BUSY_WAIT).map_err(error)?;
    let tx = db.transaction_with_behavior(rusqlite::TransactionBehavior::Deferred).map_err(error)?;
    let sessions = read_sessions(&tx).map_err(error)?;
    tx.finish().map_err(error)?;
    Ok(sessions)
}

fn read_sessions(db: &rusqlite::Connection) -> rusqlite::Result<Vec<DbSession>> {
    let mut sessions = db.prepare(
        "select id, slug, project_id, directory, path, title, version, model, time_created, time_updated \
         from session order by time_created, id",
    )?;
    let mut messages = db.prepare("select id, data from message where session_id = ?1 order by time_created, id")?;
    let mut parts = db.prepare("select id, data from part where message_id = ?1 order by id")?;
    let rows = sessions.query_map([], |row| {
        let id: String = row.get(0)?;
        let mut info = Map::new();
        info.insert("id".into(), Value::String(id.clone()));
        for (column, key) in
            [(1, "slug"), (2, "projectID"), (3, "directory"), (4, "path"), (5, "title"), (6, "version")]
        {
            if let Some(text) = row.get::<_, Option<String>>(column)? {
                info.insert(key.into(), Value::String(text));
            }
        }
        if let Some(model) = row.get::<_, Option<String>>(7)? {
            info.insert("model".into(), json_of(&model));
        }
        let created: Option<i64> = row.get(8)?;
        let updated: Option<i64> = row.get(9)?;
        info.insert("time".into(), json!({ "created": created, "updated": updated }));
        Ok((id, updated, info))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, updated_at, info) = row?;
        let mut listed = Vec::new();
        for message in messages.query_map([&id], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))? {
            let (message_id, data) = message?;
            let mut message_info = object_of(&data);
            message_info.insert("id".into(), Value::String(message_id.clone()));
            message_info.insert("sessionID".into(), Value::String(id.clone()));
            let mut its_parts = Vec::new();
            for part in
                parts.query_map([&message_id], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))?
            {
                let (part_id, data) = part?;
                let mut part = object_of(&data);
                part.insert("id".into(), Value::String(part_id));
                part.insert("sessionID".into(), Value::String(id.clone()));
                part.insert("messageID".into(), Value::String(message_id.clone()));
                its_parts.push(Value::Object(part));
            }
            listed.push(json!({ "info": Value::Object(message_info), "parts": its_parts }));
        }
        let document = json!({ "info": Value::Object(info), "messages": listed });
        out.push(DbSession { id, updated_at, document: serde_json::to_vec(&document).unwrap_or_default() });
    }
    Ok(out)
}

/// A column's JSON text, or the text itself when it is not JSON.
fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// A row's `data`: its object, or an empty one when it holds none (the
/// export's reader then skips what it lacks, with its reason).
fn object_of(text: &str) -> Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(object)) => object,
        _ => Map::new(),
    }
}
