//! The checkpoint tables: `checkpoint_blobs` (contents by hash),
//! `checkpoint_files` (one row per checkpoint) and `checkpoint_sessions`
//! (each session's undo history and the per-project cap).

use crate::db::sql::params;
use seri_core::{Seq, SeqRange, SessionId, Timestamp, ToolCallId};

use crate::checkpoints::{
    CHECKPOINT_SESSIONS_PER_PROJECT, CheckpointFile, CheckpointHistory, CheckpointRecorded, FileState,
    MAX_CHECKPOINT_FILE_BYTES, NewCheckpoint,
};
use crate::db::read::Reader;
use crate::db::rows::{self, Db, RowError, corrupt, query_all, query_first};
use crate::db::write::WriteTx;
use crate::error::{LookupError, Result, StoreError};

const FILE_COLUMNS: &str = "id, session_id, turn_seq, run_id, tool_call_id, path, before_sha256, before_bytes, \
     before_kept, after_state, after_sha256, after_bytes, created_at";

/// The write lock of the checkpoint tables ([`crate::db::sql::Db::lock`]):
/// their blobs are shared by every session and the per-project cap counts
/// several, so their writers run one at a time, taking it before any
/// session's.
pub(crate) const CHECKPOINTS_LOCK: &str = "checkpoints";

impl WriteTx<'_> {
    /// Records what a file held before a tool changes it (see the module
    /// doc), touches the session, and retires the sessions of its project
    /// past [`CHECKPOINT_SESSIONS_PER_PROJECT`].
    pub fn record_checkpoint(&mut self, new: &NewCheckpoint<'_>) -> Result<CheckpointRecorded> {
        self.db().lock(CHECKPOINTS_LOCK);
        let cwd = self.read().session_head(new.session_id)?.cwd;
        let db = self.db();
        let now = self.now();
        let fail = db.fail("recording a checkpoint");
        touch(db, new.session_id, &cwd, now, Some(new.turn_seq))?;
        let before = FileState::of(new.before);
        let kept = match (new.before, &before) {
            (Some(bytes), FileState::Present { sha256, .. }) if bytes.len() as u64 <= MAX_CHECKPOINT_FILE_BYTES => {
                db.conn
                    .prepare_cached(
                        "INSERT INTO checkpoint_blobs (sha256, bytes, content) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                    )
                    .and_then(|mut s| s.execute(params![sha256, rows::int(bytes.len() as u64), bytes]))
                    .map_err(&fail)?;
                true
            }
            _ => false,
        };
        let (sha, size) = match &before {
            FileState::Absent => (None, None),
            FileState::Present { sha256, bytes } => (Some(sha256.clone()), Some(rows::int(*bytes))),
        };
        let id = self.store().new_record_id();
        db.conn
            .prepare_cached(&format!(
                "INSERT INTO checkpoint_files ({FILE_COLUMNS}) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'unknown', NULL, NULL, ?10)"
            ))
            .and_then(|mut s| {
                s.execute(params![
                    id,
                    new.session_id.to_string(),
                    rows::int(new.turn_seq.get()),
                    new.run_id.map(|r| r.to_string()),
                    new.tool_call_id.as_str(),
                    new.path,
                    sha,
                    size,
                    i64::from(kept),
                    now.millis(),
                ])
            })
            .map_err(&fail)?;
        let retired = retire_past_cap(db, self.read().agent_id().as_str(), &cwd, now)?;
        Ok(CheckpointRecorded { id, before, kept, retired })
    }

    /// Records what the call left in the file of checkpoint `id`.
    pub fn finish_checkpoint(&mut self, id: &str, after: &FileState) -> Result<()> {
        let db = self.db();
        db.lock(CHECKPOINTS_LOCK);
        let (state, sha, bytes) = match after {
            FileState::Absent => ("absent", None, None),
            FileState::Present { sha256, bytes } => ("present", Some(sha256.as_str()), Some(rows::int(*bytes))),
        };
        let sql = "UPDATE checkpoint_files SET after_state = ?2, after_sha256 = ?3, after_bytes = ?4 WHERE id = ?1 \
                   AND session_id IN (SELECT id FROM sessions WHERE agent_id = ?5)";
        let changed = db
            .conn
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(params![id, state, sha, bytes, self.read().agent_id().as_str()]))
            .map_err(db.fail("finishing a checkpoint"))?;
        if changed == 0 {
            return Err(StoreError::Lookup(LookupError::UnknownCheckpoint { id: id.to_owned() }));
        }
        Ok(())
    }

    /// Marks the session as touched now, if it has undo history, so the
    /// per-project cap counts it as recently used. It takes only the
    /// session's lock, not the checkpoints' (one row's time is written, and
    /// the cap's order is a preference): a run starting touches it in the
    /// transaction that takes its session, waiting for no other session.
    pub fn touch_checkpoints(&mut self, session: SessionId) -> Result<()> {
        self.read().require_session(session)?;
        let db = self.db();
        db.conn
            .prepare_cached("UPDATE checkpoint_sessions SET touched_at = ?2 WHERE session_id = ?1 AND live = 1")
            // Whether a row had undo history to touch is not asked: not waited for.
            .and_then(|mut s| s.execute_pipelined(vec![session.to_string().into(), self.now().millis().into()]))
            .map_err(db.fail("touching a session's checkpoints"))?;
        Ok(())
    }

    /// Deletes the checkpoints of the turns from `from_turn` on, after their
    /// files were restored: they describe changes that were undone.
    pub fn discard_checkpoints(&mut self, session: SessionId, from_turn: Seq) -> Result<u64> {
        self.db().lock(CHECKPOINTS_LOCK);
        self.read().require_session(session)?;
        let db = self.db();
        let deleted = db
            .conn
            .execute(
                "DELETE FROM checkpoint_files WHERE session_id = ?1 AND turn_seq >= ?2",
                params![session.to_string(), rows::int(from_turn.get())],
            )
            .map_err(db.fail("discarding checkpoints"))?;
        collect_blobs(db)?;
        Ok(deleted)
    }
}

impl WriteTx<'_> {
    /// Gives the fork `fork` of `parent` at `fork_seq` the undo history of
    /// the part it shares: a copy of each of the parent's checkpoints whose
    /// call is at or before the fork point (a turn the fork point cuts
    /// short keeps the calls before it), in the order they were taken, so
    /// `/rewind` in the fork puts files back as the parent's checkpoints
    /// recorded them. Copied, not referenced, like every undo history: the
    /// parent's later rewinds and retirement leave the fork's alone, and the
    /// fork's leave the parent's. A parent whose history covers only later
    /// turns (or none, retired) gives a history that says so. Rows of the
    /// checkpoint tables, never events. The caller holds `CHECKPOINTS_LOCK`.
    pub(crate) fn share_checkpoints(&mut self, parent: SessionId, fork: SessionId, fork_seq: Seq) -> Result<()> {
        let covers_from = match self.read().checkpoint_history(parent)? {
            CheckpointHistory::None => return Ok(()),
            CheckpointHistory::Retired { .. } => None,
            CheckpointHistory::Live { covers_from, .. } => Some(covers_from),
        };
        if fork_seq.get() == 0 {
            return Ok(());
        }
        let shared: Vec<CheckpointFile> =
            self.read().checkpoints_since(parent, Seq::FIRST)?.into_iter().filter(|c| c.turn_seq <= fork_seq).collect();
        let calls: Vec<ToolCallId> = shared.iter().map(|c| c.tool_call_id.clone()).collect();
        let before_fork = self.read().tool_call_ids_within(parent, SeqRange::between(Seq::FIRST, fork_seq), &calls)?;
        let cwd = self.read().session_head(fork)?.cwd;
        let now = self.now();
        let db = self.db();
        // Turns before what the parent's history covers are not the fork's either.
        let after_fork = Seq(fork_seq.get() + 1);
        let from = covers_from.filter(|c| *c <= fork_seq).unwrap_or(after_fork);
        db.conn
            .prepare_cached(
                "INSERT INTO checkpoint_sessions (session_id, cwd, touched_at, live, covers_from_seq) \
                 VALUES (?1, ?2, ?3, 1, ?4)",
            )
            .and_then(|mut s| s.execute(params![fork.to_string(), cwd.as_str(), now.millis(), rows::int(from.get())]))
            .map_err(db.fail("sharing a parent's checkpoints"))?;
        let copy = format!(
            "INSERT INTO checkpoint_files ({FILE_COLUMNS}) SELECT ?1, ?2, turn_seq, run_id, tool_call_id, path, \
             before_sha256, before_bytes, before_kept, after_state, after_sha256, after_bytes, created_at \
             FROM checkpoint_files WHERE id = ?3"
        );
        for checkpoint in shared.iter().filter(|c| before_fork.contains(&c.tool_call_id)) {
            let id = self.store().new_record_id();
            let db = self.db();
            db.conn
                .prepare_cached(&copy)
                .and_then(|mut s| s.execute(params![id, fork.to_string(), checkpoint.id.as_str()]))
                .map_err(db.fail("sharing a parent's checkpoints"))?;
        }
        retire_past_cap(self.db(), self.read().agent_id().as_str(), &cwd, now)?;
        Ok(())
    }
}

/// Inserts or refreshes a session's row. A retired session that gets a new
/// checkpoint starts a new history from `turn`.
fn touch(db: Db<'_>, session: SessionId, cwd: &str, now: Timestamp, turn: Option<Seq>) -> Result<()> {
    let from = turn.map_or(1, |t| rows::int(t.get()));
    db.conn
        .prepare_cached(
            "INSERT INTO checkpoint_sessions (session_id, cwd, touched_at, live, covers_from_seq) \
             VALUES (?1, ?2, ?3, 1, 1) \
             ON CONFLICT (session_id) DO UPDATE SET touched_at = ?3, \
             covers_from_seq = CASE WHEN checkpoint_sessions.live = 0 THEN ?4 \
             ELSE checkpoint_sessions.covers_from_seq END, live = 1",
        )
        .and_then(|mut s| s.execute(params![session.to_string(), cwd, now.millis(), from]))
        .map_err(db.fail("touching a session's checkpoints"))?;
    Ok(())
}

/// Retires the live sessions of `agent` in `cwd` past the cap, newest
/// touched kept, and returns them.
fn retire_past_cap(db: Db<'_>, agent: &str, cwd: &str, now: Timestamp) -> Result<Vec<SessionId>> {
    let sql = "SELECT c.session_id FROM checkpoint_sessions c JOIN sessions s ON s.id = c.session_id \
               WHERE s.agent_id = ?1 AND c.cwd = ?2 AND c.live = 1 \
               ORDER BY c.touched_at DESC, c.session_id DESC LIMIT ?4 OFFSET ?3";
    let cap = rows::int(CHECKPOINT_SESSIONS_PER_PROJECT as u64);
    let old: Vec<SessionId> =
        query_all(db, "finding sessions past the checkpoint cap", sql, params![agent, cwd, cap, i64::MAX], |r| {
            let text: String = r.get(0)?;
            text.parse().map_err(|_| corrupt("checkpoint_sessions", &text, "session_id is not an id"))
        })?;
    let fail = db.fail("retiring a session's checkpoints");
    for session in &old {
        let id = session.to_string();
        db.conn.execute("DELETE FROM checkpoint_files WHERE session_id = ?1", params![&id]).map_err(&fail)?;
        db.conn
            .execute(
                "UPDATE checkpoint_sessions SET live = 0, retired_at = ?2 WHERE session_id = ?1",
                params![id, now.millis()],
            )
            .map_err(&fail)?;
    }
    if !old.is_empty() {
        collect_blobs(db)?;
    }
    Ok(old)
}

/// Deletes the blobs no checkpoint names any more.
pub(crate) fn collect_blobs(db: Db<'_>) -> Result<()> {
    db.conn
        .execute(
            "DELETE FROM checkpoint_blobs WHERE sha256 NOT IN \
             (SELECT before_sha256 FROM checkpoint_files WHERE before_kept = 1)",
            params![],
        )
        .map_err(db.fail("deleting unused checkpoint contents"))?;
    Ok(())
}

impl Reader<'_> {
    /// The session's checkpoints of the turns from `from_turn` on, in the
    /// order they were taken.
    pub fn checkpoints_since(&self, session: SessionId, from_turn: Seq) -> Result<Vec<CheckpointFile>> {
        self.require_session(session)?;
        let sql = format!(
            "SELECT {FILE_COLUMNS} FROM checkpoint_files WHERE session_id = ?1 AND turn_seq >= ?2 ORDER BY created_at, id"
        );
        query_all(
            self.db(),
            "reading checkpoints",
            &sql,
            params![session.to_string(), rows::int(from_turn.get())],
            read_file,
        )
    }

    /// The newest checkpoint of `path` in the session, whatever the turn:
    /// its `after` is what seri's tools last left in the file.
    pub fn latest_checkpoint(&self, session: SessionId, path: &str) -> Result<Option<CheckpointFile>> {
        self.require_session(session)?;
        let sql = format!(
            "SELECT {FILE_COLUMNS} FROM checkpoint_files WHERE session_id = ?1 AND path = ?2 \
             ORDER BY created_at DESC, id DESC LIMIT 1"
        );
        query_first(self.db(), "reading a checkpoint", &sql, params![session.to_string(), path], read_file)
    }

    /// A kept content, by its hash.
    pub fn checkpoint_content(&self, sha256: &str) -> Result<Option<Vec<u8>>> {
        let sql = "SELECT content FROM checkpoint_blobs WHERE sha256 = ?1";
        query_first(self.db(), "reading a checkpointed content", sql, params![sha256], |r| r.get::<_, Vec<u8>>(0))
    }

    /// The session's undo history.
    pub fn checkpoint_history(&self, session: SessionId) -> Result<CheckpointHistory> {
        self.require_session(session)?;
        let sql = "SELECT live, covers_from_seq, retired_at FROM checkpoint_sessions WHERE session_id = ?1";
        let row = query_first(self.db(), "reading a session's undo history", sql, params![session.to_string()], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, Option<i64>>(2)?))
        })?;
        Ok(match row {
            None => CheckpointHistory::None,
            Some((1, from, retired)) => {
                CheckpointHistory::Live { covers_from: Seq(rows::uint(from)), retired_at: retired.map(Timestamp) }
            }
            Some((_, _, retired)) => CheckpointHistory::Retired { retired_at: Timestamp(retired.unwrap_or(0)) },
        })
    }
}

fn read_file(row: &crate::db::sql::Row<'_>) -> std::result::Result<CheckpointFile, RowError> {
    let id: String = row.get(0)?;
    let table = "checkpoint_files";
    let session: String = row.get(1)?;
    let run: Option<String> = row.get(3)?;
    let before_sha: Option<String> = row.get(6)?;
    let before_bytes: Option<i64> = row.get(7)?;
    let after_state: String = row.get(9)?;
    let after_sha: Option<String> = row.get(10)?;
    let after_bytes: Option<i64> = row.get(11)?;
    let before = match before_sha {
        None => FileState::Absent,
        Some(sha256) => FileState::Present { sha256, bytes: rows::uint(before_bytes.unwrap_or(0)) },
    };
    let after = match (after_state.as_str(), after_sha) {
        ("unknown", _) => None,
        ("absent", _) => Some(FileState::Absent),
        ("present", Some(sha256)) => Some(FileState::Present { sha256, bytes: rows::uint(after_bytes.unwrap_or(0)) }),
        (other, _) => return Err(corrupt(table, &id, format!("after_state `{other}` without a hash"))),
    };
    Ok(CheckpointFile {
        session_id: session.parse().map_err(|_| corrupt(table, &id, "session_id is not an id"))?,
        turn_seq: Seq(rows::uint(row.get(2)?)),
        run_id: run.map(|r| r.parse().map_err(|_| corrupt(table, &id, "run_id is not an id"))).transpose()?,
        tool_call_id: ToolCallId(row.get(4)?),
        path: row.get(5)?,
        before,
        before_kept: row.get::<_, i64>(8)? == 1,
        after,
        created_at: Timestamp(row.get(12)?),
        id,
    })
}
