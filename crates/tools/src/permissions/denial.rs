//! A refused action: what the model reads, and the `permission_denied`
//! event the run loop records for it.

use seri_core::{DenialReason, EventBody, PermissionDenied, ToolCallId};

/// A call the permission layer refused.
///
/// Its `Display` is the error result the model reads: what was refused, why,
/// and what to do instead. [`Denial::event`] is what the run loop appends
/// after that result, so the refusal is kept with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// The tool.
    pub tool: String,
    /// Why.
    pub reason: DenialReason,
    /// What was refused and by which rule, in one sentence.
    pub detail: String,
    /// What the person said to do instead, when they said something.
    pub instead: Option<String>,
}

impl Denial {
    /// The event to append after the call's error result.
    pub fn event(&self, tool_call_id: ToolCallId) -> EventBody {
        EventBody::PermissionDenied(PermissionDenied {
            tool_call_id,
            tool: self.tool.clone(),
            reason: self.reason,
            detail: self.detail.clone(),
        })
    }
}

impl std::fmt::Display for Denial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(words) = &self.instead {
            return write!(
                f,
                "permission denied: {} and said instead: {words}. Do not retry this call: do what the person said.",
                self.detail
            );
        }
        let advice = match self.reason {
            DenialReason::User => {
                "The person said no: do not retry this call. Ask them what they want instead, or take another approach."
            }
            DenialReason::Policy => {
                "This run's permissions do not allow it: do not retry. Take another approach, or say what you needed it for."
            }
            DenialReason::OutsideWorkspace => {
                "Work inside the working directory, or ask the person to allow this path and say why you need it."
            }
            DenialReason::Hook => {
                "A hook the person configured refused it: do what the hook's words ask, or take another approach."
            }
            DenialReason::PlanMode => {
                "Do not retry it in plan mode: read what you need, then end your turn with your plan. The person approves it and leaves plan mode, or asks for changes."
            }
        };
        write!(f, "permission denied: {}. {advice}", self.detail)
    }
}

impl std::error::Error for Denial {}
