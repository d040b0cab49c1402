//! The working context: the part of a session's events the model sees, as
//! provider-neutral request messages. Pure.
//!
//! The working context is the newest compaction recap (if any) and the
//! events from where it says the kept part starts; see
//! `seri_projection::compaction::WorkingContext`. This module turns it into
//! request messages, checks that tool calls and results pair up before a
//! request is sent, and finds calls a stopped run left unanswered.

use seri_core::{Attachment, Event, EventBody, ToolCallId};
use seri_projection::compaction::{ContextBody, WorkingContext};
use seri_providers::{AssistantTurn, ImageInput, RequestMessage};

/// The working context as request messages: the recap first (when the
/// session was compacted), then every message from where the recap says the
/// kept part starts. The grouping of events into messages is
/// `seri_projection::compaction::WorkingContext`'s; this only changes shape.
///
/// A user message's pictures become images through `image`, which loads
/// an attachment's bytes; one it cannot load is left out, and the model
/// still reads the message's `[attachment:…]` line.
pub fn request_messages(
    context: WorkingContext,
    image: impl Fn(&Attachment) -> Option<ImageInput>,
) -> Vec<RequestMessage> {
    let (recap, messages) = context.into_parts();
    // A plain map over the vector's own iterator: the messages are turned
    // into request messages in the memory they already have (a request
    // message is no larger), which for a long uncompacted history is most
    // of what a request costs.
    let mut messages: Vec<RequestMessage> = messages
        .into_iter()
        .map(|m| match m.body {
            ContextBody::User { text, images } => {
                RequestMessage::User { text, images: images.iter().filter_map(&image).collect() }
            }
            ContextBody::Assistant(turn) => RequestMessage::Assistant(AssistantTurn {
                thinking: turn.thinking,
                // An answer the person cut short says so, where it stops.
                text: if turn.interrupted {
                    format!("{}\n\n{}", turn.text, seri_prompt::text::results::ANSWER_INTERRUPTED)
                } else {
                    turn.text
                },
                tool_calls: turn.tool_calls,
            }),
            ContextBody::ToolResult(result) => RequestMessage::Tool(result),
        })
        .collect();
    if let Some(recap) = recap {
        messages.insert(0, RequestMessage::user(recap.message));
    }
    results_together(messages)
}

/// Each picture of `messages` replaced by a note the model reads, for a
/// provider that is sent no pictures (`provider` names it in the note).
pub fn pictures_as_notes(messages: &mut [RequestMessage], provider: &str) {
    for message in messages {
        let RequestMessage::User { text, images } = message else { continue };
        for image in images.drain(..) {
            let note = seri_prompt::PictureNotSent {
                attachment_id: image.attachment_id.as_str(),
                media_type: &image.media_type,
                provider,
            };
            text.push_str(&format!("\n{note}"));
        }
    }
}

/// The messages with every user message that sits among one turn's tool
/// results (the pictures a call returned, recorded right after its result)
/// moved to just after the turn's last result: OpenAI's API takes a turn's
/// results only as one unbroken run after the assistant's calls.
/// (Anthropic merges them into one user message either way.)
fn results_together(messages: Vec<RequestMessage>) -> Vec<RequestMessage> {
    if !has_user_among_results(&messages) {
        // Nothing to move (the common case): the vector as it is.
        return messages;
    }
    move_users_after_results(messages)
}

fn move_users_after_results(messages: Vec<RequestMessage>) -> Vec<RequestMessage> {
    let mut out: Vec<RequestMessage> = Vec::with_capacity(messages.len());
    let mut held = Vec::new();
    for message in messages {
        match message {
            RequestMessage::Tool(_) => out.push(message),
            RequestMessage::User { .. } if matches!(out.last(), Some(RequestMessage::Tool(_))) => held.push(message),
            other => {
                out.append(&mut held);
                out.push(other);
            }
        }
    }
    out.append(&mut held);
    out
}

/// Whether some user message sits between two results of one run of
/// results: what [`results_together`] moves.
fn has_user_among_results(messages: &[RequestMessage]) -> bool {
    let (mut in_results, mut user_after_result) = (false, false);
    for message in messages {
        match message {
            RequestMessage::Tool(_) if user_after_result => return true,
            RequestMessage::Tool(_) => in_results = true,
            RequestMessage::User { .. } if in_results => user_after_result = true,
            _ => (in_results, user_after_result) = (false, false),
        }
    }
    false
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
            | EventBody::ContextRewound(_)
            | EventBody::ModelChanged(_)
            | EventBody::PermissionModeChanged(_)
            | EventBody::SandboxChanged(_)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(id: &str) -> RequestMessage {
        RequestMessage::tool_result(id, "t", "ok", false)
    }

    #[test]
    fn a_provider_sent_no_pictures_reads_a_note_in_each_ones_place() {
        let image = |id: &str| ImageInput {
            attachment_id: id.to_owned(),
            media_type: "image/png".to_owned(),
            bytes: 8,
            data: vec![0; 8],
        };
        let mut messages =
            vec![RequestMessage::User { text: "look".to_owned(), images: vec![image("a1"), image("a2")] }, tool("c1")];
        pictures_as_notes(&mut messages, "ollama");
        let RequestMessage::User { text, images } = &messages[0] else { panic!("{messages:?}") };
        assert!(images.is_empty());
        assert_eq!(
            text,
            "look\n[attachment:a1 is a picture (image/png) that you are not shown: seri sends no images to ollama]\n\
             [attachment:a2 is a picture (image/png) that you are not shown: seri sends no images to ollama]"
        );
    }

    fn shape(messages: &[RequestMessage]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match m {
                RequestMessage::User { text, .. } => format!("user:{text}"),
                RequestMessage::Assistant(_) => "assistant".to_owned(),
                RequestMessage::Tool(r) => format!("tool:{}", r.tool_call_id.as_str()),
            })
            .collect()
    }

    #[test]
    fn user_messages_among_a_turns_results_follow_its_last_result() {
        let messages = vec![
            RequestMessage::user("ask"),
            RequestMessage::assistant_text(""),
            tool("a"),
            RequestMessage::user("pictures of a"),
            tool("b"),
            RequestMessage::user("pictures of b"),
            RequestMessage::assistant_text("done"),
            RequestMessage::user("next"),
        ];
        assert_eq!(
            shape(&results_together(messages)),
            [
                "user:ask",
                "assistant",
                "tool:a",
                "tool:b",
                "user:pictures of a",
                "user:pictures of b",
                "assistant",
                "user:next"
            ]
        );
        let tail = vec![RequestMessage::assistant_text(""), tool("a"), RequestMessage::user("pictures")];
        assert_eq!(shape(&results_together(tail)), ["assistant", "tool:a", "user:pictures"]);
    }

    #[test]
    fn the_quick_check_finds_exactly_what_moving_would_change() {
        // Every sequence of up to seven user, assistant and tool messages.
        for len in 0..=7u32 {
            for code in 0..3usize.pow(len) {
                let messages: Vec<RequestMessage> = (0..len)
                    .map(|i| match code / 3usize.pow(i) % 3 {
                        0 => RequestMessage::user("u"),
                        1 => RequestMessage::assistant_text("a"),
                        _ => tool("t"),
                    })
                    .collect();
                let moved = move_users_after_results(messages.clone());
                assert_eq!(has_user_among_results(&messages), moved != messages, "{:?}", shape(&messages));
            }
        }
    }
}
