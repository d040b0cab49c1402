//! [`StreamEvent`]: a run's events as clients read them, one JSON object
//! each, told apart by `type`.

use serde::{Deserialize, Serialize};
use seri_runloop::RunEvent;
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
    /// An automatic compaction was not started: it could not bring the
    /// context under the trigger.
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
    /// The event clients read for `event`: every conversion of a run's
    /// events to the wire is here.
    pub fn of(event: &RunEvent) -> Self {
        match event {
            RunEvent::RunStarted { run_id, session_id } => {
                Self::RunStarted { run_id: run_id.to_string(), session_id: session_id.to_string() }
            }
            RunEvent::TextDelta(text) => Self::TextDelta { text: text.clone() },
            RunEvent::ThinkingDelta(text) => Self::ThinkingDelta { text: text.clone() },
            RunEvent::Retrying(notice) => Self::Retrying {
                attempt: notice.attempt,
                max_attempts: notice.max_attempts,
                delay_ms: u64::try_from(notice.delay.as_millis()).unwrap_or(u64::MAX),
                error: notice.error.to_string(),
            },
            RunEvent::TurnRecorded { usage, window } => {
                Self::Turn { usage: usage.map(UsageCounts::from), context_window: *window }
            }
            RunEvent::ToolStarted { id, name } => Self::ToolStarted { id: id.to_string(), name: name.clone() },
            RunEvent::ToolFinished { id, name, is_error, summary, failed_output, change, facts } => {
                Self::ToolFinished {
                    id: id.to_string(),
                    name: name.clone(),
                    is_error: *is_error,
                    summary: summary.clone(),
                    command_failed: failed_output.as_ref().map(|_| true),
                    output: failed_output.clone(),
                    diff: change.clone(),
                    facts: facts.clone(),
                }
            }
            RunEvent::MessagePosted { session_id, event_id, seq } => Self::MessagePosted {
                session_id: session_id.to_string(),
                event_id: event_id.to_string(),
                seq: seq.get(),
            },
            RunEvent::Continued(to) => Self::Continued {
                session_id: to.session_id.to_string(),
                continuation_id: to.continuation_id.to_string(),
                title: to.title.clone(),
                reason: to.reason.into(),
            },
            RunEvent::Compacted { evicted_from_seq, evicted_to_seq, tokens_before, tokens_after } => Self::Compacted {
                evicted_from_seq: evicted_from_seq.get(),
                evicted_to_seq: evicted_to_seq.get(),
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
            },
            RunEvent::CompactionFailed { error, retry_at_tokens } => {
                Self::CompactionFailed { error: error.clone(), retry_at_tokens: *retry_at_tokens }
            }
            RunEvent::CompactionSkipped { reason } => Self::CompactionSkipped { reason: reason.clone() },
            RunEvent::RuleFired { path, touched } => Self::RuleFired { path: path.clone(), touched: touched.clone() },
            RunEvent::RulesSkipped { error } => Self::RulesSkipped { error: error.clone() },
            RunEvent::ChildProgress(p) => Self::ChildProgress {
                call_id: p.call_id.to_string(),
                session_id: p.session_id.to_string(),
                title: p.title.clone(),
                turns: p.turns,
                last_tool: p.last_tool.clone(),
                finished: p.finished.map(RunStatusWord::from),
            },
            RunEvent::RunFinished(o) => Self::RunFinished {
                run_id: o.run_id.to_string(),
                session_id: o.session_id.to_string(),
                status: o.status.into(),
                turns: Some(o.turns),
                usage: o.usage.map(UsageCounts::from),
                result: o.result.clone(),
                error: o.error.clone(),
            },
        }
    }

    /// The `run_finished` of a run that ended without its process saying
    /// so (it was killed, its machine went away), as the store recorded
    /// its end (`interrupted`): what a client watching the run is told
    /// once another process found it gone. `None` while it is recorded
    /// running. Its turns and usage are unknown (`null`), its error the
    /// store's.
    pub fn recorded_end(run: &seri_store::RunRecord) -> Option<Self> {
        if run.status == seri_core::RunStatus::Running {
            return None;
        }
        let field = |key: &str| run.result.as_ref().and_then(|r| r.get(key));
        Some(Self::RunFinished {
            run_id: run.id.to_string(),
            session_id: run.session_id.to_string(),
            status: run.status.into(),
            turns: field("turns").and_then(serde_json::Value::as_u64).and_then(|t| u32::try_from(t).ok()),
            usage: None,
            result: field("result").and_then(serde_json::Value::as_str).map(str::to_owned),
            error: field("error").and_then(serde_json::Value::as_str).map(str::to_owned),
        })
    }

    /// The event as one JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}
