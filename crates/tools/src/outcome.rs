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
//!
//! A tool also reports what its call came to as [`ToolFacts`] (how a
//! command exited and how long it ran, a file change's diff, a read's
//! size), which the run loop stores in the `tool_result` beside the text, so
//! clients and the run loop's own records read values rather than the
//! text; a command killed at its timeout reports them through
//! [`crate::ToolError::facts`], since that call fails.
//!
//! The two requests a verb hands on for the run loop to carry out,
//! [`ContinuationRequest`] and [`DelegationRequest`], live here beside the
//! outcome that carries them, so the outcome depends on no verb and every
//! verb on the outcome.

use seri_core::{ContinueReason, EventBody, EventId, Handoff, Plan, PlanTransfer, Seq, Source, ToolFacts};

use crate::result_schema::ResultSchema;

/// A successful call: the text the model reads and what the run loop does next.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The tool result's content.
    pub text: String,
    /// What the run loop does besides recording the call and its result.
    pub action: ToolAction,
    /// What the call came to, as values (stored with the result for
    /// clients; the model reads `text` only). `None` for a tool that
    /// reports none.
    pub facts: Option<ToolFacts>,
    /// Pictures the call returned (an MCP tool's image content). The run
    /// loop stores each as an attachment of the session and shows them to
    /// the model in a message right after the results of the turn.
    pub images: Vec<ToolImage>,
}

/// A picture a tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolImage {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The picture.
    pub data: Vec<u8>,
}

impl ToolOutcome {
    /// A result with nothing more to do.
    pub fn text(text: impl Into<String>) -> Self {
        Self::with_action(text, ToolAction::None)
    }

    /// A result and what the run loop does next.
    pub fn with_action(text: impl Into<String>, action: ToolAction) -> Self {
        Self { text: text.into(), action, facts: None, images: Vec::new() }
    }

    /// The same outcome, reporting what the call came to.
    pub fn with_facts(self, facts: ToolFacts) -> Self {
        Self { facts: Some(facts), ..self }
    }

    /// The diff of the file the call changed, if it changed one.
    pub fn change(&self) -> Option<&str> {
        self.facts.as_ref().and_then(ToolFacts::diff)
    }

    /// The same outcome with pictures the call returned.
    pub fn with_images(self, images: Vec<ToolImage>) -> Self {
        Self { images, ..self }
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

/// A valid `continue_session` call, checked against the session: everything
/// the continuation runtime needs to create the successor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuationRequest {
    /// Why.
    pub reason: ContinueReason,
    /// The successor's title (title source `agent`).
    pub title: String,
    /// The successor's description.
    pub description: String,
    /// The handoff, extra keys normalised.
    pub handoff: Handoff,
    /// Exact pointers: threads by full id, memory paths canonical.
    pub sources: Vec<Source>,
    /// What happens to the plan, resolved: `carry` when the model said so or
    /// when it said nothing and the plan has unfinished steps.
    pub plan_transfer: PlanTransfer,
    /// For `carry`: the plan to give the successor, its owner cleared so the
    /// successor's run adopts it.
    pub carried_plan: Option<Plan>,
    /// The message the successor answers: the newest one written by a person
    /// or a trigger.
    pub initiating_event_id: EventId,
    /// Its seq in this session.
    pub initiating_seq: Seq,
    /// Only estimate what the continuation would carry; create nothing.
    pub dry_run: bool,
}

/// A valid `delegate` call: what the run loop needs to start the child.
#[derive(Debug, Clone, PartialEq)]
pub struct DelegationRequest {
    /// The task, trimmed: the child's first message.
    pub task: String,
    /// The child session's title: the task's first line, cut to
    /// [`MAX_CHILD_TITLE_CHARS`](crate::verbs::delegate::MAX_CHILD_TITLE_CHARS).
    pub title: String,
    /// The tools the child may use, by name, when the call narrowed them;
    /// checked against the registry by [`ToolRegistry::for_child`](crate::ToolRegistry::for_child).
    pub tools: Option<Vec<String>>,
    /// For a typed child: the schema `return_result` checks its value against.
    pub result_schema: Option<ResultSchema>,
}

impl DelegationRequest {
    /// Whether the child is typed (must end with `return_result`).
    pub fn is_typed(&self) -> bool {
        self.result_schema.is_some()
    }
}
