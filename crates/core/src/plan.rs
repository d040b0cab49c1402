//! The plan: a checklist an agent keeps for its current work.

use serde::{Deserialize, Serialize};

use crate::id::RunId;

/// A checklist of steps, owned by the run that is working through it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The steps in order.
    pub steps: Vec<PlanStep>,
    /// The run working on the plan. A carried plan has none until the
    /// successor's run adopts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_run_id: Option<RunId>,
}

impl Plan {
    /// Whether any step is not done yet.
    pub fn has_unfinished_steps(&self) -> bool {
        self.steps.iter().any(|s| s.status != StepStatus::Done)
    }
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// What the step is, in a short sentence.
    pub text: String,
    /// How far along it is.
    pub status: StepStatus,
}

/// How far along a plan step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on now.
    InProgress,
    /// Finished.
    Done,
}
