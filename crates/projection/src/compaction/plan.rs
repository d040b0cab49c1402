//! Deciding whether to compact and where to cut: [`plan_compaction`].

use std::fmt;

use seri_core::tokens::CharsPerToken;
use seri_core::{CompactionRecap, CompactionTrigger, ContextCompacted, ContextEstimate, ModelRef, Seq, ToolCallId};

use super::context::{WorkingContext, render_recap_message};
use crate::thread::SeqRange;

/// Compaction is tried before a model call once the estimate reaches this
/// share of the context window, in percent.
pub const COMPACTION_TRIGGER_PERCENT: u64 = 50;

/// The default keep budget: about this many tokens of the newest messages
/// stay word for word (`{"context": {"keepTokens": N}}` changes it).
pub const DEFAULT_KEEP_TOKENS: u64 = 20_000;

/// The keep budget never exceeds this share of the context window, in
/// percent.
///
/// With a small window (a local model at 32k tokens) a 20,000-token keep
/// budget would keep more than the 50% trigger: every compaction would
/// evict nothing, and the context would grow until the provider refused it.
/// A quarter of the window leaves the kept part well under the trigger.
pub const KEEP_MAX_WINDOW_PERCENT: u64 = 25;

/// Why the keep budget in force is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepReason {
    /// A person chose it, and it is used as given.
    Chosen,
    /// The default, which fits the window.
    Default,
    /// The default, cut to [`KEEP_MAX_WINDOW_PERCENT`] of a small window.
    CutToWindow,
}

/// The keep budget in force for a `window`, and why: a chosen budget as
/// given; the default cut to a quarter of a small window.
pub fn keep_budget(window: u64, keep_tokens: u64, chosen: bool) -> (u64, KeepReason) {
    if chosen {
        return (keep_tokens, KeepReason::Chosen);
    }
    let cap = window.saturating_mul(KEEP_MAX_WINDOW_PERCENT) / 100;
    if keep_tokens > cap { (cap, KeepReason::CutToWindow) } else { (keep_tokens, KeepReason::Default) }
}

/// A chosen keep budget that leaves nothing to compact: at or past the
/// compaction trigger, every compaction would keep everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{keep} tokens is at or past the compaction trigger ({percent}% of the {window}-token window, {limit} tokens): \
     every compaction would keep everything and evict nothing; choose fewer than {limit} (a quarter of the window, \
     {quarter}, leaves room to compact), {over} fewer at least"
)]
pub struct KeepTooLarge {
    /// The budget chosen.
    pub keep: u64,
    /// The window.
    pub window: u64,
    /// The trigger, in tokens.
    pub limit: u64,
    /// The trigger, in percent.
    pub percent: u64,
    /// A quarter of the window.
    pub quarter: u64,
    /// By how much it is over (at least one less is needed).
    pub over: u64,
}

/// Checks a keep budget a person chose against the window: it must stay
/// below the compaction trigger, or compaction could never free anything.
pub fn check_chosen_keep(window: u64, keep: u64) -> Result<(), KeepTooLarge> {
    let limit = u64::try_from(u128::from(window) * u128::from(COMPACTION_TRIGGER_PERCENT) / 100).unwrap_or(u64::MAX);
    if keep < limit {
        return Ok(());
    }
    Err(KeepTooLarge {
        keep,
        window,
        limit,
        percent: COMPACTION_TRIGGER_PERCENT,
        quarter: window.saturating_mul(KEEP_MAX_WINDOW_PERCENT) / 100,
        over: keep - limit + 1,
    })
}

/// A cut that would evict fewer messages than this is not made: the
/// summarizer call would cost more than it frees.
pub const MIN_EVICTABLE_MESSAGES: usize = 4;

/// What `/compact` prints when there is too little history to compact.
pub const NOT_ENOUGH_HISTORY: &str = "Not enough history to compact.";

/// The figures a plan is made with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionSettings {
    /// The context window in force, in tokens (the user's override or the
    /// model's).
    pub window: u64,
    /// The keep budget asked for, in tokens; see
    /// [`CompactionSettings::keep_budget`] for the one used.
    pub keep_tokens: u64,
    /// Whether a person chose `keep_tokens` (`context.keepTokens`): then it
    /// is used as given, never cut; see [`check_chosen_keep`].
    pub keep_chosen: bool,
    /// The model the next request goes to; the summarizer uses the same one.
    pub model: ModelRef,
}

impl CompactionSettings {
    /// Settings with the default keep budget.
    pub fn new(window: u64, model: ModelRef) -> Self {
        Self { window, keep_tokens: DEFAULT_KEEP_TOKENS, keep_chosen: false, model }
    }

    /// The same settings with another keep budget, cut like the default.
    pub fn with_keep_tokens(self, keep_tokens: u64) -> Self {
        Self { keep_tokens, ..self }
    }

    /// The same settings with a keep budget a person chose: used as given.
    /// Check it first with [`check_chosen_keep`].
    pub fn with_chosen_keep_tokens(self, keep_tokens: u64) -> Self {
        Self { keep_tokens, keep_chosen: true, ..self }
    }

    /// The keep budget used: a chosen one as given; otherwise
    /// `keep_tokens`, at most [`KEEP_MAX_WINDOW_PERCENT`] of the window.
    pub fn keep_budget(&self) -> u64 {
        keep_budget(self.window, self.keep_tokens, self.keep_chosen).0
    }

    /// Whether an estimate of `tokens` reaches the trigger: at least
    /// [`COMPACTION_TRIGGER_PERCENT`] of the window.
    pub fn reaches_trigger(&self, tokens: u64) -> bool {
        u128::from(tokens) * 100 >= u128::from(self.window) * u128::from(COMPACTION_TRIGGER_PERCENT)
    }
}

/// What [`plan_compaction`] decided.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactionDecision {
    /// An automatic check below the trigger: send the context as it is.
    NotNeeded {
        /// The estimate that was checked.
        estimate: ContextEstimate,
    },
    /// No safe cut evicts at least [`MIN_EVICTABLE_MESSAGES`] messages.
    /// `/compact` prints [`NOT_ENOUGH_HISTORY`]; an automatic check sends
    /// the context as it is; an overflow retry fails the turn.
    NotEnoughHistory {
        /// The estimate that was checked.
        estimate: ContextEstimate,
        /// How many messages the best safe cut would have evicted.
        evictable: usize,
        /// The newest tokens that stay word for word (the keep budget).
        keep_budget: u64,
    },
    /// Compact: summarise the evicted part and append the recap.
    Compact(Box<CompactionPlan>),
}

impl fmt::Display for CompactionDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompactionDecision::NotNeeded { estimate } => {
                write!(f, "No compaction needed: the context is about {} tokens.", estimate.tokens())
            }
            CompactionDecision::NotEnoughHistory { estimate, evictable, keep_budget } => write!(
                f,
                "{NOT_ENOUGH_HISTORY} Only {evictable} message{} before the newest {keep_budget} tokens, which \
                 always stay word for word; a summary is worth it from {MIN_EVICTABLE_MESSAGES} on (the context is \
                 about {} tokens).",
                if *evictable == 1 { " lies" } else { "s lie" },
                estimate.tokens(),
            ),
            CompactionDecision::Compact(plan) => write!(
                f,
                "Compacting {} messages ({}); keeping seq {} on (about {} tokens).",
                plan.evicted_messages, plan.evicted, plan.kept_from_seq, plan.kept_tokens
            ),
        }
    }
}

/// Where to cut and what the recap will carry besides the summarizer's
/// four fields.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPlan {
    /// Why it runs.
    pub trigger: CompactionTrigger,
    /// The focus words given with `/compact`.
    pub focus: Option<String>,
    /// The model that writes the recap (the turn's own).
    pub model: ModelRef,
    /// The estimate before compacting.
    pub estimate: ContextEstimate,
    /// The keep budget the cut was chosen with, in tokens.
    pub keep_budget: u64,
    /// How many of the context's messages go: `messages()[..evicted_messages]`.
    pub evicted_messages: usize,
    /// The seqs the recap replaces: from where the working context starts
    /// to just before `kept_from_seq`.
    pub evicted: SeqRange,
    /// Where the kept part starts: the first seq of the first kept message.
    pub kept_from_seq: Seq,
    /// The local estimate of the kept messages, in tokens.
    pub kept_tokens: u64,
    /// The recap's `Read:` list, merged with the previous recap's.
    pub read: Vec<String>,
    /// The recap's `Modified:` list, merged with the previous recap's.
    pub modified: Vec<String>,
    /// Read files the `Read:` list leaves out (it keeps the newest).
    pub read_unlisted: u64,
    /// Modified files the `Modified:` list leaves out.
    pub modified_unlisted: u64,
    /// The recap being updated, if the context has one.
    pub previous_recap: Option<CompactionRecap>,
    /// The oldest tool call still unanswered at the end of the context. The
    /// plan never waits for it: the cut goes before that call's turn, so the
    /// kept part holds the call and, once it arrives, its result.
    pub pending_call: Option<ToolCallId>,
    kept_chars: u64,
    /// The model's learned characters per token, which sized the cut.
    ratio: CharsPerToken,
}

impl CompactionPlan {
    /// The event to append once the summarizer has answered: the plan's
    /// ranges, lists and estimate with the recap it wrote.
    pub fn compacted(&self, recap: CompactionRecap) -> ContextCompacted {
        let mut compacted = ContextCompacted {
            recap,
            read: self.read.clone(),
            modified: self.modified.clone(),
            read_unlisted: self.read_unlisted,
            modified_unlisted: self.modified_unlisted,
            kept_from_seq: self.kept_from_seq,
            evicted_from_seq: self.evicted.from,
            evicted_to_seq: self.evicted.to,
            tokens_before: self.estimate.tokens(),
            tokens_after: 0,
            trigger: self.trigger,
            focus: self.focus.clone(),
            model: self.model.clone(),
        };
        let recap_chars = render_recap_message(&compacted).chars().count() as u64;
        compacted.tokens_after = self.ratio.tokens(recap_chars + self.kept_chars);
        compacted
    }
}

/// Decides whether to compact `context` and, if so, where to cut.
///
/// - [`CompactionTrigger::Automatic`] (before every model call): nothing
///   happens below [`COMPACTION_TRIGGER_PERCENT`] of the window.
/// - [`CompactionTrigger::Manual`] (`/compact`, with optional focus
///   words): the same planning without the trigger.
/// - [`CompactionTrigger::Overflow`] (the provider refused the request as
///   too long): no trigger, and the keep budget is at most half the
///   messages' current size, so the retry is smaller than what was refused
///   even right after a compaction.
///
/// The cut keeps the longest run of newest messages that fits the keep
/// budget, starting at a safe boundary (see [the cut](crate::compaction#the-cut)); when not even
/// the newest safe run fits, it keeps that run. Fewer than
/// [`MIN_EVICTABLE_MESSAGES`] evicted messages is
/// [`CompactionDecision::NotEnoughHistory`].
///
/// Planning is one pass over facts the working context gathered while it
/// was built (each message's size and whether a cut may fall before it),
/// stopping at the cut, then one pass over the file accesses before the
/// cut.
pub fn plan_compaction(
    context: &WorkingContext,
    settings: &CompactionSettings,
    trigger: CompactionTrigger,
    focus: Option<&str>,
) -> CompactionDecision {
    let estimate = context.estimate(&settings.model);
    let ratio = context.ratio(&settings.model);
    if trigger == CompactionTrigger::Automatic && !settings.reaches_trigger(estimate.tokens()) {
        return CompactionDecision::NotNeeded { estimate };
    }
    let keep_budget = match trigger {
        CompactionTrigger::Automatic | CompactionTrigger::Manual => settings.keep_budget(),
        CompactionTrigger::Overflow => settings.keep_budget().min(ratio.tokens(context.message_chars()) / 2),
    };
    let messages = context.messages();
    let cuts = context.cuts();
    let keep_chars = u64::try_from(u128::from(keep_budget) * u128::from(ratio.milli()) / 1000).unwrap_or(u64::MAX);
    let Some(cut) = cuts.cut(context.message_chars(), keep_chars) else {
        return CompactionDecision::NotEnoughHistory { estimate, evictable: 0, keep_budget };
    };
    if cut.index < MIN_EVICTABLE_MESSAGES {
        return CompactionDecision::NotEnoughHistory { estimate, evictable: cut.index, keep_budget };
    }
    let kept_from_seq = messages[cut.index].seqs.from;
    let evicted = SeqRange { from: context.start(), to: Seq(kept_from_seq.get() - 1) };
    let previous = context.recap().map(|r| &r.compacted);
    let lists = cuts.file_lists(previous, cut.index);
    // As the seri document says: four evictable messages are enough, even
    // when what must stay keeps the context above the trigger (the run
    // says so once it compacted).
    let kept_chars = context.message_chars() - cut.chars_before;
    CompactionDecision::Compact(Box::new(CompactionPlan {
        trigger,
        focus: focus.map(str::trim).filter(|f| !f.is_empty()).map(str::to_owned),
        model: settings.model.clone(),
        estimate,
        keep_budget,
        evicted_messages: cut.index,
        evicted,
        kept_from_seq,
        kept_tokens: ratio.tokens(kept_chars),
        read: lists.read,
        modified: lists.modified,
        read_unlisted: lists.read_unlisted,
        modified_unlisted: lists.modified_unlisted,
        previous_recap: previous.map(|c| c.recap.clone()),
        pending_call: context.pending_call().cloned(),
        kept_chars,
        ratio,
    }))
}

/// [`plan_compaction`] for a request the provider refused as too long:
/// a further cut, when a safe one exists.
pub fn plan_overflow_compaction(context: &WorkingContext, settings: &CompactionSettings) -> CompactionDecision {
    plan_compaction(context, settings, CompactionTrigger::Overflow, None)
}

#[cfg(test)]
mod keep_tests {
    use super::*;

    #[test]
    fn a_chosen_budget_is_used_as_given_and_the_default_is_cut_to_small_windows() {
        assert_eq!(keep_budget(200_000, 20_000, false), (20_000, KeepReason::Default));
        assert_eq!(keep_budget(32_000, 20_000, false), (8_000, KeepReason::CutToWindow));
        assert_eq!(keep_budget(32_000, 12_000, true), (12_000, KeepReason::Chosen));
        let settings = CompactionSettings::new(32_000, ModelRef::new("p", "m")).with_chosen_keep_tokens(12_000);
        assert_eq!(settings.keep_budget(), 12_000);
    }

    #[test]
    fn a_chosen_budget_at_the_trigger_is_refused_with_how_much_it_is_over() {
        assert_eq!(check_chosen_keep(64_000, 31_999), Ok(()));
        let err = check_chosen_keep(64_000, 40_000).unwrap_err();
        assert_eq!((err.limit, err.quarter, err.over), (32_000, 16_000, 8_001));
        assert!(
            err.to_string().starts_with(
                "40000 tokens is at or past the compaction trigger (50% of the 64000-token window, 32000 tokens)"
            ),
            "{err}"
        );
    }
}
