//! Checkpoints at run time: before `write_file` or `edit` changes a file,
//! its content (or its absence) is saved; once the call has ended, what it
//! left is noted.
//!
//! The file is resolved the way the tool resolves it (inside the session's
//! workspace, symlinks followed), so the checkpoint names the file the tool
//! is about to write. A path that does not resolve is not checkpointed: the
//! tool refuses it too. `bash` is never checkpointed, since what a command
//! will change cannot be known before it runs; a file a command changed is
//! reported as changed outside seri's tools when a rewind would overwrite
//! it.
//!
//! Checkpointing is independent of trajectory recording (undo works with
//! recording off) and, like recording, never fails a run: a checkpoint
//! that cannot be saved is logged, and the call goes ahead without one.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seri_core::{AgentId, RunId, Seq, SessionId, ToolCall, ToolCallId};
use seri_store::{AgentStore, FileState, NewCheckpoint, Store, TrajectoryRecord};
use seri_tools::Workspace;
use seri_tools::coding::{edit, write_file};

/// The checkpoints of one runtime's runs: a value the runtime owns, with
/// its own store handle. It records nothing in trajectories itself; the
/// run loop hands what it saved to the recorder.
#[derive(Debug)]
pub(crate) struct Checkpoints {
    store: Arc<Store>,
    agent: AgentId,
}

/// A checkpoint taken before a call, to finish when the call has ended.
#[derive(Debug)]
pub(crate) struct PendingCheckpoint {
    id: String,
    path: PathBuf,
    tool_call_id: ToolCallId,
    path_text: String,
    before: FileState,
}

impl PendingCheckpoint {
    /// The trajectory's record of what was saved.
    pub(crate) fn record(&self) -> TrajectoryRecord {
        TrajectoryRecord::Checkpoint {
            tool_call_id: self.tool_call_id.clone(),
            path: self.path_text.clone(),
            before: self.before.clone(),
        }
    }
}

impl Checkpoints {
    /// Checkpoints over `agent`'s part of `store`.
    pub(crate) fn new(store: Arc<Store>, agent: AgentId) -> Self {
        Self { store, agent }
    }

    fn store(&self) -> AgentStore<'_> {
        self.store.agent(&self.agent)
    }

    /// Before a tool runs: for `write_file` and `edit`, checkpoints the
    /// file it names, under the turn `turn_seq` gives (asked only for a
    /// call that changes a file).
    pub(crate) fn before(
        &self,
        session_id: SessionId,
        run_id: RunId,
        workspace: &Workspace,
        call: &ToolCall,
        turn_seq: impl FnOnce() -> Option<Seq>,
    ) -> Option<PendingCheckpoint> {
        if call.name != write_file::NAME && call.name != edit::NAME {
            return None;
        }
        let written = call.arguments.get("path")?.as_str()?;
        let resolved = workspace.resolve(written, "path").ok()?;
        let turn_seq = turn_seq()?;
        let before = match read_for_checkpoint(&resolved.path) {
            Ok(before) => before,
            Err(e) => {
                tracing::warn!(path = %resolved.path.display(), error = %e, "not checkpointing a file that cannot be read");
                return None;
            }
        };
        let path_text = resolved.path.to_string_lossy().into_owned();
        let recorded = self.store().record_checkpoint(&NewCheckpoint {
            session_id,
            turn_seq,
            run_id: Some(run_id),
            tool_call_id: &call.id,
            path: &path_text,
            before: before.as_deref(),
        });
        match recorded {
            Ok(recorded) => {
                for retired in &recorded.retired {
                    tracing::info!(session = %retired, "retired the undo history of a session past the per-project cap");
                }
                Some(PendingCheckpoint {
                    id: recorded.id,
                    path: resolved.path,
                    tool_call_id: call.id.clone(),
                    path_text,
                    before: recorded.before,
                })
            }
            Err(e) => {
                tracing::warn!(path = %resolved.path.display(), error = %e, "could not checkpoint a file before a tool changed it");
                None
            }
        }
    }

    /// After the call: notes what it left in the checkpointed file, and
    /// returns it for the trajectory.
    pub(crate) fn finish(&self, pending: Option<PendingCheckpoint>) -> Option<FileState> {
        let pending = pending?;
        let after = match current_state(&pending.path) {
            Ok(state) => state,
            Err(e) => {
                tracing::warn!(path = %pending.path.display(), error = %e, "could not read a file after a tool changed it");
                return None;
            }
        };
        if let Err(e) = self.store().finish_checkpoint(&pending.id, &after) {
            tracing::warn!(path = %pending.path.display(), error = %e, "could not note what a tool left in a file");
        }
        Some(after)
    }
}

/// The file's bytes, `None` when there is no file. A file over
/// [`seri_store::MAX_CHECKPOINT_FILE_BYTES`] is read anyway so its hash is known; the
/// store keeps only its hash and size.
fn read_for_checkpoint(path: &Path) -> io::Result<Option<Vec<u8>>> {
    // The tool's checked path, opened as the tool opens it: a folder
    // swapped for a symlink on the way is refused, so a checkpoint never
    // holds a file from outside.
    match seri_tools::coding::checked::open_read(path) {
        Ok(mut file) => {
            let mut bytes = Vec::new();
            io::Read::read_to_end(&mut file, &mut bytes)?;
            Ok(Some(bytes))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// What a file holds now, as a hash.
pub(crate) fn current_state(path: &Path) -> io::Result<FileState> {
    Ok(FileState::of(read_for_checkpoint(path)?.as_deref()))
}
