//! `<plan_state>`: the session's checklist as the viewing run should read it,
//! including whether that run owns it.

use std::fmt;

use seri_core::{Plan, RunId, StepStatus};

use crate::escape::escape_text;

/// The `<plan_state>` block, as seen by one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanState<'a> {
    /// The session's plan, if it has one.
    pub plan: Option<&'a Plan>,
    /// The run the request is for; ownership is shown relative to it so the
    /// block holds no ids.
    pub viewer: Option<RunId>,
}

impl<'a> PlanState<'a> {
    /// The block for a plan and the run that will read it.
    pub fn new(plan: Option<&'a Plan>, viewer: Option<RunId>) -> Self {
        Self { plan, viewer }
    }
}

/// The word a step's status is written with: the same as the `plan` tool's input.
pub const fn step_status_word(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Pending => "pending",
        StepStatus::InProgress => "in_progress",
        StepStatus::Done => "done",
    }
}

impl fmt::Display for PlanState<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(plan) = self.plan.filter(|p| !p.steps.is_empty()) else {
            return f.write_str("<plan_state>No plan.</plan_state>");
        };
        let (owner, note) = match (plan.owner_run_id, self.viewer) {
            (Some(owner), Some(viewer)) if owner == viewer => ("you", None),
            (Some(_), _) => ("another run", Some("Another run wrote this plan; your next plan call takes it over.")),
            (None, _) => ("none", Some("No run owns this plan yet; your next plan call adopts it.")),
        };
        writeln!(f, "<plan_state owner=\"{owner}\">")?;
        for (n, step) in plan.steps.iter().enumerate() {
            writeln!(f, "{}. [{}] {}", n + 1, step_status_word(step.status), escape_text(&step.text))?;
        }
        if let Some(note) = note {
            writeln!(f, "{note}")?;
        }
        f.write_str("</plan_state>")
    }
}
