//! File checkpoints: what a file held before a tool changed it, so
//! `/rewind` can put it back.
//!
//! Before `write_file` or `edit` changes a file, the run loop hands its
//! current content (or its absence) to [`WriteTx::record_checkpoint`](crate::WriteTx::record_checkpoint). The
//! content goes into `checkpoint_blobs` by SHA-256, once however many
//! checkpoints name it; the row in `checkpoint_files` names the session,
//! the turn (the seq of the user message that opened it: every user turn is
//! a checkpoint boundary), the call and the path. When the call has ended,
//! [`WriteTx::finish_checkpoint`](crate::WriteTx::finish_checkpoint) records what the tool left, so a later
//! restore can tell a file changed since by something else (a person, an
//! editor, a `bash` command, which is never checkpointed) from one only
//! seri's tools touched.
//!
//! # The per-project cap
//!
//! Only the [`CHECKPOINT_SESSIONS_PER_PROJECT`] most recently touched
//! sessions of a project (a working directory) keep their checkpoints. A
//! session is touched when a checkpoint is taken in it and when a run
//! starts in it ([`WriteTx::touch_checkpoints`](crate::WriteTx::touch_checkpoints)). Recording a checkpoint
//! retires the sessions past the cap: their `checkpoint_files` rows and the
//! blobs nothing else names are deleted, and `checkpoint_sessions` keeps
//! `retired_at` so a restore can say why there is nothing to restore. Their
//! conversations are never touched. A retired session that gets a new
//! checkpoint starts a new undo history, which covers only the turns from
//! then on (`covers_from_seq`).

use serde::{Deserialize, Serialize};
use seri_core::{RunId, Seq, SessionId, Timestamp, ToolCallId};

use crate::trajectories::elide::hex_sha256;

/// How many sessions per working directory keep their undo history.
pub const CHECKPOINT_SESSIONS_PER_PROJECT: usize = 20;

/// Files larger than this are noted (hash and size) but their content is
/// not kept, so they cannot be restored.
pub const MAX_CHECKPOINT_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// What a file held at some moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum FileState {
    /// There was no file.
    Absent,
    /// A file with this content.
    Present {
        /// Lowercase hex SHA-256 of its bytes.
        sha256: String,
        /// Its length.
        bytes: u64,
    },
}

impl FileState {
    /// The state of a file whose content is `bytes` (`None`: no file).
    pub fn of(bytes: Option<&[u8]>) -> Self {
        match bytes {
            None => FileState::Absent,
            Some(bytes) => FileState::Present { sha256: hex_sha256(bytes), bytes: bytes.len() as u64 },
        }
    }
}

/// A checkpoint about to be recorded.
#[derive(Debug, Clone, Copy)]
pub struct NewCheckpoint<'a> {
    /// The session.
    pub session_id: SessionId,
    /// The user message whose turn this is.
    pub turn_seq: Seq,
    /// The run, if known.
    pub run_id: Option<RunId>,
    /// The call about to change the file.
    pub tool_call_id: &'a ToolCallId,
    /// The absolute path.
    pub path: &'a str,
    /// The content before the call; `None` when there was no file.
    pub before: Option<&'a [u8]>,
}

/// A recorded checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointFile {
    /// The row's id (time-ordered).
    pub id: String,
    /// The session.
    pub session_id: SessionId,
    /// The user message whose turn it belongs to.
    pub turn_seq: Seq,
    /// The run, if known.
    pub run_id: Option<RunId>,
    /// The call.
    pub tool_call_id: ToolCallId,
    /// The absolute path.
    pub path: String,
    /// What was there before the call.
    pub before: FileState,
    /// Whether that content is kept (it is not for files over [`MAX_CHECKPOINT_FILE_BYTES`]).
    pub before_kept: bool,
    /// What the call left; `None` until it ended (a crash leaves it unknown).
    pub after: Option<FileState>,
    /// When it was taken.
    pub created_at: Timestamp,
}

/// What recording a checkpoint did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRecorded {
    /// The new row's id, for [`WriteTx::finish_checkpoint`](crate::WriteTx::finish_checkpoint).
    pub id: String,
    /// What the file held.
    pub before: FileState,
    /// Whether its content is kept.
    pub kept: bool,
    /// Sessions of the same project whose undo history was retired by the cap.
    pub retired: Vec<SessionId>,
}

/// A session's undo history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointHistory {
    /// No checkpoint was ever taken in it.
    None,
    /// It keeps its checkpoints for the turns from `covers_from` on.
    Live {
        /// The first turn (user message seq) the history covers.
        covers_from: Seq,
        /// When it was last retired, if it ever was.
        retired_at: Option<Timestamp>,
    },
    /// The per-project cap retired it.
    Retired {
        /// When.
        retired_at: Timestamp,
    },
}
