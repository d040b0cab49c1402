//! The handlers: each parses, asks the store (on the blocking pool) or
//! submits a [`Command`] to the caller's runtime, and shapes the answer.
//! No SQL, no prompt text, no run-loop logic of their own.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use seri_core::{ContinuationId, RunId, Seq, SeqRange, SessionId, Timestamp, ToolCallId};
use seri_runloop::{Command, Submitted};
use seri_store::SessionQuery;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiQuery};
use crate::paths;
use crate::protocol::{
    ApprovalParams, ApprovalRequestedFrame, ApprovalResponse, ApprovalsResponse, CancelResponse, ContextUsageBody,
    ContinuationRecallsBody, ContinuationResponse, CreateSessionParams, CreatedSessionResponse, ErrorResponse,
    EventBody, EventsResponse, ForkParams, HealthResponse, JobResponse, JobStateWord, MessageSessionResponse,
    RangeQuery, RecallCountsBody, RecallsQuery, RecallsResponse, SessionResponse, SessionsQuery, SessionsResponse,
};
use crate::state::ServerState;

pub(crate) mod messages;
pub(crate) mod search;
pub(crate) mod settings;

/// Most sessions one list page holds.
pub const MAX_SESSIONS_PAGE: u64 = 500;
/// Most events one page holds.
pub const MAX_EVENTS_PAGE: u64 = 1000;
/// The largest seq a range may name: `i64::MAX`, as the document's `int64`.
const MAX_SEQ: u64 = i64::MAX as u64;

fn session_id(text: &str) -> Result<SessionId, ApiError> {
    text.parse().map_err(|_| ApiError::not_found(format!("no session {text}")))
}

/// How long `/api/health` waits for the store to answer its read.
pub(crate) const HEALTH_STORE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Health, with no token: 200 when the store answers a read within 5 s,
/// 503 with `ok: false` and `store` saying why when it does not.
// The read is the token lookup every authenticated request makes; `probe`
// lets one run at a time (HEALTH_STORE_TIMEOUT bounds the wait).
#[utoipa::path(get, path = paths::HEALTH, security(()),
    responses((status = 200, body = HealthResponse), (status = 503, body = HealthResponse,
        description = "the store does not answer: `ok` is false and `store` says why")))]
pub(crate) async fn health(state: ServerState, probe: std::sync::Arc<tokio::sync::Semaphore>) -> Response {
    let version = env!("CARGO_PKG_VERSION").to_owned();
    match store_answers(&state, probe).await {
        Ok(()) => axum::Json(HealthResponse { ok: true, version, store: None }).into_response(),
        Err(problem) => {
            tracing::warn!(%problem, "health: the store does not answer");
            let body = HealthResponse { ok: false, version, store: Some(problem) };
            (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response()
        }
    }
}

/// Reads from the store; what went wrong if it could not.
async fn store_answers(state: &ServerState, probe: std::sync::Arc<tokio::sync::Semaphore>) -> Result<(), String> {
    let read = async {
        // Held by the read itself: a read that hangs keeps it, and the
        // next checks wait here rather than start another.
        let permit = probe.acquire_owned().await.map_err(|e| e.to_string())?;
        state
            .blocking(move |store| {
                let _permit = permit;
                Ok(store.server_token_agent("")?)
            })
            .await
            .map(|_| ())
            .map_err(|e| format!("the store failed a read: {}", e.message))
    };
    match tokio::time::timeout(HEALTH_STORE_TIMEOUT, read).await {
        Ok(answered) => answered,
        Err(_) => Err(format!("the store did not answer a read within {} s", HEALTH_STORE_TIMEOUT.as_secs())),
    }
}

/// The caller's sessions, most recently updated first.
#[utoipa::path(get, path = paths::SESSIONS, params(SessionsQuery), responses((status = 200, body = SessionsResponse)))]
pub(crate) async fn list_sessions(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    ApiQuery(query): ApiQuery<SessionsQuery>,
) -> Result<axum::Json<SessionsResponse>, ApiError> {
    let limit = query.limit.unwrap_or(50);
    if limit == 0 || limit > MAX_SESSIONS_PAGE {
        return Err(ApiError::bad_request("bad_query", format!("limit must be 1 to {MAX_SESSIONS_PAGE}, not {limit}")));
    }
    let before = match &query.before {
        Some(text) => Some(Timestamp::parse(text).map_err(|e| {
            ApiError::bad_request("bad_query", format!("before must be a time like 2026-12-01T10:02:11.000Z: {e}"))
        })?),
        None => None,
    };
    let before_id = match (&query.before_id, before) {
        (Some(text), Some(_)) => {
            Some(text.parse::<SessionId>().map_err(|_| {
                ApiError::bad_request("bad_query", format!("beforeId must be a session id, not `{text}`"))
            })?)
        }
        (Some(_), None) => {
            return Err(ApiError::bad_request("bad_query", "beforeId needs before: the updatedAt of the same session"));
        }
        (None, _) => None,
    };
    let sessions = state
        .blocking(move |store| {
            let query =
                SessionQuery { limit: Some(limit), updated_before: before, before_id, ..SessionQuery::default() };
            Ok(store.agent(&agent).list_sessions(&query)?)
        })
        .await?;
    Ok(axum::Json(SessionsResponse { sessions }))
}

/// A new session.
#[utoipa::path(post, path = paths::SESSIONS, request_body = CreateSessionParams,
    responses((status = 201, body = CreatedSessionResponse)))]
pub(crate) async fn create_session(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    ApiJson(params): ApiJson<CreateSessionParams>,
) -> Result<(StatusCode, axum::Json<CreatedSessionResponse>), ApiError> {
    if params.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(ApiError::bad_request("bad_request", "title, when given, must not be empty"));
    }
    let runtime = state.agent_runtime(&agent)?;
    let backend = state.backend().clone();
    let info = tokio::task::spawn_blocking(move || {
        backend
            .create_session(&runtime.runtime, params.cwd.as_deref(), params.title)
            .map_err(|e| ApiError::bad_request("bad_request", format!("cannot start a session: {e}")))
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok((StatusCode::CREATED, axum::Json(CreatedSessionResponse { session: info })))
}

/// One session, with its context window and how full it is.
#[utoipa::path(get, path = paths::SESSION, params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = SessionResponse)))]
pub(crate) async fn get_session(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<SessionResponse>, ApiError> {
    let id = session_id(&id)?;
    // The agent's runtime measures as the REPL's `/context` and the
    // per-turn block do: the session's own window, and the whole next
    // request (system prompt, tool definitions, working context).
    let runtime = state.agent_runtime(&agent)?.runtime.clone();
    let (info, window, estimate) = state
        .blocking(move |store| {
            let info = store.agent(&agent).info(id)?;
            let window = runtime.session_context_window(&info);
            // Unknown is not zero: without a billed figure, the local estimate.
            let estimate = match info.last_usage {
                Some(_) => None,
                None if info.message_counts.assistant > 0 => runtime.context_report(id).ok().map(|r| r.estimated),
                None => None,
            };
            Ok((info, window, estimate))
        })
        .await?;
    let window = std::num::NonZeroU64::new(window).unwrap_or(std::num::NonZeroU64::MIN);
    // The figures of the per-turn `<context_usage>` block, from the same
    // function: billed usage, else the local estimate marked as one.
    let context_usage = match (info.last_usage.as_ref(), estimate) {
        (None, None) => None,
        (usage, estimate) => Some(ContextUsageBody::from(seri_prompt::ContextUsage::from_usage_or_estimate(
            usage,
            estimate.unwrap_or(0),
            window,
        ))),
    };
    Ok(axum::Json(SessionResponse { session: info, context_window: window.get(), context_usage }))
}

fn range_of(query: &RangeQuery) -> Result<(SeqRange, u64), ApiError> {
    let from = query.from_seq.unwrap_or(1);
    let to = query.to_seq.unwrap_or(u64::MAX);
    if from == 0 {
        return Err(ApiError::bad_request("bad_range", "fromSeq starts at 1"));
    }
    // A seq is a signed 64-bit integer where it is stored, and the
    // document's `int64` says as much: larger is refused, not read as "all".
    if from > MAX_SEQ || query.to_seq.is_some_and(|to| to > MAX_SEQ) {
        return Err(ApiError::bad_request("bad_range", format!("fromSeq and toSeq are at most {MAX_SEQ}")));
    }
    if from > to {
        return Err(ApiError::bad_request("bad_range", format!("fromSeq {from} is after toSeq {to}")));
    }
    let limit = query.limit.unwrap_or(200);
    if limit == 0 || limit > MAX_EVENTS_PAGE {
        return Err(ApiError::bad_request("bad_range", format!("limit must be 1 to {MAX_EVENTS_PAGE}, not {limit}")));
    }
    Ok((SeqRange::between(Seq(from), Seq(to)), limit))
}

/// A page of a session's stored events.
#[utoipa::path(get, path = paths::SESSION_EVENTS, params(("id" = String, Path, description = "session id"), RangeQuery),
    responses((status = 200, body = EventsResponse)))]
pub(crate) async fn events(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<RangeQuery>,
) -> Result<axum::Json<EventsResponse>, ApiError> {
    let id = session_id(&id)?;
    let (range, limit) = range_of(&query)?;
    // One more than asked tells whether there is a next page.
    let mut events =
        state.blocking(move |store| Ok(store.agent(&agent).events_page(id, range, Some(limit + 1))?)).await?;
    let next_seq = (events.len() as u64 > limit).then(|| events[limit as usize].seq.get());
    events.truncate(limit as usize);
    let events = events
        .iter()
        .map(|e| {
            let mut event = e.body.to_payload();
            if let Some(object) = event.as_object_mut() {
                object.insert("type".to_owned(), e.body.kind().into());
            }
            EventBody { seq: e.seq.get(), id: e.id.to_string(), at: e.at.to_string(), event }
        })
        .collect();
    Ok(axum::Json(EventsResponse { events, next_seq }))
}

/// A session's transcript as `[seq] who: text` lines.
#[utoipa::path(get, path = paths::SESSION_THREAD, params(("id" = String, Path, description = "session id"), RangeQuery),
    responses((status = 200, body = String, content_type = "text/plain")))]
pub(crate) async fn thread(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<RangeQuery>,
) -> Result<Response, ApiError> {
    let id = session_id(&id)?;
    let (range, limit) = range_of(&query)?;
    let events = state.blocking(move |store| Ok(store.agent(&agent).events_page(id, range, Some(limit))?)).await?;
    let text = seri_projection::transcript_lines(&events);
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response())
}

/// Cancels what runs in a session, on this server or another of the same database.
#[utoipa::path(post, path = paths::SESSION_CANCEL, params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = CancelResponse)))]
pub(crate) async fn cancel(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<CancelResponse>, ApiError> {
    let id = session_id(&id)?;
    let owner = agent.clone();
    state.blocking(move |store| Ok(store.agent(&owner).summary(id)?)).await?;
    let runtime = state.agent_runtime(&agent)?;
    let cancelled = matches!(
        runtime.runtime.submit(Command::Cancel { session_id: id }, &seri_runloop::Quiet).await?,
        Submitted::Cancelled(true)
    );
    // A run of this session on another server of the same database stops
    // when that server next renews its claim.
    let elsewhere = state.jobs().cancel(&agent, id).await?;
    Ok(axum::Json(CancelResponse { cancelled: cancelled || elsewhere > 0 }))
}

/// Forks a session: a new session that shares its events up to `atSeq`
/// (all of them by default) by reference and goes on from there. The
/// session forked from is not changed. The new session's `forkedFrom`
/// names the parent and the fork point.
#[utoipa::path(post, path = paths::SESSION_FORK, params(("id" = String, Path, description = "session id")),
    request_body = ForkParams,
    responses((status = 201, body = CreatedSessionResponse)))]
pub(crate) async fn fork(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
    ApiJson(params): ApiJson<ForkParams>,
) -> Result<(StatusCode, axum::Json<CreatedSessionResponse>), ApiError> {
    let id = session_id(&id)?;
    let at = params.at_seq.map(seri_core::Seq);
    let info =
        state.blocking(move |store| Ok(store.agent(&agent).fork_session(id, at, seri_core::ForkVia::Api)?)).await?;
    Ok((StatusCode::CREATED, axum::Json(CreatedSessionResponse { session: info })))
}

/// Answers a question a run asks before a tool acts.
#[utoipa::path(post, path = paths::RUN_APPROVAL,
    params(("runId" = String, Path, description = "run id"), ("callId" = String, Path, description = "tool call id")),
    request_body = ApprovalParams,
    responses((status = 200, body = ApprovalResponse)))]
pub(crate) async fn approve(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path((run_id, call_id)): Path<(String, String)>,
    ApiJson(params): ApiJson<ApprovalParams>,
) -> Result<axum::Json<ApprovalResponse>, ApiError> {
    let missing = || ApiError::not_found(format!("no question waits for call {call_id} of run {run_id}"));
    let run: RunId = run_id.parse().map_err(|_| missing())?;
    let runtime = state.agent_runtime(&agent)?;
    let call = ToolCallId(call_id.clone());
    let waiting = runtime.approvals.waiting();
    let Some(pending) = waiting.into_iter().find(|p| p.call.run_id == Some(run) && p.call.call_id == call) else {
        // A run of another server on the database may ask it: the answer
        // travels there, and its reply back.
        params.decision()?;
        let remote = match state.relay() {
            Some(relay) => relay.answer(&agent, &run.to_string(), &call_id, params, state.worker()).await,
            None => None,
        };
        return remote.map(|answered| axum::Json(ApprovalResponse { answered })).ok_or_else(missing);
    };
    let decision = params.decision()?;
    let answered =
        runtime.runtime.submit(Command::Approve { call: pending.call, decision }, &seri_runloop::Quiet).await?;
    Ok(axum::Json(ApprovalResponse { answered: matches!(answered, Submitted::Approved(true)) }))
}

/// The questions waiting in a session now, each as the frame that asked it.
#[utoipa::path(get, path = paths::SESSION_APPROVALS, params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = ApprovalsResponse)))]
pub(crate) async fn approvals(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<ApprovalsResponse>, ApiError> {
    let id = session_id(&id)?;
    let runtime = state.agent_runtime(&agent)?;
    let waiting: Vec<_> = runtime.approvals.waiting().into_iter().filter(|p| p.call.session_id == id).collect();
    // Those that runs on other servers of the database ask, too.
    let elsewhere = state.relay().map(|relay| relay.questions(&agent, id)).unwrap_or_default();
    let owner = agent.clone();
    // The session must be this agent's: another's is a missing one.
    state.blocking(move |store| Ok(store.agent(&owner).summary(id).map(drop)?)).await?;
    let mut frames: Vec<ApprovalRequestedFrame> = waiting.iter().map(ApprovalRequestedFrame::of).collect();
    frames.extend(elsewhere);
    Ok(axum::Json(ApprovalsResponse { approvals: frames }))
}

/// What became of an accepted message: its job of the shared queue.
#[utoipa::path(get, path = paths::JOB, params(("id" = String, Path, description = "job id (`jobId` of a 202)")),
    responses((status = 200, body = JobResponse)))]
pub(crate) async fn job(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<JobResponse>, ApiError> {
    let missing = || ApiError::not_found(format!("no job {id}"));
    let wanted = id.clone();
    let job = state.blocking(move |store| Ok(store.job(&wanted)?)).await?;
    // Another agent's job is a missing one.
    let job = job.filter(|j| j.agent_id == agent).ok_or_else(missing)?;
    let outcome = job.outcome.as_ref().map(|outcome| MessageSessionResponse::of(job.session_id, outcome));
    Ok(axum::Json(JobResponse {
        id: job.id,
        session_id: job.session_id.to_string(),
        state: JobStateWord::from(job.state),
        event_id: job.posted_event_id.map(|e| e.to_string()),
        run_id: job.run_id.map(|r| r.to_string()),
        attempts: job.attempts,
        outcome,
    }))
}

/// One continuation edge, its manifest decoded.
#[utoipa::path(get, path = paths::CONTINUATION, params(("id" = String, Path, description = "continuation id")),
    responses((status = 200, body = ContinuationResponse)))]
pub(crate) async fn continuation(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<ContinuationResponse>, ApiError> {
    let missing = || ApiError::not_found(format!("no continuation {id}"));
    let edge_id: ContinuationId = id.parse().map_err(|_| missing())?;
    let (edge, recalls, handoff) = state
        .blocking(move |store| {
            let store = store.agent(&agent);
            let Some(edge) = store.continuation(edge_id)? else { return Ok(None) };
            let recalls = seri_runloop::recalls::continuation_recalls(&store, &edge)?;
            let handoff = seri_runloop::continuation::continuation_handoff(&store, &edge)?;
            Ok(Some((edge, recalls, handoff)))
        })
        .await?
        .ok_or_else(missing)?;
    let recalls = crate::protocol::RecallsBody {
        omitted: recalls.counts.omitted,
        not_included: recalls.counts.not_included,
        already_included: recalls.counts.already_included,
        reads: recalls.recalls.iter().map(recall_body).collect(),
    };
    Ok(axum::Json(ContinuationResponse {
        id: edge.id.to_string(),
        predecessor_session_id: edge.predecessor_session_id.to_string(),
        successor_session_id: edge.successor_session_id.to_string(),
        origin_session_id: edge.origin_session_id.to_string(),
        tool_call_id: edge.tool_call_id.to_string(),
        initiating_event_id: edge.initiating_event_id.to_string(),
        reason: edge.reason.as_str().to_owned(),
        manifest: edge.manifest,
        created_at: edge.created_at.to_string(),
        recalls,
        title: handoff.as_ref().map(|h| h.title.clone()),
        description: handoff.as_ref().map(|h| h.description.clone()),
        handoff: handoff.map(|h| h.handoff.into()),
    }))
}

/// How often successors read back what their projection left out, across
/// the caller's continuations (`seri sessions recalls` reports the same):
/// the figures to tune budgets by. With `sessionId`, the continuations into
/// and out of that session.
#[utoipa::path(get, path = paths::RECALLS, params(RecallsQuery),
    responses((status = 200, body = RecallsResponse),
        (status = 404, body = ErrorResponse, description = "No such session, or another agent's (`not_found`)")))]
pub(crate) async fn recalls(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    ApiQuery(query): ApiQuery<RecallsQuery>,
) -> Result<axum::Json<RecallsResponse>, ApiError> {
    let session = match &query.session_id {
        Some(text) => Some(text.parse::<SessionId>().map_err(|_| {
            ApiError::bad_request("bad_query", format!("sessionId must be a session id, not `{text}`"))
        })?),
        None => None,
    };
    let report = state
        .blocking(move |store| {
            let store = store.agent(&agent);
            Ok(match session {
                Some(id) => {
                    // Another agent's session is a missing one.
                    store.summary(id)?;
                    seri_runloop::recalls::session_recalls(&store, id)?
                }
                None => seri_runloop::recalls::profile_recalls(&store)?,
            })
        })
        .await?;
    let counts = |c: &seri_projection::continuation::recalls::RecallCounts| RecallCountsBody {
        omitted: c.omitted,
        not_included: c.not_included,
        already_included: c.already_included,
    };
    Ok(axum::Json(RecallsResponse {
        continuations: report.continuations,
        with_recalls: report.with_recalls,
        totals: counts(&report.totals),
        by_reason: report.by_reason.iter().map(|(reason, c)| (reason.as_str().to_owned(), counts(c))).collect(),
        each: report
            .each
            .iter()
            .map(|r| ContinuationRecallsBody {
                continuation_id: r.continuation_id.to_string(),
                predecessor_session_id: r.predecessor_session_id.to_string(),
                successor_session_id: r.successor_session_id.to_string(),
                reason: r.reason.into(),
                budget_bytes: r.budget_bytes,
                used_bytes: r.used_bytes,
                omitted_bytes: r.omitted_bytes,
                recalls: r.recalls.iter().map(recall_body).collect(),
                counts: counts(&r.counts),
            })
            .collect(),
    }))
}

/// One read back, as the API words it.
fn recall_body(r: &seri_projection::continuation::recalls::Recall) -> crate::protocol::RecallBody {
    use seri_projection::continuation::recalls::RecallKind;
    crate::protocol::RecallBody {
        from_seq: r.from_seq,
        to_seq: r.to_seq,
        kind: match r.kind {
            RecallKind::Omitted => crate::protocol::RecallKindWord::Omitted,
            RecallKind::NotIncluded => crate::protocol::RecallKindWord::NotIncluded,
            RecallKind::AlreadyIncluded => crate::protocol::RecallKindWord::AlreadyIncluded,
        },
    }
}
