//! Compaction planning: seri's prefix summarizer, as pure functions.
//!
//! On the compact strategy, the oldest part of a session's *working context*
//! (what the model is sent) is replaced by one recap once the context is
//! half full. Nothing is deleted: the recap is a `context_compacted` event
//! appended to the session, and the working context is that recap followed
//! by the events from its `keptFromSeq` on ([`WorkingContext`]).
//!
//! This module decides and shapes; the run loop calls the model and the
//! store. Before every model call (the first after `--continue` or
//! `--resume` too), the run loop:
//!
//! 1. reads the working context's events, [`read_working_context`] (or keeps
//!    them: [`working_context_range`] says which), and builds
//!    [`WorkingContext::from_events`];
//! 2. asks [`plan_compaction`] with [`CompactionTrigger::Automatic`]. The
//!    estimate is `max(billed, local)` ([`WorkingContext::estimate`]); below
//!    [`COMPACTION_TRIGGER_PERCENT`] of the window nothing happens;
//! 3. on [`CompactionDecision::Compact`], builds the summarizer's input
//!    ([`SummarizerInput::new`], payloads over [`ELIDE_PAYLOAD_BYTES`]
//!    elided), trims it to the window ([`SummarizerInput::trim_to_fit`]),
//!    has `seri-prompt` render the request, and calls the turn's own model
//!    with no tools;
//! 4. parses the answer ([`parse_recap`]), appends
//!    [`CompactionPlan::compacted`] as a `context_compacted` event, and
//!    rebuilds the working context, which now starts at the recap.
//!
//! An automatic compaction that fails at any step is fail-soft: the call
//! goes out uncompacted. When the provider refuses a request as too long,
//! [`plan_overflow_compaction`] plans a further cut; if that compaction
//! fails, or the retry overflows again, the turn fails. `/compact [focus]`
//! is [`CompactionTrigger::Manual`]: no trigger, and
//! [`CompactionDecision::NotEnoughHistory`] prints [`NOT_ENOUGH_HISTORY`].
//!
//! # The cut
//!
//! The kept part is about [`DEFAULT_KEEP_TOKENS`] of the newest messages by
//! the local estimate: a budget, not a count. The boundary only ever falls
//! immediately before a user message or an assistant turn, never before a
//! tool result, and never while a call before it still waits for its
//! result, so a cut never separates a call from its result and the kept
//! part never holds a result without its call. A cut that would evict fewer
//! than [`MIN_EVICTABLE_MESSAGES`] messages is not made. Building the
//! working context is one pass over its events that also records where a
//! cut may fall and which files each call touched; planning is then one
//! pass over those few bytes a message (estimate, cut point, file lists),
//! never a walk through the calls' arguments.
//!
//! # The recap
//!
//! Four fields, [`seri_core::RecapField`]: Goal, Progress, Blockers, Next
//! steps. An existing recap is updated, not rewritten: the summarizer reads
//! it and is told that finished work moves into Progress and that blockers
//! the new turns resolved are dropped. The `Read:` and `Modified:` lists come
//! from the evicted tool calls ([`paths`]), merged with the previous
//! recap's, never from the summarizer.

mod context;
mod cut;
mod elide;
mod error;
pub mod paths;
mod plan;
mod recap;
pub mod rewind;
mod summarizer;

pub use context::{
    AssistantTurn, BilledPrompt, CONTEXT_MARKS_PAGE, ContextBody, ContextMessage, ContextRecap, RECAP_FRAME,
    WorkingContext, load_working_context, read_working_context, render_recap_message, working_context_range,
};
pub use elide::{ELIDE_KEEP_SCALAR_BYTES, ELIDE_PAYLOAD_BYTES, elide_call, elide_payload, elide_result, elided_marker};
pub use error::{ReadContextError, RecapParseError, SummarizerInputError, TrimError, WorkingContextError};
pub use paths::{FileAccess, FileLists, MAX_LISTED_PATHS, file_access, merge_file_lists};
pub use plan::{
    COMPACTION_TRIGGER_PERCENT, CompactionDecision, CompactionPlan, CompactionSettings, DEFAULT_KEEP_TOKENS,
    KEEP_MAX_WINDOW_PERCENT, KeepReason, KeepTooLarge, MIN_EVICTABLE_MESSAGES, NOT_ENOUGH_HISTORY, check_chosen_keep,
    keep_budget, plan_compaction, plan_overflow_compaction,
};
pub use recap::parse_recap;
pub use rewind::{RewindMask, rewind_visibility, visible_events};
pub use seri_core::CompactionTrigger;
pub use summarizer::{MAX_SUMMARY_TRIM_ATTEMPTS, SummarizerInput, TrimReport};
