//! What a successful tool call hands back to the run loop.
//!
//! A failed call is a [`crate::ToolError`], whose text is the error result
//! the model reads. One failure carries more than text: a refusal by the
//! permission layer is `ToolError::Denied(denial)`, and the run loop
//! appends `denial.event(call_id)` (a `permission_denied` event with the
//! reason) right after the error result, in the same transaction, exactly
//! as it appends a [`ToolAction::Append`]'s events after a success. A
//! refusal is an error rather than an outcome with an error flag because
//! every other consumer of a call's result (a child run's parent, a test)
//! must treat it as a failure, and the type then says so.
//! [`crate::ToolError::denial`] finds it.

use seri_core::EventBody;

use crate::verbs::continue_session::ContinuationRequest;
use crate::verbs::delegate::DelegationRequest;

/// A successful call: the text the model reads and what the run loop does next.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The tool result's content.
    pub text: String,
    /// What the run loop does besides recording the call and its result.
    pub action: ToolAction,
}

impl ToolOutcome {
    /// A result with nothing more to do.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: text.into(), action: ToolAction::None }
    }
}

/// What the run loop does with a successful call, beyond writing the
/// tool_call/tool_result pair.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolAction {
    /// Nothing.
    None,
    /// Append these events to the calling session, in order, in the same
    /// transaction as the tool result (`status` gives a `StatusChanged`,
    /// `plan` a `PlanUpdated`).
    Append(Vec<EventBody>),
    /// Hand this to the continuation runtime, which creates the successor and
    /// ends the turn. Boxed: it is large and rare.
    Continue(Box<ContinuationRequest>),
    /// Start a child run for this task and make its answer the call's
    /// result. Boxed like `Continue`.
    Delegate(Box<DelegationRequest>),
    /// A typed child returns this value (checked against its parent's
    /// schema) and its run ends after the turn's calls.
    Return(serde_json::Value),
}
