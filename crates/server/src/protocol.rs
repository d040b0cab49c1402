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

mod continuations;
mod frames;

pub use continuations::*;
pub use frames::*;

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
    /// The session's context window, in tokens: its model's (its own
    /// choice, else the configured one), or the configured override.
    pub context_window: u64,
    /// How full the newest request was: billed, or (`estimated`) seri's
    /// estimate of the whole next request (system prompt, tool
    /// definitions, working context: the REPL's `/context` figure) when
    /// the provider reported no usage; `null` before the first answer.
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
    /// A `UserPromptSubmit` hook blocked the message: it was not recorded
    /// and no run started. What the hook said, whole, for the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_by_hook: Option<String>,
}

impl MessageSessionResponse {
    /// The response to a message whose job came to `outcome`, built when
    /// read: what a waiting client gets, and `GET /api/jobs/{id}` shows.
    /// An outcome that names no session (a job that never ran) is the
    /// job's own session's.
    pub fn of(session: seri_core::SessionId, outcome: &seri_store::JobOutcome) -> Self {
        Self {
            session_id: outcome.session_id.unwrap_or(session).to_string(),
            event_id: outcome.event_id.map(|e| e.to_string()),
            seq: outcome.seq.map(seri_core::Seq::get),
            run_id: outcome.run_id.map(|r| r.to_string()),
            status: outcome.status.into(),
            result: outcome.result.clone(),
            continued_to_session_id: outcome.continued_to_session_id.map(|s| s.to_string()),
            error: outcome.error.clone(),
            blocked_by_hook: outcome.blocked_by_hook.clone(),
        }
    }

    /// The response to a job's outcome, or the error a client is told for
    /// a job done without one.
    pub fn of_job(job: &seri_store::RunJob) -> Result<Self, crate::error::ApiError> {
        match &job.outcome {
            Some(outcome) => Ok(Self::of(job.session_id, outcome)),
            None => Err(crate::error::ApiError::internal(format!("job {} is done without an outcome", job.id))),
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

impl ApprovalParams {
    /// What the answer decides; `instead` with a yes is refused.
    pub(crate) fn decision(&self) -> Result<seri_tools::Decision, crate::error::ApiError> {
        use seri_tools::Decision;
        let instead = self.instead.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned);
        Ok(match (self.allow, self.remember, instead) {
            (true, _, Some(_)) => {
                return Err(crate::error::ApiError::bad_request(
                    "bad_request",
                    "instead goes with allow: false (a refusal with words)",
                ));
            }
            (true, Some(Remember::Session), None) => Decision::AllowForSession,
            (true, None, None) => Decision::Allow,
            (false, _, Some(words)) => Decision::Instead(words),
            (false, _, None) => Decision::Deny,
        })
    }
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

/// `GET /api/sessions/{id}/approvals`: the questions that wait for an
/// answer in a session now, for a client that arrives after they were asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ApprovalsResponse {
    /// Each as its `approval-requested` frame told it, oldest first.
    pub approvals: Vec<ApprovalRequestedFrame>,
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
