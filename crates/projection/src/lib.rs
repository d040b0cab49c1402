//! seri's pure compilers: what the model is shown of a session's history.
//!
//! - [`transcript`]: [`transcript_event_line`], the one definition of how an
//!   event reads as text (`[seq] who: text`), shared by continuation
//!   excerpts, the `read thread:<id>` verb and `seri thread`.
//! - [`framing`]: [`escape_action_framing`], which keeps model- and
//!   user-written text from opening or closing a frame, and [`FRAME_NAMES`],
//!   the registry of frames seri writes.
//! - [`thread`]: [`ThreadEvents`], read access to a thread by seq range, the
//!   only way the compilers see events.
//! - [`continuation`]: [`compile_continuation_projection`], a successor
//!   session's first context (lineage, handoff, sources, excerpts and recent
//!   exchanges within a byte budget) and its manifest.
//! - [`compaction`]: the compact strategy's planning: the [`WorkingContext`]
//!   after a recap, the estimate and the 50% trigger, the cut that never
//!   separates a tool call from its result, the file lists, elision, the
//!   summarizer's input and the recap parser.
//!
//! This crate must never do IO: no store, no files, no clock, no network,
//! no environment. It takes values (and a [`ThreadEvents`] that someone else
//! backs with a database) and returns values, so every output is a function
//! of its input and is tested with snapshots and properties. It never reads a
//! whole thread either: a projection costs what it includes, not what the
//! thread holds.
//!
//! # Example
//!
//! A successor's projection, compiled over a thread held in a `Vec`; the
//! store, or any [`ThreadEvents`] of your own, is read the same way, by seq
//! range (`cargo run -p seri-projection --example projection_tour` also
//! plans a compaction cut):
//!
//! ```
//! use seri_core::{ContinueReason, Event, EventBody, EventId, Handoff, Message, Seq, SessionId, Timestamp};
//! use seri_projection::{ContinuationInput, Lineage, compile_continuation_projection};
//!
//! let id = SessionId::from_bytes([1; 16]);
//! let messages = [Message::user("Plan the migration"), Message::assistant("Nullable column, backfill, NOT NULL.")];
//! let mut thread: Vec<Event> = Vec::new();
//! for message in messages.into_iter().chain([Message::user("Now, the deploy")]) {
//!     let seq = Seq(thread.len() as u64 + 1);
//!     let (event_id, at) = (EventId::from_bytes([seq.0 as u8; 16]), Timestamp(0));
//!     thread.push(Event { id: event_id, session_id: id, seq, at, body: EventBody::Message(message) });
//! }
//!
//! let lineage = Lineage {
//!     origin_session_id: id,
//!     predecessor_session_id: id,
//!     predecessor_title: "Migration".into(),
//!     depth: 1,
//!     reason: ContinueReason::PhaseChange,
//! };
//! let handoff = Handoff { purpose: Some("Ship the migration.".into()), ..Handoff::default() };
//! let input = ContinuationInput::new(&lineage, &handoff, &[], Seq(3)); // seq 3 is the message to answer
//! let projection = compile_continuation_projection(&input, &thread)?;
//!
//! assert!(projection.text.starts_with("<continuation>"));
//! assert!(projection.text.contains("[1] user: Plan the migration"));
//! assert!(projection.manifest.omitted.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod compaction;
pub mod continuation;
pub mod framing;
pub mod thread;
pub mod transcript;

pub use compaction::{
    CompactionDecision, CompactionPlan, CompactionSettings, NOT_ENOUGH_HISTORY, SummarizerInput, WorkingContext,
    load_working_context, parse_recap, plan_compaction, plan_overflow_compaction, read_working_context,
};
pub use continuation::{
    CONTINUATION_PROJECTION_BUDGET_BYTES, CitationError, CompileError, ContinuationInput, ContinuationProjection,
    Lineage, READ_PAGE_EVENTS, budget_for_window, cited_ranges, compile_continuation_projection, recent_exchange_share,
};
pub use framing::{FRAME_NAMES, escape_action_framing, is_frame_name, unescape_action_framing};
pub use thread::{SeqRange, ThreadEvents, is_context_mark};
pub use transcript::{
    escaped_transcript_line, message_text, push_transcript_event_line, transcript_event_line, transcript_lines,
};
