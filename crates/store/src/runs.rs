//! Runs: the run loop's record of each run it executed, with its status and
//! result. A run row is inserted when the run starts and finished exactly
//! once; finishing twice, or a run of another agent's session, is an error.

use serde::{Deserialize, Serialize};
use seri_core::{ContinuationId, Lane, RunId, RunKindName, RunStatus, SessionId, Timestamp, Usage};

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
    /// What the run loop recorded when it finished (turns, usage, result,
    /// error), or the store when it found the run's process gone.
    pub result: Option<RunResult>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it finished.
    pub finished_at: Option<Timestamp>,
}

/// What a finished run came to, as `runs.result` keeps it. Every field may
/// be absent: a run whose process stopped before it finished
/// ([`RunStatus::Interrupted`]) has only the store's error, its turns and
/// usage unknown (not zero).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    /// Model turns taken.
    #[serde(default)]
    pub turns: Option<u32>,
    /// Tokens billed over its turns that reported usage; `None` when none
    /// did.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// The model's final text, when it ended its turn.
    #[serde(default)]
    pub result: Option<String>,
    /// The successor the run continued into.
    #[serde(default)]
    pub continued_to: Option<RunContinuedTo>,
    /// What went wrong, for `failed`, `cancelled` and `interrupted`.
    #[serde(default)]
    pub error: Option<String>,
    /// For a typed child run: the value it handed back with
    /// `return_result`, checked against its parent's schema.
    #[serde(default)]
    pub returned: Option<serde_json::Value>,
}

/// Where a run continued: the successor and the edge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunContinuedTo {
    /// The successor session.
    pub session_id: SessionId,
    /// The continuation edge.
    pub continuation_id: ContinuationId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_written_before_they_were_typed_read_back() {
        // What the run loop wrote as `json!` before, every key present.
        let finished = r#"{"turns":2,"usage":null,"result":"Done.","continuedTo":{"sessionId":"01a22b56-d880-7000-8000-000000000002","continuationId":"01a22b56-d880-7000-8000-000000000004"},"error":null,"returned":{"count":3}}"#;
        let result: RunResult = serde_json::from_str(finished).unwrap();
        assert_eq!((result.turns, result.result.as_deref()), (Some(2), Some("Done.")));
        assert_eq!(result.returned, Some(serde_json::json!({"count": 3})));
        let written = serde_json::to_value(&result).unwrap();
        assert_eq!(
            written,
            serde_json::from_str::<serde_json::Value>(finished).unwrap(),
            "the same keys, written again"
        );
        // The store's own, for a run whose process stopped.
        let interrupted: RunResult = serde_json::from_str(crate::db::lease::INTERRUPTED_RESULT).unwrap();
        assert!(interrupted.error.is_some_and(|e| e.starts_with("interrupted")));
        assert_eq!((interrupted.turns, interrupted.usage), (None, None), "unknown, not zero");
    }
}
