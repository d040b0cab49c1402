//! Runs: the run loop's record of each run it executed, with its status and
//! result. A run row is inserted when the run starts and finished exactly
//! once; finishing twice, or a run of another agent's session, is an error.

use serde::{Deserialize, Serialize};
use seri_core::{Lane, RunId, RunKindName, RunStatus, SessionId, Timestamp};

/// A run as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// The run.
    pub id: RunId,
    /// Its session.
    pub session_id: SessionId,
    /// What kind of run it is.
    pub kind: RunKindName,
    /// The queue it waited in.
    pub lane: Lane,
    /// For a child run: the run that delegated it.
    pub parent_run_id: Option<RunId>,
    /// [`RunStatus::Running`] until it finishes (or its process is found
    /// gone: [`RunStatus::Interrupted`]).
    pub status: RunStatus,
    /// What the run loop recorded when it finished (turns, usage, result, error).
    pub result: Option<serde_json::Value>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it finished.
    pub finished_at: Option<Timestamp>,
}
