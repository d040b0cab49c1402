//! The working context: the part of a session's events the model sees, as
//! provider-neutral request messages. Pure.
//!
//! Events map to messages like this:
//! - a user-role `message` (person, trigger, or the runtime's own projection
//!   or recap) is one user message;
//! - consecutive `thinking`, assistant `message` and `tool_call` events form
//!   one assistant turn, in that order;
//! - a `tool_result` is one tool message;
//! - status, plan and unknown events are not part of the conversation.

use seri_core::{Event, EventBody, Role, ToolCallId};
use seri_providers::{AssistantTurn, RequestMessage};

/// Builds request messages from events in seq order.
pub fn request_messages<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<RequestMessage> {
    let mut messages = Vec::new();
    let mut turn: Option<AssistantTurn> = None;
    for event in events {
        match &event.body {
            EventBody::Thinking(thinking) => open_turn(&mut messages, &mut turn, true).thinking.push(thinking.clone()),
            EventBody::Message(m) if m.role == Role::Assistant => {
                open_turn(&mut messages, &mut turn, true).text = m.content.clone();
            }
            EventBody::ToolCall(call) => open_turn(&mut messages, &mut turn, false).tool_calls.push(call.clone()),
            EventBody::Message(m) => {
                flush(&mut messages, &mut turn);
                messages.push(RequestMessage::user(m.content.clone()));
            }
            EventBody::ToolResult(result) => {
                flush(&mut messages, &mut turn);
                messages.push(RequestMessage::Tool(result.clone()));
            }
            EventBody::StatusChanged(_)
            | EventBody::PlanUpdated(_)
            | EventBody::PermissionDenied(_)
            | EventBody::ContextCompacted(_)
            | EventBody::Unknown { .. } => {}
        }
    }
    flush(&mut messages, &mut turn);
    messages
}

/// The assistant turn being gathered. Thinking or text after the turn
/// already has text or calls can only start a new turn (a turn is thinking,
/// then text, then calls), so `starts_turn` flushes the old one first.
fn open_turn<'t>(
    messages: &mut Vec<RequestMessage>,
    turn: &'t mut Option<AssistantTurn>,
    starts_turn: bool,
) -> &'t mut AssistantTurn {
    if starts_turn && turn.as_ref().is_some_and(|t| !t.text.is_empty() || !t.tool_calls.is_empty()) {
        flush(messages, turn);
    }
    turn.get_or_insert_with(AssistantTurn::default)
}

fn flush(messages: &mut Vec<RequestMessage>, turn: &mut Option<AssistantTurn>) {
    if let Some(turn) = turn.take() {
        messages.push(RequestMessage::Assistant(turn));
    }
}

/// The tool calls at the end of a transcript that have no result yet: what
/// a run that stopped mid-tool (a crash, a killed process) leaves behind.
pub fn unanswered_calls(events: &[Event]) -> Vec<seri_core::ToolCall> {
    let mut pending: Vec<seri_core::ToolCall> = Vec::new();
    for event in events {
        match &event.body {
            EventBody::ToolCall(call) => pending.push(call.clone()),
            EventBody::ToolResult(result) => pending.retain(|c| c.id != result.tool_call_id),
            EventBody::Message(_) | EventBody::Thinking(_) => {
                // Anything the conversation says after a call settles nothing,
                // but a new turn means the old calls were abandoned earlier
                // and already reported by the pairing check; keep them.
            }
            EventBody::StatusChanged(_)
            | EventBody::PlanUpdated(_)
            | EventBody::PermissionDenied(_)
            | EventBody::ContextCompacted(_)
            | EventBody::Unknown { .. } => {}
        }
    }
    pending
}

/// A request whose tool calls and results do not pair up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingError {
    /// A tool result answers a call that is not the next unanswered one.
    #[error("tool result for call `{id}` has no matching call before it (message {index})")]
    OrphanResult {
        /// The result's call id.
        id: ToolCallId,
        /// Index of the message in the request.
        index: usize,
    },
    /// A tool call is followed by something other than its result.
    #[error("tool call `{id}` has no result before message {index}")]
    MissingResult {
        /// The call's id.
        id: ToolCallId,
        /// Index of the first message that should have been its result.
        index: usize,
    },
}

/// Checks that every tool result follows its call and every call gets its
/// result, in order, before the conversation moves on.
///
/// Providers reject a request that breaks this with a 400 that no retry can
/// fix, which would kill the session for good; catching it here names the
/// call instead. A trailing user message after the results (the per-turn
/// blocks) is fine; an unanswered call at the very end is not, because the
/// request would ask the model to continue past a call with no result.
pub fn check_pairing(messages: &[RequestMessage]) -> Result<(), PairingError> {
    let mut pending: std::collections::VecDeque<&ToolCallId> = std::collections::VecDeque::new();
    for (index, message) in messages.iter().enumerate() {
        match message {
            RequestMessage::Tool(result) => match pending.pop_front() {
                Some(id) if *id == result.tool_call_id => {}
                Some(id) => return Err(PairingError::MissingResult { id: id.clone(), index }),
                None => return Err(PairingError::OrphanResult { id: result.tool_call_id.clone(), index }),
            },
            RequestMessage::User { .. } | RequestMessage::Assistant(_) => {
                if let Some(id) = pending.front() {
                    return Err(PairingError::MissingResult { id: (*id).clone(), index });
                }
                if let RequestMessage::Assistant(turn) = message {
                    pending.extend(turn.tool_calls.iter().map(|c| &c.id));
                }
            }
        }
    }
    match pending.front() {
        Some(id) => Err(PairingError::MissingResult { id: (*id).clone(), index: messages.len() }),
        None => Ok(()),
    }
}
