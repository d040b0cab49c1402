//! Trajectories: the run loop's local record of each run, kept to compare
//! runs without opening config.json.
//!
//! A trajectory is a [`TrajectoryHeader`] (the settings in force when the
//! run started: model, strategy, window, sampling knobs, OpenRouter pin,
//! reasoning effort, the hashes of the files frozen into the system prompt,
//! seri's version) and numbered [`TrajectoryRecord`]s: tool calls and their
//! results, checkpoints, denials with their reason, check results, edit
//! outcomes, token usage per turn, retries, compactions and how the run
//! ended. Every record is elided as it is written ([`elide`]): a large value
//! is stored as a marker with its original size, never whole.
//!
//! Trajectories are not conversation history. They live in their own
//! tables, age out ([`retention`]), and nothing is ever derived from them
//! but what `seri trajectory` shows.

pub mod elide;
pub mod retention;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use seri_core::{DenialReason, ModelRef, PromptFile, RunId, SessionId, Timestamp, ToolCallId, Usage};

use crate::checkpoints::FileState;

/// What was in force when a run started: enough to tell two runs apart
/// without opening config.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrajectoryHeader {
    /// The run.
    pub run_id: RunId,
    /// Its session.
    pub session_id: SessionId,
    /// When it started.
    pub started_at: Timestamp,
    /// The seri build that ran it.
    pub seri_version: String,
    /// The provider type and model.
    pub model: ModelRef,
    /// `continue` or `compact`.
    pub strategy: String,
    /// The context window in force, in tokens.
    pub context_window: u64,
    /// The run's turn budget.
    pub max_turns: u32,
    /// What kind of run it is.
    pub kind: seri_core::RunKindName,
    /// The queue it waited in.
    pub lane: seri_core::Lane,
    /// The sampling knobs sent with each request (`temperature`, `topP`,
    /// `topK`, `seed`); an empty object means the provider's defaults.
    pub sampling: Value,
    /// The reasoning effort asked for, if any.
    pub reasoning_effort: Option<String>,
    /// OpenRouter's provider pin (`order`, `allowFallbacks`), when one is set.
    pub openrouter_pin: Option<Value>,
    /// SHA-256 of the frozen system prompt's text.
    pub system_prompt_sha256: Option<String>,
    /// The files frozen into the system prompt (AGENTS.md, rules, memory), with their hashes.
    pub prompt_files: Vec<PromptFile>,
}

/// How a `write_file` or `edit` call came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditOutcome {
    /// The file was written.
    Applied,
    /// The tool failed (no match, bad input, an IO error); the file was not written.
    Failed,
    /// The permission layer refused the call.
    Denied,
}

/// One thing that happened in a run. Values that may be large (arguments,
/// results, commands, errors) are [`Value`]s, because the store may have
/// replaced them with an elision marker ([`elide::elided_bytes`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum TrajectoryRecord {
    /// The model asked for a tool.
    ToolCall {
        /// The call.
        tool_call_id: ToolCallId,
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// A tool's result, as the model read it.
    ToolResult {
        /// The call it answers.
        tool_call_id: ToolCallId,
        /// The tool.
        name: String,
        /// Whether it failed or was refused.
        is_error: bool,
        /// The text.
        content: Value,
    },
    /// A file's content was saved before a tool changed it.
    Checkpoint {
        /// The call about to change it.
        tool_call_id: ToolCallId,
        /// The absolute path.
        path: String,
        /// What was there.
        before: FileState,
    },
    /// The permission layer refused a call.
    Denial {
        /// The call.
        tool_call_id: ToolCallId,
        /// The tool.
        tool: String,
        /// Why.
        reason: DenialReason,
        /// What was refused.
        detail: Value,
    },
    /// A check ran: a `bash` command and how it exited.
    Check {
        /// The call.
        tool_call_id: ToolCallId,
        /// The command.
        command: Value,
        /// Its exit code, when it exited.
        exit_code: Option<i32>,
        /// The signal that killed it, if one did.
        signal: Option<i32>,
        /// Whether it ran past its timeout.
        timed_out: bool,
        /// Exit code 0.
        passed: bool,
    },
    /// A `write_file` or `edit` call's outcome.
    Edit {
        /// The call.
        tool_call_id: ToolCallId,
        /// `write_file` or `edit`.
        tool: String,
        /// The path as the model wrote it.
        path: Option<String>,
        /// How it came out.
        outcome: EditOutcome,
        /// The first line of the result.
        detail: Value,
        /// What the file held afterwards, when a checkpoint was taken.
        after: Option<FileState>,
    },
    /// A model turn's token usage.
    Usage {
        /// The turn, from 1.
        turn: u32,
        /// What the turn's request cost; `None` (null) when the provider
        /// reported nothing.
        #[serde(default)]
        usage: Option<Usage>,
    },
    /// A provider call failed and is tried again.
    Retry {
        /// The attempt that failed, from 1.
        attempt: u32,
        /// The most attempts there will be.
        max_attempts: u32,
        /// The wait before the next, in milliseconds.
        delay_ms: u64,
        /// What failed.
        error: Value,
    },
    /// The working context was compacted.
    Compaction {
        /// The first evicted seq.
        evicted_from_seq: u64,
        /// The last evicted seq.
        evicted_to_seq: u64,
        /// The estimate before.
        tokens_before: u64,
        /// The estimate after.
        tokens_after: u64,
    },
    /// An automatic compaction failed; the turn went on uncompacted.
    CompactionFailed {
        /// Why.
        error: Value,
    },
    /// How the run ended.
    Ended {
        /// How it ended.
        status: seri_core::RunStatus,
        /// Model turns taken.
        turns: u32,
        /// Tokens over all turns that reported usage; `None` (null) when
        /// none did.
        #[serde(default)]
        usage: Option<Usage>,
        /// The model's final text.
        result: Option<Value>,
        /// What went wrong.
        error: Option<Value>,
        /// The successor, when the session continued.
        continued_to: Option<SessionId>,
    },
}

impl TrajectoryRecord {
    /// The record's `kind`, as stored.
    pub fn kind(&self) -> &'static str {
        match self {
            TrajectoryRecord::ToolCall { .. } => "tool_call",
            TrajectoryRecord::ToolResult { .. } => "tool_result",
            TrajectoryRecord::Checkpoint { .. } => "checkpoint",
            TrajectoryRecord::Denial { .. } => "denial",
            TrajectoryRecord::Check { .. } => "check",
            TrajectoryRecord::Edit { .. } => "edit",
            TrajectoryRecord::Usage { .. } => "usage",
            TrajectoryRecord::Retry { .. } => "retry",
            TrajectoryRecord::Compaction { .. } => "compaction",
            TrajectoryRecord::CompactionFailed { .. } => "compaction_failed",
            TrajectoryRecord::Ended { .. } => "ended",
        }
    }
}

/// A record as stored: its number in the run, when it was written, and its
/// JSON (elided). [`StoredRecord::record`] decodes it; a kind a newer seri
/// wrote stays readable as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredRecord {
    /// 1, 2, 3, … in the order the run wrote them.
    pub ord: u64,
    /// When it was written.
    pub at: Timestamp,
    /// The record's kind.
    pub kind: String,
    /// The record as stored, `kind` included.
    pub data: Value,
}

impl StoredRecord {
    /// The typed record, unless a newer seri wrote a kind this build does not know.
    pub fn record(&self) -> Option<TrajectoryRecord> {
        serde_json::from_value(self.data.clone()).ok()
    }
}

/// A run's whole trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trajectory {
    /// What was in force.
    pub header: TrajectoryHeader,
    /// What happened, in order.
    pub records: Vec<StoredRecord>,
}

impl Trajectory {
    /// The `ended` record, if the run finished while recording.
    pub fn ended(&self) -> Option<TrajectoryRecord> {
        self.records.iter().rev().find(|r| r.kind == "ended").and_then(StoredRecord::record)
    }
}
