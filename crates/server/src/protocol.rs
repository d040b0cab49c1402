//! The wire types of `seri serve`, apart from the handlers: request bodies
//! and queries (`*Params`, `*Query`), responses (`*Response`) and WebSocket
//! frames (`*Frame`). JSON is camelCase; every body refuses fields it does
//! not know. The OpenAPI document is generated from these types.
//!
//! Session views (`SessionInfo`, the list's summaries, a manifest) are the
//! store's and core's own serialisations, the same JSON `seri sessions show
//! --json` prints; the document names them as objects.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `GET /api/health`: 200 when the store answers a read, 503 when not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HealthResponse {
    /// Whether the server can serve: it answers, and so does its store.
    pub ok: bool,
    /// The seri version.
    pub version: String,
    /// Why the store does not answer; absent when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

/// `GET /api/sessions` query.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SessionsQuery {
    /// At most this many (default 50, at most 500).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u64>,
    /// Only sessions updated before this time (RFC 3339 in UTC, as
    /// `updatedAt` prints it): the next page after a session updated then.
    #[param(format = DateTime, pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$")]
    pub before: Option<String>,
    /// With `before`, the `id` of the session that was updated then (the
    /// last of the page before): the next page lists the sessions updated
    /// at that same time after it too, and none twice. Without it, a page
    /// ending in a tie of sessions updated at one time skips the rest of them.
    #[param(pattern = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")]
    pub before_id: Option<String>,
}

/// `GET /api/sessions`: newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SessionsResponse {
    /// Each session as `seri sessions list --json` prints it.
    #[schema(value_type = Vec<seri_protocol::SessionSummaryView>)]
    pub sessions: Vec<seri_store::SessionSummary>,
}

/// `POST /api/sessions` body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSessionParams {
    /// The working directory, an absolute path to a directory on the
    /// server (default: where `seri serve` runs).
    #[schema(pattern = "^/")]
    pub cwd: Option<String>,
    /// A title a person gives it: not blank.
    #[schema(pattern = r"[^\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")]
    pub title: Option<String>,
}

/// `POST /api/sessions/{id}/fork` body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForkParams {
    /// The parent's newest event the fork shares (0 shares none; the
    /// default is all of them). Past the parent's newest seq is a 400.
    #[schema(minimum = 0)]
    pub at_seq: Option<u64>,
}

/// `POST /api/sessions` (201) and the `session` of other responses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CreatedSessionResponse {
    /// The `SessionInfo`, with `continuedFrom` / `continuedTo`.
    #[schema(value_type = seri_protocol::SessionInfoView)]
    pub session: seri_core::SessionInfo,
}

/// `GET /api/sessions/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionResponse {
    /// The `SessionInfo`, with `continuedFrom` / `continuedTo`.
    #[schema(value_type = seri_protocol::SessionInfoView)]
    pub session: seri_core::SessionInfo,
    /// The context window of the model that last answered in the session
    /// (else the configured model's), in tokens.
    pub context_window: u64,
    /// How full the newest request was: billed, or (`estimated`) seri's
    /// local estimate when the provider reported no usage; `null` when
    /// neither can be had.
    pub context_usage: Option<ContextUsageBody>,
}

/// How full a session's newest request was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ContextUsageBody {
    /// `input + cacheRead + cacheWrite` of the newest assistant message,
    /// or the local estimate when `estimated`.
    pub tokens: u64,
    /// The context window.
    pub window: u64,
    /// `tokens * 100 / window`, rounded down.
    pub percent: u64,
    /// Whether `tokens` is seri's estimate (the provider reported no usage)
    /// rather than a billed figure.
    pub estimated: bool,
}

impl From<seri_prompt::ContextUsage> for ContextUsageBody {
    fn from(usage: seri_prompt::ContextUsage) -> Self {
        Self { tokens: usage.tokens, window: usage.window.get(), percent: usage.percent(), estimated: usage.estimated }
    }
}

/// `GET /api/sessions/{id}/events` and `/thread` query.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RangeQuery {
    /// The first seq (default 1).
    #[param(minimum = 1, maximum = 9223372036854775807_i64)]
    pub from_seq: Option<u64>,
    /// The last seq, inclusive (default: the newest); not before `fromSeq`
    /// (`bad_range`).
    #[param(minimum = 1, maximum = 9223372036854775807_i64)]
    pub to_seq: Option<u64>,
    /// At most this many events (default 200, at most 1000).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u64>,
}

/// `GET /api/sessions/{id}/events`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventsResponse {
    /// The stored events, in seq order.
    pub events: Vec<EventBody>,
    /// Where the next page starts; `null` when the range is done.
    pub next_seq: Option<u64>,
}

/// One stored event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventBody {
    /// Its seq.
    pub seq: u64,
    /// Its id.
    pub id: String,
    /// When it was appended (RFC 3339).
    pub at: String,
    /// The event: `type` and its fields, as stored.
    #[schema(value_type = seri_protocol::view::StoredEventView)]
    pub event: serde_json::Value,
}

/// `POST /api/sessions/{id}/messages` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageParams {
    /// What the person says: not blank.
    #[schema(pattern = r"[^\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")]
    pub text: String,
    /// Answer when the run ends (`true`, the default), or at once with 202
    /// once the message is posted (the client follows over the WebSocket).
    pub wait: Option<bool>,
    /// Who sends it: a person (`interactive`, the default) or automation
    /// (`script`: the message is a trigger's, and its run never continues
    /// the session or uses the coding tools).
    pub run_kind: Option<MessageRunKind>,
    /// Files sent with the message, stored in the profile's `attachments/`.
    /// The model reads an `[attachment:<id> "name"]` line for each, sees a
    /// picture (PNG, JPEG, GIF, WebP, up to 5 MiB) as an image, and can
    /// `read attachment:<id>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentParams>,
}

/// One file of [`MessageParams::attachments`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttachmentParams {
    /// The file name shown to people and the model (`screenshot.png`):
    /// not blank, no `/`, `\` or NUL.
    #[schema(
        pattern = r"^[^/\\\u0000]*[^/\\\u0000\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^/\\\u0000]*$"
    )]
    pub name: String,
    /// Its media type. A picture's is read from its bytes; this is kept for
    /// other files.
    pub media_type: Option<String>,
    /// Its bytes, as standard base64 with padding (at most
    /// 20 MiB decoded).
    #[schema(
        pattern = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$",
        content_encoding = "base64",
        max_length = 27962028
    )]
    pub data: String,
}

/// `MessageParams::run_kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MessageRunKind {
    /// A person's message.
    Interactive,
    /// Automation's message: answered by a script run.
    Script,
}

/// `POST /api/sessions/{id}/messages` with `wait`: the run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageSessionResponse {
    /// The session the message was posted to.
    pub session_id: String,
    /// The message's event.
    pub event_id: Option<String>,
    /// Its seq.
    pub seq: Option<u64>,
    /// The run that answered it.
    pub run_id: Option<String>,
    /// How the task ended, in headless JSON's words.
    pub status: seri_protocol::TaskStatus,
    /// The final answer, from whichever session gave it.
    pub result: Option<String>,
    /// The newest successor the answer went to, when the session continued.
    pub continued_to_session_id: Option<String>,
    /// What went wrong, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl MessageSessionResponse {
    /// The response to a message whose job came to `report`: what a
    /// waiting client gets, and what the queue records as the job's outcome.
    pub fn of(report: &seri_runloop::jobs::JobReport) -> Self {
        let posted = report.posted.as_ref();
        Self {
            session_id: report.session_id.to_string(),
            event_id: posted.map(|p| p.event_id.to_string()),
            seq: posted.map(|p| p.seq.get()),
            run_id: report.run_id.map(|r| r.to_string()),
            status: seri_protocol::TaskStatus::of(report.status()),
            result: report.result().map(str::to_owned),
            continued_to_session_id: report.continued_to().map(|s| s.to_string()),
            error: report.error().map(str::to_owned),
        }
    }
}

/// `POST /api/sessions/{id}/messages` without `wait` (202): posted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageAcceptedResponse {
    /// The session.
    pub session_id: String,
    /// The message's event.
    pub event_id: String,
    /// Its seq.
    pub seq: u64,
    /// The run answering it.
    pub run_id: String,
    /// The message's job of the shared queue: `GET /api/jobs/{jobId}` says
    /// what it came to, on whichever server it ran.
    pub job_id: String,
}

/// Where a message's job is (`GET /api/jobs/{id}`): seri-protocol's.
pub use seri_protocol::JobStateWord;

/// `GET /api/jobs/{id}`: what became of an accepted message, whichever
/// server ran it, and however many times servers stopped on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobResponse {
    /// The job.
    pub id: String,
    /// The session the message was sent to.
    pub session_id: String,
    /// Where it is.
    pub state: JobStateWord,
    /// The message's event, once posted.
    pub event_id: Option<String>,
    /// The first run answering it, once one started.
    pub run_id: Option<String>,
    /// How many servers stopped while answering it (it is given up at 3).
    pub attempts: u64,
    /// What it came to, once done: the response a waiting client got (or
    /// would have got).
    pub outcome: Option<MessageSessionResponse>,
}

/// What `bash` may touch: `read-only`, `workspace-write` or `full-access`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxModeName {
    /// Read everything but the hidden places; write nothing.
    ReadOnly,
    /// Also write inside the workspace, the temporary folder and the
    /// configured writable paths.
    WorkspaceWrite,
    /// No sandbox.
    FullAccess,
}

impl From<SandboxModeName> for seri_tools::SandboxMode {
    fn from(mode: SandboxModeName) -> Self {
        match mode {
            SandboxModeName::ReadOnly => seri_tools::SandboxMode::ReadOnly,
            SandboxModeName::WorkspaceWrite => seri_tools::SandboxMode::WorkspaceWrite,
            SandboxModeName::FullAccess => seri_tools::SandboxMode::FullAccess,
        }
    }
}

impl From<seri_tools::SandboxMode> for SandboxModeName {
    fn from(mode: seri_tools::SandboxMode) -> Self {
        match mode {
            seri_tools::SandboxMode::ReadOnly => SandboxModeName::ReadOnly,
            seri_tools::SandboxMode::WorkspaceWrite => SandboxModeName::WorkspaceWrite,
            seri_tools::SandboxMode::FullAccess => SandboxModeName::FullAccess,
        }
    }
}

/// `PUT /api/sessions/{id}/sandbox` body: what to change, from the
/// session's next `bash` call on (and its children's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxParams {
    /// The mode; unchanged when left out.
    pub mode: Option<SandboxModeName>,
    /// Whether commands may open TCP connections; unchanged when left out.
    pub network: Option<bool>,
}

/// `GET` and `PUT /api/sessions/{id}/sandbox`: the session's sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxResponse {
    /// The mode in force.
    pub mode: SandboxModeName,
    /// Whether commands may open TCP connections.
    pub network: bool,
    /// The same in words, with whether this kernel enforces it:
    /// `workspace-write, network off (Landlock)`.
    pub description: String,
}

/// How much a session's tools may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionModeName {
    /// The permission policy as configured: reading runs, the rest asks.
    Default,
    /// File edits and writes inside the working directory run without asking.
    AcceptEdits,
    /// Only reading tools run; the agent proposes a plan.
    Plan,
    /// Nothing asks; `deny` still refuses.
    Bypass,
}

impl From<PermissionModeName> for seri_core::PermissionMode {
    fn from(mode: PermissionModeName) -> Self {
        match mode {
            PermissionModeName::Default => seri_core::PermissionMode::Default,
            PermissionModeName::AcceptEdits => seri_core::PermissionMode::AcceptEdits,
            PermissionModeName::Plan => seri_core::PermissionMode::Plan,
            PermissionModeName::Bypass => seri_core::PermissionMode::Bypass,
        }
    }
}

impl From<seri_core::PermissionMode> for PermissionModeName {
    fn from(mode: seri_core::PermissionMode) -> Self {
        match mode {
            seri_core::PermissionMode::Default => PermissionModeName::Default,
            seri_core::PermissionMode::AcceptEdits => PermissionModeName::AcceptEdits,
            seri_core::PermissionMode::Plan => PermissionModeName::Plan,
            seri_core::PermissionMode::Bypass => PermissionModeName::Bypass,
        }
    }
}

/// `PUT /api/sessions/{id}/permissions` body: the mode the session's calls
/// run under from its next call on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PermissionsParams {
    /// The mode.
    pub mode: PermissionModeName,
}

/// `GET` and `PUT /api/sessions/{id}/permissions`: the session's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionsResponse {
    /// The mode in force.
    pub mode: PermissionModeName,
    /// Whether the session chose it (a `permission_mode_changed` event);
    /// `false`: the server's configured mode.
    pub chosen: bool,
}

/// `POST /api/sessions/{id}/cancel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CancelResponse {
    /// Whether a run of this server was running there to cancel.
    pub cancelled: bool,
}

/// `POST /api/runs/{runId}/approvals/{callId}` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalParams {
    /// Yes or no.
    pub allow: bool,
    /// `session`: allow this tool for the rest of the session, unasked.
    pub remember: Option<Remember>,
    /// With `allow: false`: what to do instead, in the person's words,
    /// which reach the model with the refusal.
    pub instead: Option<String>,
}

/// How long a yes lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Remember {
    /// For the rest of the session.
    Session,
}

/// `POST /api/runs/{runId}/approvals/{callId}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApprovalResponse {
    /// The question was waiting and is answered now.
    pub answered: bool,
}

impl ApprovalRequestedFrame {
    /// The `approval-requested` frame of a question waiting now; `arguments`
    /// are its call's, as the store has them.
    pub fn of(pending: &seri_runloop::PendingApproval, arguments: serde_json::Value) -> Self {
        Self {
            kind: ApprovalRequestedTag::Tag,
            session_id: pending.call.session_id.to_string(),
            run_id: pending.call.run_id.map(|r| r.to_string()).unwrap_or_default(),
            call_id: pending.call.call_id.to_string(),
            tool: pending.request.tool.clone(),
            arguments,
            summary: pending.request.summary(),
            preview: pending.request.preview.clone(),
        }
    }
}

/// `GET /api/sessions/{id}/approvals`: the questions that wait for an
/// answer in a session now, for a client that arrives after they were asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ApprovalsResponse {
    /// Each as its `approval-requested` frame told it, oldest first.
    pub approvals: Vec<ApprovalRequestedFrame>,
}

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

/// Every error: a status of 4xx or 5xx and this body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ErrorResponse {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// What went wrong, for a program (`code`) and a person (`message`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// `unauthorized`, `not_found`, `bad_request`, `bad_json`, `unknown_field`,
    /// `too_large`, `bad_range`, `busy`, `internal`, …
    pub code: String,
    /// A sentence naming what was wrong.
    pub message: String,
    /// The queued job the failure concerns, when there is one: a 503
    /// `handed_over` names the job another server answers
    /// (`GET /api/jobs/{jobId}` says what became of it).
    #[serde(rename = "jobId", default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
}

/// Declares a frame's `type` word: a one-value enum, so a frame's own
/// struct carries its tag and the document names every frame as a model of
/// its own (`SessionChangeFrame`), told apart by `type`.
// `$tag` is a `tt`, not a `literal`: utoipa reads the rename only from a
// plain literal token. The variant goes undocumented on purpose: a
// documented variant becomes a `oneOf` of one in the document.
macro_rules! frame_tag {
    ($name:ident = $tag:tt) => {
        #[doc = concat!("The `type` of a `", $tag, "` frame.")]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
        #[allow(missing_docs)]
        pub enum $name {
            #[default]
            #[serde(rename = $tag)]
            Tag,
        }
    };
}

frame_tag!(SubscribeTag = "subscribe");
frame_tag!(UnsubscribeTag = "unsubscribe");
frame_tag!(SessionChangeTag = "session-change");
frame_tag!(AccountChangeTag = "account-change");
frame_tag!(RunEventTag = "run-event");
frame_tag!(ApprovalRequestedTag = "approval-requested");
frame_tag!(SubscribedTag = "subscribed");
frame_tag!(ErrorTag = "error");

/// What a WebSocket client sends: a JSON object whose `type` says which.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
#[schema(discriminator = "type")]
pub enum ClientFrame {
    /// Hear about a session or the account.
    Subscribe(SubscribeFrame),
    /// Stop hearing about them.
    Unsubscribe(UnsubscribeFrame),
}

impl ClientFrame {
    /// Reads a client's frame, naming what was wrong when it does not fit:
    /// the `type` first, then that frame's fields.
    pub fn parse(text: &str) -> Result<Self, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let fields = |e: serde_json::Error| e.to_string();
        match value.get("type").and_then(serde_json::Value::as_str) {
            Some("subscribe") => serde_json::from_value(value).map(ClientFrame::Subscribe).map_err(fields),
            Some("unsubscribe") => serde_json::from_value(value).map(ClientFrame::Unsubscribe).map_err(fields),
            Some(other) => Err(format!("unknown frame type `{other}` (subscribe or unsubscribe)")),
            None => Err("a frame is an object with a `type`".to_owned()),
        }
    }
}

/// `subscribe`: hear about one session (`sessionId`) or the whole account
/// (`account: true`); both may be given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubscribeFrame {
    /// `subscribe`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: SubscribeTag,
    /// The session: its `session-change`, `run-event` and
    /// `approval-requested` frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = "uuid")]
    pub session_id: Option<String>,
    /// The account: `account-change`, and `session-change` for every session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<bool>,
}

/// `unsubscribe`: stop hearing about a session, or the account.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnsubscribeFrame {
    /// `unsubscribe`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: UnsubscribeTag,
    /// The session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = "uuid")]
    pub session_id: Option<String>,
    /// The account (`true`: stop hearing it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<bool>,
}

/// What the server sends a WebSocket client: a JSON object whose `type`
/// says which frame it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
#[schema(discriminator = "type")]
pub enum ServerFrame {
    /// A session changed.
    SessionChange(SessionChangeFrame),
    /// The list of sessions changed.
    AccountChange(AccountChangeFrame),
    /// A run reported an event.
    RunEvent(RunEventFrame),
    /// A run asks a person.
    ApprovalRequested(ApprovalRequestedFrame),
    /// A subscription took effect.
    Subscribed(SubscribedFrame),
    /// A client frame was refused.
    Error(ErrorFrame),
}

/// `session-change`: a session changed (both ends of a continuation hear
/// one each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionChangeFrame {
    /// `session-change`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: SessionChangeTag,
    /// The session.
    pub session_id: String,
    /// Its `SessionInfo` now.
    #[schema(value_type = seri_protocol::SessionInfoView)]
    pub session: Box<seri_core::SessionInfo>,
}

/// `account-change`: the list of sessions changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountChangeFrame {
    /// `account-change`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: AccountChangeTag,
    /// What happened, one word each.
    pub reasons: Vec<AccountChangeReasonWord>,
    /// The sessions it is about.
    pub session_ids: Vec<String>,
}

/// Why the list of sessions changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AccountChangeReasonWord {
    /// A session was made.
    SessionCreated,
    /// A session's view changed (a title, a status, a new event).
    SessionUpdated,
    /// A session continued into a successor.
    SessionContinued,
}

impl From<seri_runloop::AccountChangeReason> for AccountChangeReasonWord {
    fn from(reason: seri_runloop::AccountChangeReason) -> Self {
        use seri_runloop::AccountChangeReason as R;
        match reason {
            R::SessionCreated => Self::SessionCreated,
            R::SessionUpdated => Self::SessionUpdated,
            R::SessionContinued => Self::SessionContinued,
        }
    }
}

/// `run-event`: a run of this server reported an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunEventFrame {
    /// `run-event`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: RunEventTag,
    /// The session the run runs in.
    pub session_id: String,
    /// The run.
    pub run_id: String,
    /// The event, as one line of `--output-format stream-json` prints it
    /// (that family's snake_case keys, embedded whole).
    pub event: seri_protocol::StreamEvent,
}

/// `approval-requested`: a run asks a person before a tool acts; answer
/// with `POST /api/runs/{runId}/approvals/{callId}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequestedFrame {
    /// `approval-requested`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: ApprovalRequestedTag,
    /// The session.
    pub session_id: String,
    /// The run.
    pub run_id: String,
    /// The call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The call's arguments (`null` when they cannot be read back).
    #[schema(value_type = Object, nullable = true)]
    pub arguments: serde_json::Value,
    /// One line: `bash: cargo test`.
    pub summary: String,
    /// What would change, where there is something to show.
    pub preview: Option<String>,
}

/// `subscribed`: a subscription (or unsubscription) took effect; frames
/// for it follow from here on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscribedFrame {
    /// `subscribed`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: SubscribedTag,
    /// The session, when the client's frame named one.
    pub session_id: Option<String>,
    /// Whether the client now hears the account.
    pub account: bool,
}

/// `error`: a client frame was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorFrame {
    /// `error`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: ErrorTag,
    /// What was wrong.
    pub error: ErrorDetail,
}

impl ServerFrame {
    /// `session-change` of `session_id`, whose view is `session` now.
    pub fn session_change(session_id: String, session: seri_core::SessionInfo) -> Self {
        Self::SessionChange(SessionChangeFrame { kind: SessionChangeTag::Tag, session_id, session: Box::new(session) })
    }

    /// `account-change` for `reasons`, about `session_ids`.
    pub fn account_change(
        reasons: impl IntoIterator<Item = seri_runloop::AccountChangeReason>,
        session_ids: Vec<String>,
    ) -> Self {
        let reasons = reasons.into_iter().map(AccountChangeReasonWord::from).collect();
        Self::AccountChange(AccountChangeFrame { kind: AccountChangeTag::Tag, reasons, session_ids })
    }

    /// `run-event` of `run_id` in `session_id`.
    pub fn run_event(session_id: String, run_id: String, event: seri_protocol::StreamEvent) -> Self {
        Self::RunEvent(RunEventFrame { kind: RunEventTag::Tag, session_id, run_id, event })
    }

    /// `subscribed`: the client hears `session_id` (when named) and the
    /// account when `account`.
    pub fn subscribed(session_id: Option<String>, account: bool) -> Self {
        Self::Subscribed(SubscribedFrame { kind: SubscribedTag::Tag, session_id, account })
    }

    /// `error`: a client frame was refused with `code`, saying why.
    pub fn error(code: &str, message: String) -> Self {
        Self::Error(ErrorFrame {
            kind: ErrorTag::Tag,
            error: ErrorDetail { code: code.to_owned(), message, job_id: None },
        })
    }
}
