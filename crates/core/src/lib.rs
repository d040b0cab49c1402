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
//! - [`plan`], [`usage`], [`time`]: the small types events carry.
//! - [`tokens`] and [`model`]: the context-size estimate and the model
//!   context-window table.
//!
//! This crate does no IO: it reads no clock, no random source, no file and no
//! environment variable, and depends on nothing but serde and thiserror.
//! Folds cannot fail. Whoever needs a fresh id or the current time (the
//! store) passes it in.

pub mod compaction;
pub mod continuation;
pub mod event;
pub mod id;
pub mod model;
pub mod plan;
pub mod rewind;
pub mod session;
pub mod time;
pub mod tokens;
pub mod usage;

pub use compaction::{CompactionRecap, CompactionTrigger, ContextCompacted, RecapField};
pub use continuation::{
    ContinuationEdge, ContinueReason, Handoff, ManifestRange, PlanTransfer, ProjectionPart, SessionContinuationLink,
    SessionContinuationManifest, Source, Transfer,
};
pub use event::{
    Actor, Attachment, ContinuedFrom, DenialReason, Event, EventBody, Message, MessageMeta, PermissionDenied,
    PlanUpdated, Role, StatusChanged, Thinking, TitleSource, ToolCall, ToolResult,
};
pub use id::{AgentId, ContinuationId, EventId, ParseIdError, RunId, Seq, SessionId, ToolCallId};
pub use model::{ContextWindow, model_context_window};
pub use plan::{Plan, PlanStep, StepStatus};
pub use rewind::ContextRewound;
pub use session::{FrozenPrompt, PromptFile, SessionInfo, SessionSeed};
pub use time::Timestamp;
pub use tokens::ContextEstimate;
pub use usage::{ModelRef, Usage};
