//! The context-size estimate that decides when to compact and what the
//! context meter shows before the first billed figure arrives.
//!
//! The estimate is the larger of two numbers: the prompt size the provider
//! last billed, and a local count of `ceil(characters / 4)` over message text,
//! thinking, and JSON-serialised tool arguments and results. The local count
//! catches a history that grew since the last bill; the billed figure catches
//! what the local count misses (system prompt, tool schemas, images).

use crate::event::EventBody;

/// Characters per token in the local estimate.
pub const CHARS_PER_TOKEN: u64 = 4;

/// Characters of an event that the model reads. Status, plan and
/// permission-denial events are not part of the conversation and count zero
/// (a denial's text reaches the model as its call's error result). A
/// compaction counts its
/// [`recap_text`](crate::compaction::ContextCompacted::recap_text), which
/// the working context shows in place of the events it replaced (the frame
/// around it, added by `seri-projection`, is not counted here).
pub fn model_visible_chars(body: &EventBody) -> u64 {
    let chars = |s: &str| s.chars().count() as u64;
    match body {
        EventBody::Message(m) => chars(&m.content) + m.attachments.iter().map(attachment_chars).sum::<u64>(),
        EventBody::Thinking(t) => chars(&t.text),
        EventBody::ToolCall(c) => chars(&c.arguments.to_string()),
        EventBody::ToolResult(r) => chars(&r.content),
        EventBody::ContextCompacted(c) => chars(&c.recap_text()),
        EventBody::StatusChanged(_)
        | EventBody::PlanUpdated(_)
        | EventBody::PermissionDenied(_)
        | EventBody::ContextRewound(_)
        | EventBody::ModelChanged(_)
        | EventBody::PermissionModeChanged(_)
        | EventBody::Unknown { .. } => 0,
    }
}

/// Tokens an image attachment is estimated to cost: providers bill images
/// by their pixels, about 1,600 tokens for a picture near 1.2 megapixels
/// (Anthropic's figure), which is what a screenshot is scaled to.
pub const IMAGE_TOKENS: u64 = 1_600;

/// Characters an attachment adds to its message: its reference line
/// (`[attachment:ID "name"]`), and [`IMAGE_TOKENS`] worth for an image,
/// which reaches the model as pixels.
pub fn attachment_chars(attachment: &crate::event::Attachment) -> u64 {
    let line = attachment.id.chars().count() + attachment.name.chars().count() + 17;
    let image = if attachment.is_image() { IMAGE_TOKENS * CHARS_PER_TOKEN } else { 0 };
    line as u64 + image
}

/// `ceil(chars / 4)`.
pub const fn tokens_from_chars(chars: u64) -> u64 {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// Both halves of the estimate, kept apart so callers can show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextEstimate {
    /// The last billed prompt size that still applies, if any.
    pub billed: Option<u64>,
    /// `ceil(characters / 4)` over the working context.
    pub local: u64,
}

impl ContextEstimate {
    /// The estimate over some events, given the billed figure that applies.
    pub fn over<'a>(billed: Option<u64>, bodies: impl IntoIterator<Item = &'a EventBody>) -> Self {
        let chars: u64 = bodies.into_iter().map(model_visible_chars).sum();
        Self { billed, local: tokens_from_chars(chars) }
    }

    /// `max(billed, local)`.
    pub fn tokens(&self) -> u64 {
        self.billed.unwrap_or(0).max(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Message, ToolCall};

    #[test]
    fn counts_characters_not_bytes_and_rounds_up() {
        let bodies = [EventBody::Message(Message::user("héllo"))];
        assert_eq!(ContextEstimate::over(None, &bodies).local, 2);
        assert_eq!(tokens_from_chars(0), 0);
        assert_eq!(tokens_from_chars(8), 2);
        assert_eq!(tokens_from_chars(9), 3);
    }

    #[test]
    fn tool_arguments_count_as_serialised_json_and_billed_wins_when_larger() {
        let call = EventBody::ToolCall(ToolCall {
            id: "c".into(),
            name: "read_file".into(),
            arguments: serde_json::json!({"path": "a"}),
        });
        let est = ContextEstimate::over(Some(100), [&call]);
        assert_eq!(est.local, tokens_from_chars(r#"{"path":"a"}"#.len() as u64));
        assert_eq!(est.tokens(), 100);
    }

    #[test]
    fn a_permission_denial_is_not_part_of_the_conversation() {
        let denial = EventBody::PermissionDenied(crate::event::PermissionDenied {
            tool_call_id: "c".into(),
            tool: "bash".into(),
            reason: crate::event::DenialReason::User,
            detail: "the person declined: rm -rf target".into(),
        });
        assert_eq!(model_visible_chars(&denial), 0);
    }
}
