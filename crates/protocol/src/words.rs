//! The closed words of the run vocabulary and the usage figures, each
//! mapped from the engine's own type once.

use serde::{Deserialize, Serialize};
use seri_core::{ContinueReason, RunStatus, Usage};
use utoipa::ToSchema;

/// How a task (a message and the runs that answered it) ended: the
/// headless contract's three words. A cancelled, interrupted or missing run
/// did not finish, so it is `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The model ended its turn (or the session continued and the
    /// successor's did).
    Succeeded,
    /// The turn budget ran out first.
    MaxTurns,
    /// Anything else: a failure, a cancellation, nothing run.
    Failed,
}

impl TaskStatus {
    /// The word for a task whose last run ended with `status` (`None`:
    /// nothing ran).
    pub fn of(status: Option<RunStatus>) -> Self {
        match status {
            Some(RunStatus::Succeeded) => TaskStatus::Succeeded,
            Some(RunStatus::MaxTurns) => TaskStatus::MaxTurns,
            Some(RunStatus::Failed | RunStatus::Cancelled | RunStatus::Running | RunStatus::Interrupted) | None => {
                TaskStatus::Failed
            }
        }
    }

    /// The word itself.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Succeeded => "succeeded",
            TaskStatus::MaxTurns => "max_turns",
            TaskStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a run is, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatusWord {
    /// It holds its session and has not finished.
    Running,
    /// The model ended its turn, or the session continued.
    Succeeded,
    /// The turn budget ran out first.
    MaxTurns,
    /// A provider, tool-pairing or store error ended it.
    Failed,
    /// Someone cancelled it.
    Cancelled,
    /// Its process stopped before it finished.
    Interrupted,
}

impl From<RunStatus> for RunStatusWord {
    fn from(status: RunStatus) -> Self {
        match status {
            RunStatus::Running => Self::Running,
            RunStatus::Succeeded => Self::Succeeded,
            RunStatus::MaxTurns => Self::MaxTurns,
            RunStatus::Failed => Self::Failed,
            RunStatus::Cancelled => Self::Cancelled,
            RunStatus::Interrupted => Self::Interrupted,
        }
    }
}

/// Where a message's job of the shared queue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStateWord {
    /// Waiting for a server (accepted; or handed back by a server that stopped).
    Queued,
    /// A server is answering it (or waiting for its session's older messages).
    Running,
    /// Answered, or failed saying why: see `outcome`.
    Done,
}

/// Why a session continued into a successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContinueReasonWord {
    /// The person changed subject.
    TopicChange,
    /// A phase of the work ended.
    PhaseChange,
    /// The conversation drifted; a clean start on the same work.
    Refocus,
    /// The context is getting full.
    ContextPressure,
    /// The person asked for it.
    UserRequest,
}

impl From<ContinueReason> for ContinueReasonWord {
    fn from(reason: ContinueReason) -> Self {
        match reason {
            ContinueReason::TopicChange => Self::TopicChange,
            ContinueReason::PhaseChange => Self::PhaseChange,
            ContinueReason::Refocus => Self::Refocus,
            ContinueReason::ContextPressure => Self::ContextPressure,
            ContinueReason::UserRequest => Self::UserRequest,
        }
    }
}

/// Tokens a provider billed, as the stream-json family spells them (the
/// scripted provider's `usage` reads the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct UsageCounts {
    /// Uncached input.
    pub input: u64,
    /// Input read from the provider's cache.
    pub cache_read: u64,
    /// Input written to the provider's cache.
    pub cache_write: u64,
    /// Output.
    pub output: u64,
}

impl From<Usage> for UsageCounts {
    fn from(usage: Usage) -> Self {
        Self { input: usage.input, cache_read: usage.cache_read, cache_write: usage.cache_write, output: usage.output }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_the_engine_words() {
        for status in [
            RunStatus::Running,
            RunStatus::Succeeded,
            RunStatus::MaxTurns,
            RunStatus::Failed,
            RunStatus::Cancelled,
            RunStatus::Interrupted,
        ] {
            let word = serde_json::to_value(RunStatusWord::from(status)).unwrap_or_default();
            assert_eq!(word, status.as_str(), "{status:?}");
        }
        assert_eq!(TaskStatus::of(Some(RunStatus::MaxTurns)).to_string(), "max_turns");
        assert_eq!(serde_json::to_value(TaskStatus::of(None)).unwrap_or_default(), "failed");
        for reason in seri_core::ContinueReason::ALL {
            let word = serde_json::to_value(ContinueReasonWord::from(reason)).unwrap_or_default();
            assert_eq!(word, serde_json::to_value(reason).unwrap_or_default());
        }
    }
}
