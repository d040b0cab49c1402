//! `POST /api/sessions/{id}/messages`, in three steps: what the post asks
//! for ([`Post::parse`]: checked, its attachments decoded, its key and
//! digest), the job it becomes ([`submit`]: attachments stored, the
//! message queued once per key), and the answer ([`answer`]: the run's end,
//! or 202 once posted, turned into the response).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use seri_core::{Actor, AgentId, Message, SessionId};
use seri_runloop::Lane;
use seri_runloop::jobs::{Acceptance, Accepted, JobEnd, JobRequest};
use seri_store::Enqueued;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::idempotency;
use crate::paths;
use crate::protocol::{ErrorResponse, MessageAcceptedResponse, MessageParams, MessageRunKind, MessageSessionResponse};
use crate::state::ServerState;

/// Sends a message to a session.
///
/// The message waits for the session like any run: when another run holds
/// it (another client's, another process's), it is posted once that run
/// ends, never inside its turn. With `wait` (the default) the answer comes
/// when the run ends; without, 202 comes once the message is posted.
#[utoipa::path(post, path = paths::SESSION_MESSAGES, params(("id" = String, Path, description = "session id"),
        ("Idempotency-Key" = Option<String>, Header, description = "A key the client makes for this message \
            (a UUID; 1 to 255 visible ASCII characters, bare or quoted). Posting again with the same key and the \
            same message (text, runKind, attachments) queues nothing: the answer is the first post's, waited for \
            like it (`wait`), or 202 naming the same job. Unique per session; kept as long as the message's job \
            (a week after it is done).")),
    request_body = MessageParams,
    responses((status = 200, body = MessageSessionResponse, description = "the run ended (`wait`, the default)"),
        (status = 202, body = MessageAcceptedResponse, description = "posted (`wait: false`)"),
        (status = 409, body = ErrorResponse, description = "the message was not posted (`not_posted`), or the session is busy (`busy`)"),
        (status = 422, body = ErrorResponse,
            description = "the `Idempotency-Key` was sent before with another message (`idempotency_key_reused`, naming the job)"),
        (status = 503, body = ErrorResponse,
            description = "the store does not answer, or this server is stopping: `handed_over` names the job (`jobId`) another server answers")))]
pub(crate) async fn post_message(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
    ApiJson(params): ApiJson<MessageParams>,
) -> Result<Response, ApiError> {
    let id = super::session_id(&id)?;
    let post = Post::parse(&headers, params)?;
    // A post again under a key already used finds the job the first made,
    // before anything (its attachments) is stored again.
    if let Some((key, digest)) = &post.key
        && let Some(earlier) = idempotency::earlier(&state, &agent, id, key, digest).await?
    {
        return idempotency::answer(&state, &agent, key, earlier, post.waits).await;
    }
    match submit(&state, &agent, id, &post).await? {
        Submitted::Accepted(accepted) => answer(id, accepted, post.waits).await,
        Submitted::Earlier(job) => {
            let key = post.key.as_ref().map(|(key, _)| key.as_str()).unwrap_or_default();
            idempotency::answer(&state, &agent, key, *job, post.waits).await
        }
    }
}

/// What a post asks for, checked, before anything is stored.
struct Post {
    /// The message's text.
    text: String,
    /// Who sends it: a person, or automation (a script run).
    run_kind: MessageRunKind,
    /// Its attachments, decoded.
    files: Vec<DecodedFile>,
    /// The client's `Idempotency-Key`, with the digest of what it was sent with.
    key: Option<(String, String)>,
    /// Whether the client waits for the run's end (the default) or only
    /// for the posting (`wait: false`).
    waits: bool,
}

impl Post {
    /// Checks a post: text that is not blank, a well-formed key, and
    /// attachments that decode within their limit.
    fn parse(headers: &axum::http::HeaderMap, params: MessageParams) -> Result<Self, ApiError> {
        if params.text.trim().is_empty() {
            return Err(ApiError::bad_request("bad_request", "text must not be empty"));
        }
        let key = idempotency::key_of(headers)?.map(|key| (key, idempotency::digest_of(&params)));
        let files = decode_attachments(&params.attachments)?;
        Ok(Self {
            waits: params.wait != Some(false),
            run_kind: params.run_kind.unwrap_or(MessageRunKind::Interactive),
            text: params.text,
            files,
            key,
        })
    }
}

/// What queueing a post came to.
enum Submitted {
    /// A new job, claimed by this server in the same transaction.
    Accepted(Accepted),
    /// The post's key was used before: the job that post made.
    Earlier(Box<Enqueued>),
}

/// Stores the post's attachments and queues its message as a job of the
/// shared queue, claimed by this server in the same transaction: it runs
/// here unless this server stops, and then on another server of the same
/// database. Posts racing with one key queue one job.
async fn submit(state: &ServerState, agent: &AgentId, id: SessionId, post: &Post) -> Result<Submitted, ApiError> {
    // Queueing the message looks its session up: only attachments, stored
    // before it, need the session found first.
    let attachments = if post.files.is_empty() {
        Vec::new()
    } else {
        let (owner, files) = (agent.clone(), post.files.clone());
        state
            .blocking(move |store| {
                let store = store.agent(&owner);
                store.summary(id)?;
                files
                    .into_iter()
                    .map(|file| store.store_attachment(id, file.name, file.media_type, &file.bytes))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(ApiError::from)
            })
            .await?
    };
    let message = Message { attachments, ..Message::user(post.text.clone()) };
    let message = match post.run_kind {
        MessageRunKind::Interactive => message,
        MessageRunKind::Script => Message { actor: Actor::Trigger, ..message },
    };
    let request = JobRequest { message, lane: Lane::Interactive, max_turns: None };
    Ok(match &post.key {
        None => Submitted::Accepted(state.jobs().accept(agent, id, &request).await?),
        Some((key, digest)) => match state.jobs().accept_once(agent, id, &request, key, digest).await? {
            Acceptance::New(accepted) => Submitted::Accepted(accepted),
            Acceptance::Existing(job) => Submitted::Earlier(Box::new(Enqueued::Existing(job))),
            Acceptance::KeyReused(job) => Submitted::Earlier(Box::new(Enqueued::KeyReused(job))),
        },
    })
}

/// The answer to an accepted post: 202 once its message is posted
/// (`wait: false`), else the run's end as the response.
async fn answer(id: SessionId, accepted: Accepted, waits: bool) -> Result<Response, ApiError> {
    let job_id = accepted.job_id.clone();
    if !waits {
        return match accepted.posted.await {
            Ok(posted) => {
                let accepted = MessageAcceptedResponse {
                    session_id: id.to_string(),
                    event_id: posted.event_id.to_string(),
                    seq: posted.seq.get(),
                    run_id: posted.run_id.map(|r| r.to_string()).unwrap_or_default(),
                    job_id,
                };
                Ok((StatusCode::ACCEPTED, axum::Json(accepted)).into_response())
            }
            // The run ended before it could post: say why.
            Err(_) => {
                let response = ended(&job_id, accepted.end.await)?;
                let error = response.error.unwrap_or_else(|| "nothing ran".to_owned());
                Err(ApiError::new(StatusCode::CONFLICT, "not_posted", format!("the message was not posted: {error}")))
            }
        };
    }
    let response = ended(&job_id, accepted.end.await)?;
    Ok(axum::Json(response).into_response())
}

/// How the job `job_id` ended here, as the response a client is told.
fn ended(job_id: &str, end: Result<JobEnd, tokio::task::JoinError>) -> Result<MessageSessionResponse, ApiError> {
    match end {
        Ok(JobEnd::Finished(report)) => Ok(MessageSessionResponse::of(report.session_id, &report.outcome())),
        Ok(JobEnd::HandedBack) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "handed_over",
            format!(
                "this server is stopping: the message is kept in the queue as job {job_id}, and another server \
                 (or this one, restarted) answers it; its answer will be in the session's events"
            ),
        )
        .with_job(job_id.to_owned())),
        // Only a job claimed again by the poll can be running already; the
        // one a request just queued is new.
        Ok(JobEnd::AlreadyRunning) => Err(ApiError::internal(format!("job {job_id} was running twice"))),
        // Another server answered it: what it recorded is what this client is told.
        Ok(JobEnd::TakenOver(job)) => MessageSessionResponse::of_job(&job),
        // The queue catches a panicking run; this is the task itself.
        Err(e) => Err(ApiError::internal(format!("the message's task ended unexpectedly ({e}); job {job_id}"))),
    }
}

/// Each attachment's name, media type and bytes, checked: a name, base64
/// that decodes, at most [`seri_core::MAX_ATTACHMENT_BYTES`]. A picture's media type
/// is read from its bytes.
fn decode_attachments(attachments: &[crate::protocol::AttachmentParams]) -> Result<Vec<DecodedFile>, ApiError> {
    use base64::Engine as _;
    attachments
        .iter()
        .enumerate()
        .map(|(n, a)| {
            let field = format!("attachments[{n}]");
            if a.name.trim().is_empty() || a.name.contains(['/', '\\', '\0']) {
                return Err(ApiError::bad_request(
                    "bad_request",
                    format!("{field}.name must be a file name (not empty, no slashes)"),
                ));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(a.data.as_bytes())
                .map_err(|e| ApiError::bad_request("bad_request", format!("{field}.data is not base64: {e}")))?;
            if bytes.len() as u64 > seri_core::MAX_ATTACHMENT_BYTES {
                return Err(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "too_large",
                    format!(
                        "{field} is {} bytes; an attachment holds at most {}",
                        bytes.len(),
                        seri_core::MAX_ATTACHMENT_BYTES
                    ),
                ));
            }
            let media_type = seri_core::image_media_type(&bytes).map(str::to_owned).or_else(|| a.media_type.clone());
            Ok(DecodedFile { name: a.name.clone(), media_type, bytes })
        })
        .collect()
}

/// An attachment of a message body, decoded, not yet stored.
#[derive(Clone)]
struct DecodedFile {
    name: String,
    media_type: Option<String>,
    bytes: Vec<u8>,
}
