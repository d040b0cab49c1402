//! The continuation projection: a successor session's first model context,
//! compiled from the predecessor's handoff, sources and thread.
//!
//! [`compile_continuation_projection`] is pure: it reads the thread only
//! through [`ThreadEvents`], asks it only for the ranges it needs, and
//! returns the text and its [`SessionContinuationManifest`]. The text holds,
//! in order, inside one `<continuation>` frame:
//!
//! 1. `<lineage>`: origin session, predecessor (id and title), depth,
//!    reason, and the seq of the initiating message (which the successor
//!    receives as its next event, copied word for word).
//! 2. `<handoff>`: markdown, one `## Section` per part in a fixed order
//!    (Purpose, Current request, Established facts, Decisions, Open
//!    questions, Next actions, Cautions; `(none)` when empty), then every
//!    `extra` key in key order, its values as a list.
//! 3. `<sources>`: every source as an exact pointer (`resource:`, `memory:`,
//!    `thread:ID seq A to B`).
//! 4. Within the budget (rules below): the cited ranges of the
//!    predecessor's thread as `<excerpt from="A" to="B">` blocks, then
//!    (within the share of the budget the reason allows,
//!    [`recent_exchange_share`]) the most recent exchanges before the initiating message as one
//!    `<recent_exchanges from="A" to="B">` block, oldest first, leaving out
//!    events already shown in an excerpt. Every line in them is an
//!    [`escaped_transcript_line`](crate::escaped_transcript_line).
//! 5. `<omitted>`, when anything did not fit: each range with its size in
//!    bytes, linked, not loaded.
//!
//! The budget pays for excerpt and exchange lines only (each line's bytes
//! and its `\n`). Cited ranges are merged, then each is loaded whole, or
//! else as the citations it was merged from that fit alone, the rest
//! omitted; exchanges are chosen newest first, each whole or not at all, and
//! the first that does not fit ends the choice, so the loaded history has no
//! hole. The compiler reads the initiating message, the cited ranges, the
//! exchanges it loads and the one that stopped it (to report its range and
//! size): never anything because the thread is long. A caller that wants to
//! prefetch gets the cited ranges from [`cited_ranges`]; the walk back reads
//! pages of [`READ_PAGE_EVENTS`] ending just before the initiating message.

mod citations;
mod error;
pub mod recalls;
pub mod recommend;
mod render;
mod selection;

use seri_core::{
    ContinueReason, Handoff, ManifestRange, ProjectionPart, Seq, SessionContinuationManifest, SessionId, Source,
    continuation::MANIFEST_FORMAT_VERSION,
};

use citations::cited_groups;
pub use citations::{CitationError, cited_ranges};
pub use error::CompileError;
pub use selection::READ_PAGE_EVENTS;

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn a_small_window_gets_a_budget_of_a_quarter_of_it_and_a_large_one_the_default() {
        assert_eq!(budget_for_window(8_192), 8_192);
        assert_eq!(budget_for_window(32_768), CONTINUATION_PROJECTION_BUDGET_BYTES);
        assert_eq!(budget_for_window(200_000), CONTINUATION_PROJECTION_BUDGET_BYTES);
        assert_eq!(budget_for_window(0), 1);
    }
}

use crate::thread::ThreadEvents;

/// The default budget, in bytes, for a projection's excerpts and recent
/// exchanges: 32 KiB.
///
/// About 8,000 tokens at four bytes a token: room for the cited material and
/// a few dozen exchanges, while a 32k-token local model still keeps three
/// quarters of its window for the successor's own work (and a frontier model
/// barely notices). The handoff, lineage and source list are not counted:
/// they are the agent's own words and always included. Override it with
/// [`ContinuationInput::budget_bytes`].
pub const CONTINUATION_PROJECTION_BUDGET_BYTES: u64 = 32 * 1024;

/// How much of the budget, in percent, the recent exchanges may take, by
/// the continuation's reason: the projection's shape follows why the agent
/// continued. Cited ranges always come first and may use the whole budget.
///
/// - `context_pressure`: 100. The same work goes on; the latest exchanges
///   are what it was doing.
/// - `phase_change`, `user_request`: 50. The work moves on; the latest
///   exchanges matter, the cited decisions more.
/// - `topic_change`, `refocus`: 25. A new subject, or one thread of the
///   conversation: what the agent cited carries it, and the latest
///   exchanges are mostly about something else.
pub fn recent_exchange_share(reason: ContinueReason) -> u64 {
    match reason {
        ContinueReason::ContextPressure => 100,
        ContinueReason::PhaseChange | ContinueReason::UserRequest => 50,
        ContinueReason::TopicChange | ContinueReason::Refocus => 25,
    }
}

/// The budget, in bytes, for a successor whose model has a window of
/// `window_tokens`: the default, or for a small window as many bytes as the
/// window has tokens (about a quarter of it at four bytes a token), so a
/// successor on a small local model keeps most of its window for its own
/// work instead of being refused as too large.
pub fn budget_for_window(window_tokens: u64) -> u64 {
    CONTINUATION_PROJECTION_BUDGET_BYTES.min(window_tokens.max(1))
}

/// Where a continuation sits in its chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lineage {
    /// The first session of the chain.
    pub origin_session_id: SessionId,
    /// The session being continued; its thread is the one read.
    pub predecessor_session_id: SessionId,
    /// The predecessor's title at the time of continuing.
    pub predecessor_title: String,
    /// How many continuations separate the successor from the origin (1 for the first).
    pub depth: u32,
    /// Why the agent continued.
    pub reason: ContinueReason,
}

/// Everything a projection is compiled from, besides the thread itself.
#[derive(Debug, Clone, Copy)]
pub struct ContinuationInput<'a> {
    /// Where the continuation sits in its chain.
    pub lineage: &'a Lineage,
    /// The agent's handoff, already normalised.
    pub handoff: &'a Handoff,
    /// The sources the agent cited, already validated against what exists.
    pub sources: &'a [Source],
    /// The seq of the message the successor answers: the newest message from
    /// a user or a trigger in the predecessor.
    pub initiating_seq: Seq,
    /// Bytes for excerpts and recent exchanges; see
    /// [`CONTINUATION_PROJECTION_BUDGET_BYTES`].
    pub budget_bytes: u64,
}

impl<'a> ContinuationInput<'a> {
    /// An input with the default budget.
    pub fn new(lineage: &'a Lineage, handoff: &'a Handoff, sources: &'a [Source], initiating_seq: Seq) -> Self {
        Self { lineage, handoff, sources, initiating_seq, budget_bytes: CONTINUATION_PROJECTION_BUDGET_BYTES }
    }

    /// The same input with another budget.
    pub fn with_budget(self, budget_bytes: u64) -> Self {
        Self { budget_bytes, ..self }
    }
}

/// A compiled projection: the successor's first message and the record of
/// what it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuationProjection {
    /// The text of the successor's first (`system`) message.
    pub text: String,
    /// What was included and omitted, for the edge.
    pub manifest: SessionContinuationManifest,
}

/// Compiles a successor's projection from `input` and the predecessor's
/// `thread` (see the module doc for the text and the budget rules).
///
/// Fails, naming what was wrong, when the input is malformed (a backwards or
/// seq-0 citation, depth 0, an initiating seq that is not a message from a
/// user or a trigger), when a range the compiler needs is not in the thread,
/// or when the thread cannot be read.
pub fn compile_continuation_projection<T: ThreadEvents + ?Sized>(
    input: &ContinuationInput<'_>,
    thread: &T,
) -> Result<ContinuationProjection, CompileError<T::Error>> {
    if input.lineage.depth == 0 {
        return Err(CompileError::DepthZero);
    }
    if input.initiating_seq.0 == 0 {
        return Err(CompileError::InitiatingSeqZero);
    }
    let predecessor = input.lineage.predecessor_session_id;
    let cited = cited_groups(predecessor, input.sources)?;
    let share = recent_exchange_share(input.lineage.reason);
    let selection = selection::select(thread, predecessor, &cited, input.initiating_seq, input.budget_bytes, share)?;
    let text = render::render(input, &selection);
    let manifest = manifest(input, &selection, text.len() as u64);
    Ok(ContinuationProjection { text, manifest })
}

fn manifest(
    input: &ContinuationInput<'_>,
    selection: &selection::Selection,
    projection_bytes: u64,
) -> SessionContinuationManifest {
    let range = |part, m: &selection::Measured| ManifestRange {
        part,
        from_seq: m.range.from,
        to_seq: m.range.to,
        bytes: m.bytes,
    };
    let included = selection
        .excerpts
        .iter()
        .map(|l| range(ProjectionPart::Excerpt, &l.measured))
        .chain(selection.exchanges.iter().map(|l| range(ProjectionPart::RecentExchange, &l.measured)))
        .collect();
    let omitted = selection
        .omitted_excerpts
        .iter()
        .map(|m| range(ProjectionPart::Excerpt, m))
        .chain(selection.omitted_exchange.iter().map(|m| range(ProjectionPart::RecentExchange, m)))
        .collect();
    SessionContinuationManifest {
        format_version: MANIFEST_FORMAT_VERSION,
        budget_bytes: input.budget_bytes,
        used_bytes: selection.used_bytes,
        projection_bytes,
        origin_session_id: input.lineage.origin_session_id,
        predecessor_session_id: input.lineage.predecessor_session_id,
        depth: input.lineage.depth,
        initiating_seq: input.initiating_seq,
        sources: input.sources.to_vec(),
        included,
        omitted,
    }
}
