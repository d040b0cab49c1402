//! `Idempotency-Key` on `POST /api/sessions/{id}/messages`: a client that
//! lost the answer to a message (its server died under the request, the
//! connection dropped) posts it again with the same key, and the server
//! answers as it would have the first time instead of queueing the message
//! twice. The key is kept with the message's job, unique per agent and
//! session; a different message under a used key is refused (422).

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use seri_core::{AgentId, SessionId};
use seri_store::{Enqueued, JobKey, JobState, RunJob};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::protocol::{MessageAcceptedResponse, MessageParams, MessageSessionResponse};
use crate::state::ServerState;

/// The header's name (the IETF httpapi draft's).
pub(crate) const HEADER: &str = "idempotency-key";

/// The longest key accepted.
pub(crate) const MAX_KEY_CHARS: usize = 255;

/// The request's key, if it sent one: 1 to [`MAX_KEY_CHARS`] visible ASCII
/// characters, bare or quoted as the draft's structured-field string
/// (`"8e03978e-…"`).
pub(crate) fn key_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let mut values = headers.get_all(HEADER).iter();
    let Some(value) = values.next() else { return Ok(None) };
    let bad = |why: &str| ApiError::bad_request("bad_idempotency_key", format!("Idempotency-Key {why}"));
    if values.next().is_some() {
        return Err(bad("is sent more than once"));
    }
    let text = value.to_str().map_err(|_| bad("is not visible ASCII"))?.trim();
    let key = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
    if key.is_empty() || key.len() > MAX_KEY_CHARS {
        return Err(bad(&format!("must be 1 to {MAX_KEY_CHARS} characters")));
    }
    if !key.bytes().all(|b| b.is_ascii_graphic()) || key.contains(['"', '\\']) {
        return Err(bad("must be visible ASCII without quotes or backslashes"));
    }
    Ok(Some(key.to_owned()))
}

/// A digest of what a post asks for: its text, who sends it and its
/// attachments (not `wait`, which only says how the answer comes), so a
/// retry is told from another message sent under the same key.
pub(crate) fn digest_of(params: &MessageParams) -> String {
    let asked = serde_json::json!({
        "text": params.text,
        "runKind": params.run_kind,
        "attachments": params.attachments,
    });
    Sha256::digest(seri_core::json::sorted_string(&asked).as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The job `key` made for `agent`'s `session` before, if any.
pub(crate) async fn earlier(
    state: &ServerState,
    agent: &AgentId,
    session: SessionId,
    key: &str,
    digest: &str,
) -> Result<Option<Enqueued>, ApiError> {
    let (agent, key, digest) = (agent.clone(), key.to_owned(), digest.to_owned());
    state.blocking(move |store| Ok(store.job_by_key(&agent, session, JobKey { key: &key, digest: &digest })?)).await
}

/// The answer to a post whose key made `job` before: what the first post
/// was (or is being) answered, once the job gets there. Waiting (`wait`
/// not `false`): the job's outcome, once done. Not waiting: 202 once its
/// message is posted. A different message under the key: 422.
pub(crate) async fn answer(
    state: &ServerState,
    agent: &AgentId,
    key: &str,
    earlier: Enqueued,
    wait: bool,
) -> Result<Response, ApiError> {
    let job = match earlier {
        Enqueued::New(job) | Enqueued::Existing(job) => job,
        Enqueued::KeyReused(job) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_key_reused",
                format!(
                    "Idempotency-Key `{key}` was sent before with another message (job {}); a new message needs \
                     a new key",
                    job.id
                ),
            )
            .with_job(job.id));
        }
    };
    let job = until(state, job, !wait, |j| j.state == JobState::Done || (!wait && j.posted_event_id.is_some())).await?;
    let outcome = || MessageSessionResponse::of_job(&job);
    if wait {
        return Ok(axum::Json(outcome()?).into_response());
    }
    let Some(event_id) = job.posted_event_id else {
        let error = outcome()?.error.unwrap_or_else(|| "nothing ran".to_owned());
        return Err(ApiError::new(StatusCode::CONFLICT, "not_posted", format!("the message was not posted: {error}")));
    };
    let owner = agent.clone();
    let seq = state.blocking(move |store| Ok(store.agent(&owner).event(event_id)?.seq)).await?;
    let accepted = MessageAcceptedResponse {
        session_id: job.session_id.to_string(),
        event_id: event_id.to_string(),
        seq: seq.get(),
        run_id: job.run_id.map(|r| r.to_string()).unwrap_or_default(),
        job_id: job.id,
    };
    Ok((StatusCode::ACCEPTED, axum::Json(accepted)).into_response())
}

/// `job` as the store has it once `ready` holds (whichever server runs
/// it), read again when the store tells of a change to it (or, `posting`:
/// waiting for its message to be posted, to its session), and every
/// [`JobQueue::look_again_every`](seri_runloop::jobs::JobQueue::look_again_every)
/// in case a telling was lost. A server stopping meanwhile answers as the
/// first post's would: 503, the job kept for another.
async fn until(
    state: &ServerState,
    job: RunJob,
    posting: bool,
    ready: impl Fn(&RunJob) -> bool,
) -> Result<RunJob, ApiError> {
    let stopping = state.shutting_down();
    // Listening before reading again: a change told in between is heard.
    let mut news = state.jobs().news();
    let every = state.jobs().look_again_every();
    let (mut job, mut read_since_listening) = (job, false);
    loop {
        if ready(&job) {
            return Ok(job);
        }
        if *stopping.borrow() {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "handed_over",
                format!(
                    "this server is stopping: the message is kept in the queue as job {}, and another server answers \
                     it; its answer will be in the session's events",
                    job.id
                ),
            )
            .with_job(job.id));
        }
        if read_since_listening {
            let (id, session) = (job.id.clone(), job.session_id);
            let about_it = |c: &seri_store::StoreChange| {
                c.job.as_deref() == Some(id.as_str()) || (posting && !c.change.is_job() && c.session == session)
            };
            tokio::select! {
                () = seri_runloop::jobs::heard(&mut news, about_it) => {}
                () = tokio::time::sleep(every) => {}
            }
        }
        read_since_listening = true;
        let id = job.id.clone();
        job = state
            .blocking(move |store| Ok(store.job(&id)?))
            .await?
            .ok_or_else(|| ApiError::not_found(format!("job {} is gone (done jobs are pruned)", job.id)))?;
    }
}
