//! [`StreamEvent`]: a run's events as clients read them, one JSON object
//! each, told apart by `type`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::words::{ContinueReasonWord, RunStatusWord, UsageCounts};

/// What a run reports while it runs: one line of `--output-format
/// stream-json`, and the `event` of a `run-event` frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// A run began.
    RunStarted {
        /// The run.
        run_id: String,
        /// Its session.
        session_id: String,
    },
    /// The message the run answers was posted, once the run held the session.
    MessagePosted {
        /// The session.
        session_id: String,
        /// The message's event.
        event_id: String,
        /// Its seq.
        seq: u64,
    },
    /// Streamed answer text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// Streamed reasoning.
    ThinkingDelta {
        /// The text.
        text: String,
    },
    /// The provider failed and the call is tried again.
    Retrying {
        /// The attempt that failed, counting from 1.
        attempt: u32,
        /// The most attempts allowed.
        max_attempts: u32,
        /// How long until the next one, in milliseconds.
        delay_ms: u64,
        /// Why the attempt failed.
        error: String,
    },
    /// A model turn was recorded.
    Turn {
        /// Its usage; `null` when the provider reported none.
        usage: Option<UsageCounts>,
        /// The context window in force, in tokens.
        context_window: u64,
    },
    /// A tool is about to run.
    ToolStarted {
        /// The call.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments, as the model wrote them (`input` in Claude Code's
        /// stream).
        arguments: serde_json::Value,
    },
    /// A tool finished.
    ToolFinished {
        /// The call.
        id: String,
        /// The tool.
        name: String,
        /// Whether it failed or was refused.
        is_error: bool,
        /// The first line of its result.
        summary: String,
        /// Present (`true`) when a command ran and exited non-zero or was
        /// killed; `output` then holds the last lines it printed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command_failed: Option<bool>,
        /// What the failed command printed last.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// For a call that changed a file: a unified diff of the change.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
        /// What the call came to, as values: what its stored `tool_result`
        /// keeps (every key one word, so the same in both families).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<crate::view::ToolFactsView>)]
        facts: Option<seri_core::ToolFacts>,
    },
    /// The session continued into a successor.
    Continued {
        /// The successor.
        session_id: String,
        /// The edge.
        continuation_id: String,
        /// The successor's title.
        title: String,
        /// Why.
        reason: ContinueReasonWord,
    },
    /// The oldest part of the working context was replaced by a recap.
    Compacted {
        /// The first evicted seq.
        evicted_from_seq: u64,
        /// The last evicted seq.
        evicted_to_seq: u64,
        /// The estimate before, in tokens.
        tokens_before: u64,
        /// The estimate after.
        tokens_after: u64,
    },
    /// An automatic compaction failed; the turn goes on uncompacted.
    CompactionFailed {
        /// Why.
        error: String,
        /// The context size at which the next automatic attempt is made.
        retry_at_tokens: u64,
    },
    /// An automatic compaction at the trigger was skipped: no safe cut
    /// leaves four messages to evict (said once per session).
    CompactionSkipped {
        /// Why, in a sentence.
        reason: String,
    },
    /// A glob rule fired: its text was appended as a message.
    RuleFired {
        /// The rule file, as the model sees it.
        path: String,
        /// The file that fired it, relative to the project root.
        touched: String,
    },
    /// The glob rules could not be read for this run.
    RulesSkipped {
        /// Why.
        error: String,
    },
    /// A child run this run delegated to moved on.
    ChildProgress {
        /// The parent's `delegate` call the child answers.
        call_id: String,
        /// The child's session.
        session_id: String,
        /// Its title.
        title: String,
        /// Model turns it has recorded so far.
        turns: u32,
        /// The tool it started most recently.
        last_tool: Option<String>,
        /// How it ended, once it has.
        finished: Option<RunStatusWord>,
    },
    /// The run ended.
    RunFinished {
        /// The run.
        run_id: String,
        /// Its session.
        session_id: String,
        /// How it ended.
        status: RunStatusWord,
        /// Model turns taken; `null` when unknown: a run whose process
        /// stopped before it finished (`interrupted`), told by the store.
        turns: Option<u32>,
        /// Tokens over its turns that reported usage; `null` when none did.
        usage: Option<UsageCounts>,
        /// The model's final text, when it ended its turn.
        result: Option<String>,
        /// What went wrong.
        error: Option<String>,
    },
}

impl StreamEvent {
    /// The event as one JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}
