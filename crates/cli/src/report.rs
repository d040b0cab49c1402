//! What a finished task reports: the outcomes of its runs (the session's
//! own, then any successor's it followed) summed into one answer, in the
//! shape of the headless JSON contract.

use serde::Serialize;
use seri_core::{SessionId, Usage};
use seri_runloop::RunOutcome;

/// `seri -p … --output-format json`: exactly these fields (the contract).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TaskReport {
    /// The session the message was sent to.
    pub(crate) session_id: SessionId,
    /// The final answer, from whichever session gave it.
    pub(crate) result: Option<String>,
    /// The newest successor the task continued into, if any.
    pub(crate) continued_to_session_id: Option<SessionId>,
    /// How the task ended.
    pub(crate) status: TaskStatus,
    /// Model turns over all runs.
    pub(crate) turns: u32,
    /// Tokens over all runs that reported usage; null when none did.
    #[serde(serialize_with = "usage_counts")]
    pub(crate) usage: Option<Usage>,
    /// What went wrong, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// How long the task took, from its start to its end, in milliseconds
    /// (as Claude Code's result says it). Said by stream-json's `result`
    /// line only: the JSON output keeps exactly the contract's fields.
    #[serde(skip)]
    pub(crate) duration_ms: u64,
    /// What its usage cost at the prices in `config.json` (`prices`), in
    /// the prices' currency; null when a model has no price there or no
    /// usage was reported: unknown, not zero. stream-json's `result` only.
    #[serde(skip)]
    pub(crate) total_cost_usd: Option<f64>,
    /// A `UserPromptSubmit` hook blocked the message: what it said, shown
    /// whole to the person (the JSON output says it in `error`).
    #[serde(skip)]
    pub(crate) blocked_by_hook: Option<String>,
}

/// How a headless task ended: the contract's three words, mapped from a
/// run's status once, in the protocol crate (the server answers with them
/// too).
pub(crate) use seri_protocol::TaskStatus;

/// `usage` as the headless output spells it: snake_case like every other
/// key of the document.
fn usage_counts<S: serde::Serializer>(usage: &Option<Usage>, to: S) -> Result<S::Ok, S::Error> {
    usage.map(seri_protocol::UsageCounts::from).serialize(to)
}

impl TaskReport {
    /// A task that ended before any outcome: the store or the session
    /// could not be used. Nothing was answered, and `error` says why.
    pub(crate) fn failed(session_id: SessionId, error: String) -> Self {
        TaskReport {
            session_id,
            result: None,
            continued_to_session_id: None,
            status: TaskStatus::Failed,
            turns: 0,
            usage: None,
            error: Some(error),
            duration_ms: 0,
            total_cost_usd: None,
            blocked_by_hook: None,
        }
    }

    /// Sums the outcomes of one task's runs, in the order they ended.
    pub(crate) fn of(session_id: SessionId, outcomes: &[RunOutcome]) -> Self {
        let usage = outcomes.iter().fold(None, |total, o| Usage::add_reported(total, o.usage));
        let last = outcomes.last();
        let status = TaskStatus::of(last.map(|o| o.status));
        TaskReport {
            session_id,
            result: last.and_then(|o| o.result.clone()),
            continued_to_session_id: outcomes.iter().rev().find_map(|o| o.continued_to.as_ref().map(|c| c.session_id)),
            status,
            turns: outcomes.iter().map(|o| o.turns).sum(),
            usage,
            error: last.and_then(|o| o.error.clone()).or_else(|| last.is_none().then(|| "nothing ran".to_owned())),
            duration_ms: 0,
            total_cost_usd: None,
            blocked_by_hook: last.and_then(|o| o.blocked_by_hook.clone()),
        }
    }

    /// The report with how long its task took and what it cost at `price`
    /// (none: unknown).
    pub(crate) fn timed_and_priced(self, took: std::time::Duration, price: Option<&crate::config::Price>) -> Self {
        TaskReport {
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            total_cost_usd: price.zip(self.usage).map(|(price, usage)| price.of(&usage)),
            ..self
        }
    }

    /// This report (the runs that answered a recovered successor's waiting
    /// message) followed by `next`, the task sent on to `successor`: one
    /// report of the session the person opened, naming where the answer
    /// went.
    pub(crate) fn then(self, next: TaskReport, successor: SessionId) -> TaskReport {
        TaskReport {
            session_id: self.session_id,
            continued_to_session_id: next.continued_to_session_id.or(Some(successor)),
            turns: self.turns + next.turns,
            usage: Usage::add_reported(self.usage, next.usage),
            ..next
        }
    }

    /// Whether the task finished (exit 0).
    pub(crate) fn succeeded(&self) -> bool {
        self.status == TaskStatus::Succeeded
    }
}
