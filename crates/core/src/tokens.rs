//! The context-size estimate that decides when to compact and what the
//! context meter shows before the first billed figure arrives.
//!
//! The estimate is the larger of two numbers: the prompt size the provider
//! last billed, and a local count of `ceil(characters / ratio)` over message
//! text, thinking, and JSON-serialised tool arguments and results. The local
//! count catches a history that grew since the last bill; the billed figure
//! catches what the local count misses (system prompt, tool schemas, images).
//!
//! The ratio starts at [`CHARS_PER_TOKEN`] and is learned per model
//! ([`learned_ratio`]): an assistant message records the characters of the
//! request that produced it beside the tokens the provider billed for it, and
//! the ratio is a fold over those pairs, so a tokenizer that packs fewer
//! characters into a token (a small local model's: about 2.5) stops the
//! estimate from running low.

use crate::event::EventBody;
use crate::usage::ModelRef;

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
        | EventBody::SandboxChanged(_)
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

/// Characters per token, in thousandths of a character: the ratio the
/// local estimate divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CharsPerToken {
    milli: u64,
}

impl CharsPerToken {
    /// [`CHARS_PER_TOKEN`]: the ratio before any provider billed a request.
    pub const DEFAULT: CharsPerToken = CharsPerToken { milli: CHARS_PER_TOKEN * 1000 };
    /// The fewest characters per token a bill may teach (1): no tokenizer
    /// spends more than a token on a character of the text seri counts.
    pub const MIN: CharsPerToken = CharsPerToken { milli: 1000 };
    /// The most (8): text in the largest vocabularies stays under 5.
    pub const MAX: CharsPerToken = CharsPerToken { milli: 8000 };

    /// The ratio of `chars` sent to `tokens` billed; `None` when either is
    /// zero, or when the ratio falls outside [`Self::MIN`]..=[`Self::MAX`]:
    /// such a bill did not measure these characters (a made-up usage, a
    /// server that counts something else) and teaches nothing.
    pub fn from_billed(chars: u64, tokens: u64) -> Option<CharsPerToken> {
        if chars == 0 || tokens == 0 {
            return None;
        }
        let milli = u64::try_from(u128::from(chars) * 1000 / u128::from(tokens)).ok()?;
        (Self::MIN.milli..=Self::MAX.milli).contains(&milli).then_some(CharsPerToken { milli })
    }

    /// Characters per token, in thousandths.
    pub const fn milli(self) -> u64 {
        self.milli
    }

    /// `ceil(chars / ratio)`.
    pub fn tokens(self, chars: u64) -> u64 {
        let tokens = (u128::from(chars) * 1000).div_ceil(u128::from(self.milli));
        u64::try_from(tokens).unwrap_or(u64::MAX)
    }
}

impl Default for CharsPerToken {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What a request and its bill teach about a model's tokenizer: the sums of
/// the characters sent and the prompt tokens billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BilledChars {
    /// Characters of the requests, as the local estimate counts them.
    pub chars: u64,
    /// Prompt tokens billed for them.
    pub tokens: u64,
}

impl BilledChars {
    /// Adds one message's pair, if it is `model`'s and carries both halves:
    /// the request's characters and the provider's usage. Pure.
    pub fn add(self, body: &EventBody, model: &ModelRef) -> BilledChars {
        let EventBody::Message(message) = body else { return self };
        let meta = message.meta();
        match (meta.prompt_chars, meta.usage, meta.model.as_ref()) {
            (Some(chars), Some(usage), Some(billed_by)) if billed_by == model => {
                self.with(chars, usage.prompt_tokens())
            }
            _ => self,
        }
    }

    /// Adds one request's characters and the prompt tokens billed for it.
    pub fn with(self, chars: u64, tokens: u64) -> BilledChars {
        BilledChars { chars: self.chars.saturating_add(chars), tokens: self.tokens.saturating_add(tokens) }
    }

    /// The ratio these pairs teach, or the default when they teach nothing.
    pub fn ratio(self) -> CharsPerToken {
        CharsPerToken::from_billed(self.chars, self.tokens).unwrap_or_default()
    }
}

/// The characters-per-token ratio `model` has shown over some events: the
/// characters of every request it was billed for over the prompt tokens it
/// was billed, or [`CharsPerToken::DEFAULT`] when no event says both (no
/// usage reported, a message from before requests were measured, another
/// model). A pure fold: the same events give the same ratio.
pub fn learned_ratio<'a>(bodies: impl IntoIterator<Item = &'a EventBody>, model: &ModelRef) -> CharsPerToken {
    bodies.into_iter().fold(BilledChars::default(), |sum, body| sum.add(body, model)).ratio()
}

/// Both halves of the estimate, kept apart so callers can show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextEstimate {
    /// The last billed prompt size that still applies, if any.
    pub billed: Option<u64>,
    /// `ceil(characters / ratio)` over the working context.
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

    fn billed(model: &ModelRef, chars: Option<u64>, usage: Option<crate::Usage>) -> EventBody {
        EventBody::Message(Message::assistant("ok").with_meta(crate::event::MessageMeta {
            usage,
            model: Some(model.clone()),
            prompt_chars: chars,
            ..crate::event::MessageMeta::EMPTY
        }))
    }

    #[test]
    fn the_ratio_is_learned_from_the_models_own_bills() {
        let small = ModelRef::new("openai-compatible", "smollm2");
        let other = ModelRef::new("anthropic", "claude-sonnet-4-5");
        let usage = |input| Some(crate::Usage { input, ..crate::Usage::default() });
        let bodies = [
            billed(&small, Some(18_076), usage(7_284)),
            billed(&other, Some(40_000), usage(10_000)),
            // No usage (llama-cpp-python), no size (recorded before sizes were): nothing learned.
            billed(&small, Some(5_000), None),
            billed(&small, None, usage(900)),
        ];
        let ratio = learned_ratio(&bodies, &small);
        assert_eq!(ratio.milli(), 2_481, "18076 / 7284");
        assert_eq!(ratio.tokens(18_076), 7_286);
        assert_eq!(learned_ratio(&bodies, &other).milli(), 4_000);
        assert_eq!(learned_ratio(&bodies[2..], &small), CharsPerToken::DEFAULT);
        // A bill that cannot have measured these characters (a script's
        // made-up usage: 100 tokens for 20,000 characters) teaches nothing.
        assert_eq!(learned_ratio(&[billed(&small, Some(20_000), usage(100))], &small), CharsPerToken::DEFAULT);
        assert_eq!(learned_ratio(&[billed(&small, Some(500), usage(1_000))], &small), CharsPerToken::DEFAULT);
        assert_eq!(CharsPerToken::DEFAULT.tokens(9), tokens_from_chars(9));
    }

    proptest::proptest! {
        /// Whatever the bills say, the ratio stays within its bounds, and
        /// events that carry no usage leave the default.
        #[test]
        fn the_learned_ratio_stays_sane(
            pairs in proptest::collection::vec((0u64..10_000_000, proptest::option::of(0u64..10_000_000)), 0..20),
        ) {
            let model = ModelRef::new("p", "m");
            let usage = |input| crate::Usage { input, ..crate::Usage::default() };
            let bodies: Vec<EventBody> =
                pairs.iter().map(|(chars, tokens)| billed(&model, Some(*chars), tokens.map(usage))).collect();
            let ratio = learned_ratio(&bodies, &model);
            proptest::prop_assert!((CharsPerToken::MIN..=CharsPerToken::MAX).contains(&ratio), "{ratio:?}");
            let unbilled: Vec<EventBody> = pairs.iter().map(|(chars, _)| billed(&model, Some(*chars), None)).collect();
            proptest::prop_assert_eq!(learned_ratio(&unbilled, &model), CharsPerToken::DEFAULT);
            // One more character per token billed never makes the estimate of the same text larger.
            let chars = 12_345;
            proptest::prop_assert!(ratio.tokens(chars) <= CharsPerToken::MIN.tokens(chars));
            proptest::prop_assert!(ratio.tokens(chars) >= CharsPerToken::MAX.tokens(chars));
        }
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
