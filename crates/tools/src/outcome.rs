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
//! A tool that runs a command (`bash`) also reports what it came to as
//! [`CommandFacts`] (how it exited, how long it ran), so the run loop
//! records a check from values rather than by reading the text back; a
//! command killed at its timeout reports them through
//! [`crate::ToolError::facts`], since that call fails.
//!
//! The two requests a verb hands on for the run loop to carry out,
//! [`ContinuationRequest`] and [`DelegationRequest`], live here beside the
//! outcome that carries them, so the outcome depends on no verb and every
//! verb on the outcome.

use std::time::Duration;

use seri_core::{ContinueReason, EventBody, EventId, Handoff, Plan, PlanTransfer, Seq, Source};

use crate::result_schema::ResultSchema;

/// A successful call: the text the model reads and what the run loop does next.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The tool result's content.
    pub text: String,
    /// What the run loop does besides recording the call and its result.
    pub action: ToolAction,
    /// What the command the call ran came to, for a tool that runs one;
    /// `None` for every other tool.
    pub facts: Option<CommandFacts>,
    /// Pictures the call returned (an MCP tool's image content). The run
    /// loop stores each as an attachment of the session and shows them to
    /// the model in a message right after the results of the turn.
    pub images: Vec<ToolImage>,
    /// What changed, for a person (a unified diff of the file a call
    /// wrote); the model reads `text` only.
    pub change: Option<String>,
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
        Self { text: text.into(), action, facts: None, images: Vec::new(), change: None }
    }

    /// The same outcome, reporting what its command came to.
    pub fn with_facts(self, facts: CommandFacts) -> Self {
        Self { facts: Some(facts), ..self }
    }

    /// The same outcome, showing a person `change` (a diff).
    pub fn with_change(self, change: String) -> Self {
        Self { change: (!change.is_empty()).then_some(change), ..self }
    }

    /// The same outcome with pictures the call returned.
    pub fn with_images(self, images: Vec<ToolImage>) -> Self {
        Self { images, ..self }
    }
}

/// What a command came to, as values: the text the model reads says the
/// same in words, but nothing parses it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandFacts {
    /// How it ended.
    pub exit: CommandExit,
    /// How long it ran: from its start until it exited, or until it was
    /// killed at its timeout.
    pub duration: Duration,
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandExit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It ran past its timeout, and its process group was killed.
    TimedOut,
    /// It ended, but the system reported neither a code nor a signal.
    NoStatus,
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
