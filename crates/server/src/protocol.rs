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
    pub limit: Option<u64>,
    /// Only sessions updated before this time (RFC 3339, as `updatedAt`
    /// prints it): the next page after a session updated then.
    pub before: Option<String>,
}

/// `GET /api/sessions`: newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SessionsResponse {
    /// Each session as `seri sessions list --json` prints it.
    #[schema(value_type = Vec<Object>)]
    pub sessions: Vec<serde_json::Value>,
}

/// `POST /api/sessions` body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSessionParams {
    /// The working directory (default: where `seri serve` runs).
    pub cwd: Option<String>,
    /// A title a person gives it.
    pub title: Option<String>,
}

/// `POST /api/sessions` (201) and the `session` of other responses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CreatedSessionResponse {
    /// The `SessionInfo`, with `continuedFrom` / `continuedTo`.
    #[schema(value_type = Object)]
    pub session: serde_json::Value,
}

/// `GET /api/sessions/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionResponse {
    /// The `SessionInfo`, with `continuedFrom` / `continuedTo`.
    #[schema(value_type = Object)]
    pub session: serde_json::Value,
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

/// `GET /api/sessions/{id}/events` and `/thread` query.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RangeQuery {
    /// The first seq (default 1).
    pub from_seq: Option<u64>,
    /// The last seq, inclusive (default: the newest).
    pub to_seq: Option<u64>,
    /// At most this many events (default 200, at most 1000).
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
    #[schema(value_type = Object)]
    pub event: serde_json::Value,
}

/// `POST /api/sessions/{id}/messages` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageParams {
    /// What the person says.
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
    /// The file name shown to people and the model (`screenshot.png`).
    pub name: String,
    /// Its media type. A picture's is read from its bytes; this is kept for
    /// other files.
    pub media_type: Option<String>,
    /// Its bytes, as standard base64.
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
    /// `succeeded`, `max_turns` or `failed`.
    pub status: String,
    /// The final answer, from whichever session gave it.
    pub result: Option<String>,
    /// The newest successor the answer went to, when the session continued.
    pub continued_to_session_id: Option<String>,
    /// What went wrong, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
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

/// Where a message's job is (`GET /api/jobs/{id}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStateWord {
    /// Waiting for a server (accepted; or handed back by a server that stopped).
    Queued,
    /// A server is answering it (or waiting for its session's older messages).
    Running,
    /// Answered, or failed saying why: see `outcome`.
    Done,
}

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

impl ServerFrame {
    /// The `approval-requested` frame of a question waiting now; `arguments`
    /// are its call's, as the store has them.
    pub fn approval_requested(pending: &seri_runloop::PendingApproval, arguments: serde_json::Value) -> Self {
        ServerFrame::ApprovalRequested {
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
    #[schema(value_type = Vec<Object>)]
    pub approvals: Vec<serde_json::Value>,
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
    pub manifest: serde_json::Value,
    /// When.
    pub created_at: String,
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

/// What a WebSocket client sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ClientFrame {
    /// Hear about one session (`sessionId`) or the whole account
    /// (`account: true`).
    Subscribe {
        /// The session.
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        /// The account: `account-change`, and `session-change` for every session.
        account: Option<bool>,
    },
    /// Stop hearing about a session, or the account.
    Unsubscribe {
        /// The session.
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        /// The account.
        account: Option<bool>,
    },
}

/// What the server sends a WebSocket client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
pub enum ServerFrame {
    /// A session changed (both ends of a continuation hear one each).
    SessionChange {
        /// The session.
        session_id: String,
        /// Its `SessionInfo` now.
        #[schema(value_type = Object)]
        session: serde_json::Value,
    },
    /// The list of sessions changed.
    AccountChange {
        /// `session-created`, `session-updated`, `session-continued`.
        reasons: Vec<String>,
        /// The sessions it is about.
        session_ids: Vec<String>,
    },
    /// A run of this server reported an event (one line of stream-json).
    RunEvent {
        /// The session the run runs in.
        session_id: String,
        /// The run.
        run_id: String,
        /// The event.
        #[schema(value_type = Object)]
        event: serde_json::Value,
    },
    /// A run asks a person before a tool acts; answer with
    /// `POST /api/runs/{runId}/approvals/{callId}`.
    ApprovalRequested {
        /// The session.
        session_id: String,
        /// The run.
        run_id: String,
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
        /// The call's arguments.
        #[schema(value_type = Object)]
        arguments: serde_json::Value,
        /// One line: `bash: cargo test`.
        summary: String,
        /// What would change, where there is something to show.
        preview: Option<String>,
    },
    /// A subscription (or unsubscription) took effect: frames for it
    /// follow from here on.
    Subscribed {
        /// The session, when the frame named one.
        session_id: Option<String>,
        /// Whether the client now hears the account.
        account: bool,
    },
    /// A client frame was refused.
    Error {
        /// What was wrong.
        error: ErrorDetail,
    },
}
