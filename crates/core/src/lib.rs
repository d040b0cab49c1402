//! seri's vocabulary, shared by every other crate.
//!
//! - [`id`]: time-ordered ids for sessions, events, continuations and runs,
//!   and the per-session [`Seq`].
//! - [`event`]: the append-only event model. A session's transcript is its
//!   events in seq order; everything else is derived from them.
//! - [`session`]: [`SessionInfo`], a pure fold over a session's creation
//!   facts and events.
//! - [`continuation`]: the handoff, sources, edge and manifest types of the
//!   `continue_session` verb.
//! - [`compaction`]: [`ContextCompacted`], the event that replaces the oldest
//!   part of a working context with a four-field [`CompactionRecap`].
//! - [`rewind`]: [`ContextRewound`], the event `/rewind` appends so the
//!   working context goes back to before a turn without rewriting history.
//! - [`permission`] and [`sandbox`]: the session's permission mode and
//!   sandbox as the person chose them, each an event folded into
//!   [`SessionInfo`].
//! - [`plan`], [`usage`], [`time`]: the small types events carry.
//! - [`tokens`] and [`model`]: the context-size estimate and the model
//!   context-window table.
//!
//! This crate does no IO: it reads no clock, no random source, no file and no
//! environment variable, and depends on nothing but serde and thiserror.
//! Folds cannot fail. Whoever needs a fresh id or the current time (the
//! store) passes it in.
//!
//! # Example
//!
//! Events built by hand from values the caller supplies, folded into the
//! session's view (`cargo run -p seri-core --example core_tour` shows more):
//!
//! ```
//! use seri_core::{AgentId, Event, EventBody, EventId, Message, Seq, SessionId, SessionInfo, SessionSeed, Timestamp};
//!
//! let start = Timestamp(1_796_018_400_000);
//! let session = SessionId::v7(1_796_018_400_000, [7; 10]);
//! let seed = SessionSeed::new(session, AgentId::local(), "/repo", start);
//! let event = |seq: u64, body| Event {
//!     id: EventId::v7(1_796_018_400_000 + seq, [seq as u8; 10]),
//!     session_id: session,
//!     seq: Seq(seq),
//!     at: Timestamp(start.millis() + seq as i64 * 1_000),
//!     body,
//! };
//! let events = [
//!     event(1, EventBody::Message(Message::user("Fix the panic on empty input"))),
//!     event(2, EventBody::Message(Message::assistant("Fixed: parse matches on tokens.first()."))),
//!     // A type a newer seri wrote: kept verbatim, folded as a no-op.
//!     event(3, EventBody::from_payload("checkpoint_recorded", br#"{"files":2}"#)?),
//! ];
//!
//! let info = SessionInfo::fold(&seed, &events);
//! assert_eq!(info.title, "Fix the panic on empty input"); // the fallback title
//! assert_eq!((info.message_counts.user, info.message_counts.assistant), (1, 1));
//! assert_eq!(info.next_seq(), Seq(4));
//! assert_eq!(info.updated_at.to_string(), "2026-11-30T06:00:03.000Z");
//! # Ok::<(), seri_core::event::DecodeEventError>(())
//! ```

pub mod compaction;
pub mod continuation;
pub mod event;
pub mod facts;
pub mod fork;
pub mod id;
pub mod json;
pub mod model;
pub mod permission;
pub mod plan;
pub mod range;
pub mod rewind;
pub mod run;
pub mod sandbox;
pub mod session;
pub mod time;
pub mod tokens;
pub mod usage;

pub use compaction::{CompactionRecap, CompactionTrigger, ContextCompacted, RecapField};
pub use continuation::{
    ContinuationEdge, ContinuationHandoff, ContinueReason, Handoff, ManifestRange, PlanTransfer, ProjectionPart,
    SessionContinuationLink, SessionContinuationManifest, Source, Transfer,
};
pub use event::{
    Actor, Attachment, ContinuedFrom, DenialReason, Event, EventBody, MAX_ATTACHMENT_BYTES, MAX_IMAGE_BYTES, Message,
    MessageMeta, ModelChanged, PermissionDenied, PlanUpdated, Role, StatusChanged, Thinking, TitleSource, ToolCall,
    ToolResult, image_media_type,
};
pub use facts::{CommandExit, CommandRun, FileChange, FileRead, Listing, SearchRun, ToolFacts};
pub use fork::{ForkEdge, ForkVia, HistorySegment, SessionForkLink, history_segments};
pub use id::{AgentId, ContinuationId, EventId, ParseIdError, RunId, Seq, SessionId, ToolCallId};
pub use model::{ContextWindow, model_context_window};
pub use permission::{PermissionMode, PermissionModeChanged, UnknownPermissionMode};
pub use plan::{Plan, PlanStep, StepStatus};
pub use range::SeqRange;
pub use rewind::ContextRewound;
pub use run::{Lane, RunKindName, RunStatus, UnknownName};
pub use sandbox::{SandboxChanged, SandboxMode, UnknownSandboxMode};
pub use session::{FrozenPrompt, FrozenTool, PromptFile, SessionInfo, SessionSeed};
pub use time::Timestamp;
pub use tokens::ContextEstimate;
pub use usage::{ModelRef, Usage};
