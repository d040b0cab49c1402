//! The bodies of the continuation routes: an edge with its manifest
//! decoded, its handoff, and the successor's reads of its predecessor
//! (recalls).

use super::*;

/// `GET /api/continuations/{id}`: the edge, its manifest decoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContinuationResponse {
    /// The edge.
    pub id: String,
    /// The session that continued.
    pub predecessor_session_id: String,
    /// The session it continued into.
    pub successor_session_id: String,
    /// The first session of the chain.
    pub origin_session_id: String,
    /// The `continue_session` call.
    pub tool_call_id: String,
    /// The message the successor answers, in the predecessor.
    pub initiating_event_id: String,
    /// Why (`topic_change`, …).
    pub reason: String,
    /// What the projection included and left out.
    #[schema(value_type = Object)]
    pub manifest: seri_core::SessionContinuationManifest,
    /// When.
    pub created_at: String,
    /// How often the successor read back its predecessor's thread, and
    /// whether what it read had been omitted, never included, or carried.
    pub recalls: RecallsBody,
    /// The successor's title, as the `continue_session` call gave it;
    /// `null` when the call cannot be read back.
    pub title: Option<String>,
    /// The successor's description, as the call gave it; `null` likewise.
    pub description: Option<String>,
    /// The handoff, as the runtime parsed the call (sources and description
    /// a model nested inside it hoisted, extra sections normalised to
    /// lines); `null` when the call cannot be read back. What a client
    /// shows of a handoff comes from here, never from the projection text.
    pub handoff: Option<HandoffBody>,
}

/// A handoff: the seven named sections, each absent or empty when the
/// agent left it out, then the sections the agent added, by key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HandoffBody {
    /// What the conversation is for.
    pub purpose: Option<String>,
    /// What the user is asking for right now.
    pub current_request: Option<String>,
    /// Facts established so far.
    pub established_facts: Vec<String>,
    /// Decisions made, with their reasons.
    pub decisions: Vec<String>,
    /// Questions still open.
    pub open_questions: Vec<String>,
    /// What to do next.
    pub next_actions: Vec<String>,
    /// Things to be careful about.
    pub cautions: Vec<String>,
    /// Sections the agent added: each key a title (plain text, never
    /// markup), its lines in order.
    pub extra: std::collections::BTreeMap<String, Vec<String>>,
}

impl From<seri_core::Handoff> for HandoffBody {
    fn from(h: seri_core::Handoff) -> Self {
        Self {
            purpose: h.purpose,
            current_request: h.current_request,
            established_facts: h.established_facts,
            decisions: h.decisions,
            open_questions: h.open_questions,
            next_actions: h.next_actions,
            cautions: h.cautions,
            extra: h.extra,
        }
    }
}

/// A continuation's recalls (`seri sessions recalls` reports the same).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecallsBody {
    /// Reads that overlapped a range the projection omitted for its budget.
    pub omitted: u64,
    /// Reads of seqs the projection neither carried nor omitted.
    pub not_included: u64,
    /// Reads of what the projection carried already.
    pub already_included: u64,
    /// Each read, in the order the successor made them.
    pub reads: Vec<RecallBody>,
}

/// One read of the predecessor's thread by the successor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecallBody {
    /// The first seq read.
    pub from_seq: u64,
    /// The last seq read.
    pub to_seq: u64,
    /// How it relates to the projection.
    pub kind: RecallKindWord,
}

/// How a read relates to what the projection carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecallKindWord {
    /// It overlaps an omitted range.
    Omitted,
    /// It reaches seqs neither carried nor omitted.
    NotIncluded,
    /// It read only what was carried.
    AlreadyIncluded,
}

/// `GET /api/recalls` query.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RecallsQuery {
    /// Only the continuations into and out of this session, each whether
    /// its successor read anything back or not (`seri sessions recalls
    /// ID`); without it, every continuation of the caller's.
    #[param(format = "uuid")]
    pub session_id: Option<String>,
}

/// `GET /api/recalls`: how often successors read back their predecessors'
/// threads, across the profile; the same fields as `seri sessions recalls
/// --json`, so budgets can be tuned from either.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecallsResponse {
    /// Continuations looked at.
    pub continuations: u64,
    /// Continuations whose successor read anything back.
    pub with_recalls: u64,
    /// Every read, counted by kind.
    pub totals: RecallCountsBody,
    /// Every read, by the continuation's reason (`topic_change`, …); a
    /// reason no continuation had is absent.
    pub by_reason: std::collections::BTreeMap<String, RecallCountsBody>,
    /// Each continuation that had any reads back (with `sessionId`: each
    /// continuation into and out of the session), oldest first.
    pub each: Vec<ContinuationRecallsBody>,
}

/// Reads back, counted by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecallCountsBody {
    /// Reads that overlapped a range the projection omitted for its budget.
    pub omitted: u64,
    /// Reads of seqs the projection neither carried nor omitted.
    pub not_included: u64,
    /// Reads of what the projection carried already.
    pub already_included: u64,
}

/// One continuation's reads back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContinuationRecallsBody {
    /// The continuation (`GET /api/continuations/{id}`).
    #[schema(format = "uuid")]
    pub continuation_id: String,
    /// The session continued from.
    #[schema(format = "uuid")]
    pub predecessor_session_id: String,
    /// The successor whose reads these are.
    #[schema(format = "uuid")]
    pub successor_session_id: String,
    /// Why it continued.
    pub reason: seri_protocol::ContinueReasonWord,
    /// The projection's budget, in bytes.
    pub budget_bytes: u64,
    /// Bytes of the budget used.
    pub used_bytes: u64,
    /// Bytes of the ranges omitted for lack of budget.
    pub omitted_bytes: u64,
    /// Each read, in the order the successor made them.
    pub recalls: Vec<RecallBody>,
    /// The reads counted by kind.
    pub counts: RecallCountsBody,
}
