//! `<context_usage tokens="…" window="…" percent="…">`: how full the model's
//! context is, with guidance that gets stronger at 70% and at 85% (and, once
//! the prompt has reached the window, says so).
//!
//! Rendered fresh for every request where continuing is possible, never
//! stored. The tokens are the last request's prompt size as the provider
//! billed it (`input + cacheRead + cacheWrite`, stamped on the newest
//! assistant message), the same figure the client's context meter shows.
//! When the provider billed nothing (a first request, or a server that
//! reports no usage) they are the local estimate of this request, and the
//! block says so (`estimated="true"`): unknown is not zero.
//!
//! From 70% on, when the caller knows it, the block also names what a
//! successor would start with ([`SuccessorEstimate`]), so the agent weighs
//! continuing against the room it would get.

use std::fmt;
use std::num::NonZeroU64;

use seri_core::Usage;

use crate::text::context_usage as guidance;

/// At this percent and above the guidance asks for a continuation at the
/// next safe point (the meter turns amber).
pub const FILLING_PERCENT: u64 = 70;

/// At this percent and above the guidance asks for a continuation now (the
/// meter turns red).
pub const NEARLY_FULL_PERCENT: u64 = 85;

/// At this percent and above the prompt has reached the window in force and
/// the next request may be refused as too long.
pub const FULL_PERCENT: u64 = 100;

/// How urgent the guidance is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContextPressure {
    /// Below [`FILLING_PERCENT`]: continue only at a semantic boundary.
    Comfortable,
    /// From [`FILLING_PERCENT`]: continue at the next safe point.
    Filling,
    /// From [`NEARLY_FULL_PERCENT`]: continue now.
    NearlyFull,
    /// From [`FULL_PERCENT`]: continue before anything else.
    Full,
}

impl ContextPressure {
    /// The guidance sentence the block carries.
    pub const fn guidance(self) -> &'static str {
        match self {
            ContextPressure::Comfortable => guidance::COMFORTABLE,
            ContextPressure::Filling => guidance::FILLING,
            ContextPressure::NearlyFull => guidance::NEARLY_FULL,
            ContextPressure::Full => guidance::FULL,
        }
    }
}

/// The `<context_usage>` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContextUsage {
    /// Tokens of the last request's prompt.
    pub tokens: u64,
    /// The window in force (see [`crate::effective_context_window`]).
    pub window: NonZeroU64,
    /// Whether `tokens` is seri's estimate rather than a billed figure.
    pub estimated: bool,
    /// What a successor would start with, named from [`FILLING_PERCENT`] on.
    pub successor: Option<SuccessorEstimate>,
}

/// The estimated size of a successor's first request, before the handoff:
/// its system prompt and the history its projection can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SuccessorEstimate {
    /// The whole estimate, in tokens: `system + history`.
    pub tokens: u64,
    /// The most the projection's history can take, in tokens.
    pub history: u64,
}

impl SuccessorEstimate {
    /// A successor's start: its system prompt (`system_tokens`) and the
    /// projection's history, which is the budget (`budget_tokens`) or all
    /// this thread's working context when that is smaller. Pure: the
    /// caller measured each part.
    pub fn new(system_tokens: u64, budget_tokens: u64, context_tokens: u64) -> Self {
        let history = budget_tokens.min(context_tokens);
        Self { tokens: system_tokens.saturating_add(history), history }
    }
}

impl ContextUsage {
    /// A block for a prompt size and a window.
    pub const fn new(tokens: u64, window: NonZeroU64) -> Self {
        Self { tokens, window, estimated: false, successor: None }
    }

    /// A block for a prompt size seri estimated, marked as one.
    pub const fn estimated(tokens: u64, window: NonZeroU64) -> Self {
        Self { tokens, window, estimated: true, successor: None }
    }

    /// The same block, naming what a successor would start with.
    #[must_use]
    pub const fn with_successor(self, successor: SuccessorEstimate) -> Self {
        Self { successor: Some(successor), ..self }
    }

    /// The newest billed usage's block, else one for `estimate` (this
    /// request's local estimate), marked as an estimate.
    pub fn from_usage_or_estimate(usage: Option<&Usage>, estimate: u64, window: NonZeroU64) -> Self {
        match usage {
            Some(usage) => Self::new(usage.prompt_tokens(), window),
            None => Self::estimated(estimate, window),
        }
    }

    /// A block from the newest assistant message's usage; zero tokens while
    /// no request has been billed yet.
    pub fn from_last_usage(usage: Option<&Usage>, window: NonZeroU64) -> Self {
        Self::new(usage.map_or(0, Usage::prompt_tokens), window)
    }

    /// The share of the window used, in whole percent rounded down, so the
    /// block never claims a threshold before it is reached. Above 100 when
    /// the prompt was larger than the window in force (an override smaller
    /// than the model's own window).
    pub fn percent(&self) -> u64 {
        let percent = u128::from(self.tokens) * 100 / u128::from(self.window.get());
        u64::try_from(percent).unwrap_or(u64::MAX)
    }

    /// How urgent the guidance is.
    pub fn pressure(&self) -> ContextPressure {
        match self.percent() {
            p if p >= FULL_PERCENT => ContextPressure::Full,
            p if p >= NEARLY_FULL_PERCENT => ContextPressure::NearlyFull,
            p if p >= FILLING_PERCENT => ContextPressure::Filling,
            _ => ContextPressure::Comfortable,
        }
    }
}

impl fmt::Display for ContextUsage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "<context_usage tokens=\"{}\" window=\"{}\" percent=\"{}\"{}>",
            self.tokens,
            self.window,
            self.percent(),
            if self.estimated { " estimated=\"true\"" } else { "" }
        )?;
        writeln!(f, "{}", self.pressure().guidance())?;
        if let Some(successor) = self.successor.filter(|_| self.pressure() >= ContextPressure::Filling) {
            let percent = u128::from(successor.tokens) * 100 / u128::from(self.window.get());
            let line = guidance::SUCCESSOR
                .replace("{tokens}", &successor.tokens.to_string())
                .replace("{percent}", &percent.to_string())
                .replace("{history}", &successor.history.to_string());
            writeln!(f, "{line}")?;
        }
        f.write_str("</context_usage>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(tokens: u64, window: u64) -> ContextUsage {
        ContextUsage::new(tokens, NonZeroU64::new(window).unwrap())
    }

    #[test]
    fn thresholds_are_reached_exactly_and_never_early() {
        assert_eq!(usage(69_999, 100_000).pressure(), ContextPressure::Comfortable);
        assert_eq!(usage(70_000, 100_000).pressure(), ContextPressure::Filling);
        assert_eq!(usage(84_999, 100_000).pressure(), ContextPressure::Filling);
        assert_eq!(usage(85_000, 100_000).pressure(), ContextPressure::NearlyFull);
        assert_eq!(usage(99_999, 100_000).pressure(), ContextPressure::NearlyFull);
        assert_eq!(usage(100_000, 100_000).pressure(), ContextPressure::Full);
        assert_eq!(usage(u64::MAX, 1).percent(), u64::MAX);
    }

    #[test]
    fn tokens_are_the_whole_prompt() {
        let billed = Usage { input: 1_000, cache_read: 60_000, cache_write: 9_000, output: 5_000 };
        let block = ContextUsage::from_last_usage(Some(&billed), NonZeroU64::new(100_000).unwrap());
        assert_eq!((block.tokens, block.percent()), (70_000, 70));
        assert_eq!(ContextUsage::from_last_usage(None, NonZeroU64::MIN).tokens, 0);
    }

    #[test]
    fn from_70_percent_the_block_names_what_a_successor_would_start_with() {
        let successor = SuccessorEstimate::new(3_000, 8_192, 60_000);
        assert_eq!((successor.tokens, successor.history), (11_192, 8_192));
        assert_eq!(SuccessorEstimate::new(3_000, 8_192, 1_000).history, 1_000, "never more than the thread holds");
        let line = "A successor would start at about 11192 tokens (11% of the window)";
        assert!(!usage(69_000, 100_000).with_successor(successor).to_string().contains(line));
        for tokens in [70_000, 85_000, 100_000] {
            let text = usage(tokens, 100_000).with_successor(successor).to_string();
            assert!(text.contains(line), "{text}");
            assert!(text.contains("at most 8192 tokens of this thread"), "{text}");
        }
        assert!(!usage(90_000, 100_000).to_string().contains("A successor"), "only when it is known");
    }

    #[test]
    fn an_estimate_says_it_is_one() {
        let window = NonZeroU64::new(8_192).unwrap();
        let billed = Usage { input: 4_000, ..Usage::default() };
        let block = ContextUsage::from_usage_or_estimate(Some(&billed), 99, window);
        assert!(block.to_string().starts_with(r#"<context_usage tokens="4000" window="8192" percent="48">"#));
        let block = ContextUsage::from_usage_or_estimate(None, 4_096, window);
        let text = block.to_string();
        assert!(
            text.starts_with(r#"<context_usage tokens="4096" window="8192" percent="50" estimated="true">"#),
            "{text}"
        );
    }
}
