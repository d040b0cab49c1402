//! The engine's and the store's types turned into the wire's, every
//! conversion in one place (as rust-analyzer's `to_proto.rs`), behind the
//! `engine` feature: a client that only reads the wire depends on
//! `seri-core` alone and never compiles the run loop or a database driver.

use seri_runloop::RunEvent;

use crate::stream::StreamEvent;
use crate::words::{JobStateWord, RunStatusWord, TaskStatus, UsageCounts};

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
            RunEvent::ToolStarted { id, name, arguments } => {
                Self::ToolStarted { id: id.to_string(), name: name.clone(), arguments: arguments.clone() }
            }
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
            RunEvent::Compacted { evicted_from_seq, evicted_to_seq, tokens_before, tokens_after, .. } => {
                Self::Compacted {
                    evicted_from_seq: evicted_from_seq.get(),
                    evicted_to_seq: evicted_to_seq.get(),
                    tokens_before: *tokens_before,
                    tokens_after: *tokens_after,
                }
            }
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
        let recorded = run.result.clone().unwrap_or_default();
        Some(Self::RunFinished {
            run_id: run.id.to_string(),
            session_id: run.session_id.to_string(),
            status: run.status.into(),
            turns: recorded.turns,
            usage: None,
            result: recorded.result,
            error: recorded.error,
        })
    }
}

impl From<seri_store::JobState> for JobStateWord {
    fn from(state: seri_store::JobState) -> Self {
        match state {
            seri_store::JobState::Queued => Self::Queued,
            seri_store::JobState::Running => Self::Running,
            seri_store::JobState::Done => Self::Done,
        }
    }
}

impl From<seri_store::JobStatus> for TaskStatus {
    fn from(status: seri_store::JobStatus) -> Self {
        match status {
            seri_store::JobStatus::Succeeded => Self::Succeeded,
            seri_store::JobStatus::MaxTurns => Self::MaxTurns,
            seri_store::JobStatus::Failed => Self::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use seri_core::RunStatus;

    use super::*;

    #[test]
    fn a_stored_job_status_is_the_task_status_of_its_run() {
        let all = [
            RunStatus::Running,
            RunStatus::Succeeded,
            RunStatus::MaxTurns,
            RunStatus::Failed,
            RunStatus::Cancelled,
            RunStatus::Interrupted,
        ];
        for status in all.into_iter().map(Some).chain([None]) {
            assert_eq!(TaskStatus::from(seri_store::JobStatus::of(status)), TaskStatus::of(status), "{status:?}");
            let word = serde_json::to_value(seri_store::JobStatus::of(status)).unwrap_or_default();
            assert_eq!(word, serde_json::to_value(TaskStatus::of(status)).unwrap_or_default(), "{status:?}");
        }
    }
}
