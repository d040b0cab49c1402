//! The continuation vocabulary: the handoff an agent writes, the sources it
//! cites, the edge between predecessor and successor, and the manifest of
//! what the successor's projection was built from.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::id::{ContinuationId, EventId, Seq, SessionId, ToolCallId};
use crate::time::Timestamp;

/// Why an agent continued into a successor session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContinueReason {
    /// The user changed subject.
    TopicChange,
    /// A phase of the work ended (planning done, now building).
    PhaseChange,
    /// The user wants to focus on one thread of the conversation.
    Refocus,
    /// The model's context is filling.
    ContextPressure,
    /// The user asked for a fresh session.
    UserRequest,
}

impl ContinueReason {
    /// Every reason, in the order the documentation lists them.
    pub const ALL: [ContinueReason; 5] = [
        ContinueReason::TopicChange,
        ContinueReason::PhaseChange,
        ContinueReason::Refocus,
        ContinueReason::ContextPressure,
        ContinueReason::UserRequest,
    ];

    /// The wire name, e.g. `topic_change`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ContinueReason::TopicChange => "topic_change",
            ContinueReason::PhaseChange => "phase_change",
            ContinueReason::Refocus => "refocus",
            ContinueReason::ContextPressure => "context_pressure",
            ContinueReason::UserRequest => "user_request",
        }
    }
}

impl std::fmt::Display for ContinueReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Prose for a colleague who has read nothing of the predecessor.
///
/// The seven named sections are what the verb contract asks for; any other
/// key the agent invents is kept in `extra`, its value normalised to a list of
/// strings, and rendered as its own section.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Handoff {
    /// What the conversation is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// What the user is asking for right now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_request: Option<String>,
    /// Facts established so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub established_facts: Vec<String>,
    /// Decisions made, with their reasons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<String>,
    /// Questions still open.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_questions: Vec<String>,
    /// What to do next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next_actions: Vec<String>,
    /// Things to be careful about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cautions: Vec<String>,
    /// Sections the agent added, by key, in key order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

/// What a continuation was asked for, as the runtime parsed the
/// `continue_session` call: what a person's card of it shows. Stored on the
/// successor's projection message ([`crate::MessageMeta::handoff`]), which
/// is written in the transaction that makes the edge; the projection's
/// text is for the model, and nothing reads this back out of it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinuationHandoff {
    /// The successor's title, as the call gave it.
    pub title: String,
    /// The successor's description, as the call gave it.
    pub description: String,
    /// The handoff, extra keys normalised.
    pub handoff: Handoff,
}

/// An exact pointer the successor can follow back to material.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// An address: `hm://`, `ipfs://`, `http://` or `https://`.
    Resource {
        /// The address.
        uri: String,
    },
    /// A file under the profile's memory folder, written `~/memory/…`.
    Memory {
        /// The `~/memory/…` path.
        path: String,
    },
    /// A seq range of one of this agent's threads, inclusive.
    #[serde(rename_all = "camelCase")]
    SessionEvents {
        /// The thread.
        session_id: SessionId,
        /// The first seq cited.
        from_seq: Seq,
        /// The last seq cited.
        to_seq: Seq,
    },
    /// One event of one of this agent's threads.
    #[serde(rename_all = "camelCase")]
    SessionEvent {
        /// The thread.
        session_id: SessionId,
        /// The seq cited.
        seq: Seq,
    },
}

/// What happens to the predecessor's plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanTransfer {
    /// Copy it, owner cleared, so the successor's run adopts it.
    Carry,
    /// Close it in the predecessor; the successor starts without one.
    Close,
    /// Leave it where it is; the successor starts without one.
    Omit,
}

/// What the successor takes over besides the projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transfer {
    /// The plan; when absent, `carry` if it has unfinished steps, else `omit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanTransfer>,
}

/// One side of a continuation, as the other side's `SessionInfo` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContinuationLink {
    /// The edge.
    pub continuation_id: ContinuationId,
    /// The session on the other side.
    pub session_id: SessionId,
    /// Its current title.
    pub title: String,
    /// Why the continuation happened.
    pub reason: ContinueReason,
    /// When.
    pub at: Timestamp,
}

/// One row of `session_continuations`.
#[derive(Debug, Clone, PartialEq)]
pub struct ContinuationEdge {
    /// The edge's id.
    pub id: ContinuationId,
    /// The session that continued.
    pub predecessor_session_id: SessionId,
    /// The session it continued into.
    pub successor_session_id: SessionId,
    /// The first session of the chain.
    pub origin_session_id: SessionId,
    /// The `continue_session` call; unique with the predecessor (the idempotency key).
    pub tool_call_id: ToolCallId,
    /// The user message that the successor answers.
    pub initiating_event_id: EventId,
    /// Why.
    pub reason: ContinueReason,
    /// What the projection was built from.
    pub manifest: SessionContinuationManifest,
    /// When the edge was created.
    pub created_at: Timestamp,
}

/// The format version of [`SessionContinuationManifest`] written by this build.
pub const MANIFEST_FORMAT_VERSION: u32 = 1;

/// What a projection was built from: stored on the edge as CBOR, so anyone
/// can tell later what the successor saw and what it was only pointed at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContinuationManifest {
    /// [`MANIFEST_FORMAT_VERSION`] at the time of writing.
    pub format_version: u32,
    /// The byte budget for excerpts and recent exchanges.
    pub budget_bytes: u64,
    /// Bytes of the budget that were used.
    pub used_bytes: u64,
    /// Bytes of the whole projection text.
    pub projection_bytes: u64,
    /// The first session of the chain.
    pub origin_session_id: SessionId,
    /// The session continued from.
    pub predecessor_session_id: SessionId,
    /// How many continuations separate the successor from the origin (1 for the first).
    pub depth: u32,
    /// The initiating message's seq in the predecessor.
    pub initiating_seq: Seq,
    /// The sources cited, as given.
    pub sources: Vec<Source>,
    /// Ranges loaded into the projection, in the order they appear.
    pub included: Vec<ManifestRange>,
    /// Ranges cited or recent that did not fit: linked, not loaded.
    pub omitted: Vec<ManifestRange>,
}

/// A contiguous seq range of the predecessor's thread and what it costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestRange {
    /// Why the range was wanted.
    pub part: ProjectionPart,
    /// The first seq.
    pub from_seq: Seq,
    /// The last seq, inclusive.
    pub to_seq: Seq,
    /// Bytes of the rendered lines.
    pub bytes: u64,
}

/// Which part of a projection a range belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProjectionPart {
    /// A range the agent cited as a source.
    Excerpt,
    /// One exchange (a user message and everything up to the next) before the
    /// initiating message.
    RecentExchange,
}
