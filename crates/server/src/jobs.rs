//! The shared queue of runs, from a server's side: every message a server
//! is asked to answer becomes a job (`seri_store::RunJob`) that this
//! server claims at once and runs; while it runs, the claim is renewed.
//! Several servers on one database share the queue: one whose claim
//! lapsed (it was killed, its machine went away) has its job taken over by
//! another ([`work`]), which answers the message the first one posted, or
//! posts it if it never was. A cancel reaches the job wherever it runs.
//!
//! What a job asks for is a [`JobRequest`]; what it came to is a
//! [`MessageSessionResponse`], recorded as the job's outcome.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use seri_core::{EventId, Lane, Message, RunId, SessionId};
use seri_runloop::{Command, RunEvent, RunObserver, RunOutcome, RunStatus, Submitted};
use seri_store::{JobClaim, JobRenewal, RunJob};
use tokio::sync::oneshot;

use crate::error::ApiError;
use crate::protocol::{MessageSessionResponse, ServerFrame};
use crate::state::{AgentRuntime, FrameKind, HubFrame, ServerState};

/// What a job asks for: the `request` the store keeps for it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobRequest {
    /// The message to post and answer.
    pub(crate) message: Message,
    /// Its queue.
    pub(crate) lane: Lane,
    /// The turn budget; `None`: the runtime's.
    #[serde(default)]
    pub(crate) max_turns: Option<u32>,
}

/// Passes a job's run events on to the WebSocket clients of its session,
/// notes the message once posted (in the job's row too, so a server taking
/// the job over answers it rather than posting it again) and the first run.
pub(crate) struct Relay {
    state: ServerState,
    agent: Arc<AgentRuntime>,
    job: String,
    current: Mutex<Option<(SessionId, RunId)>>,
    first_run: Mutex<Option<RunId>>,
    posted: Mutex<Option<(String, u64)>>,
    told: Mutex<Option<oneshot::Sender<(String, u64, String)>>>,
}

impl Relay {
    /// A relay for `job`; `tell` hears the posted message's event, seq and run.
    pub(crate) fn new(
        state: ServerState,
        agent: Arc<AgentRuntime>,
        job: String,
        tell: Option<oneshot::Sender<(String, u64, String)>>,
    ) -> Self {
        Self {
            state,
            agent,
            job,
            current: Mutex::new(None),
            first_run: Mutex::new(None),
            posted: Mutex::new(None),
            told: Mutex::new(tell),
        }
    }
}

impl RunObserver for Relay {
    fn event(&self, event: RunEvent) {
        if let RunEvent::RunStarted { run_id, session_id } = &event {
            *self.current.lock().unwrap_or_else(PoisonError::into_inner) = Some((*session_id, *run_id));
            self.first_run.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(*run_id);
        }
        if let RunEvent::MessagePosted { event_id, seq, .. } = &event {
            let posted = (event_id.to_string(), seq.get());
            *self.posted.lock().unwrap_or_else(PoisonError::into_inner) = Some(posted.clone());
            let run = *self.first_run.lock().unwrap_or_else(PoisonError::into_inner);
            let owner = self.state.worker();
            if let Err(e) = self.state.store().record_job_posted(&self.job, owner, *event_id, run) {
                tracing::warn!(job = %self.job, error = %e, "cannot record a job's message");
            }
            if let Some(tell) = self.told.lock().unwrap_or_else(PoisonError::into_inner).take() {
                let run = run.map(|r| r.to_string()).unwrap_or_default();
                let _ = tell.send((posted.0, posted.1, run));
            }
        }
        let current = *self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((session_id, run_id)) = current
            && self.agent.frames.receiver_count() > 0
        {
            let frame = ServerFrame::RunEvent {
                session_id: session_id.to_string(),
                run_id: run_id.to_string(),
                event: event.to_stream_json(),
            };
            if let Some(frame) = HubFrame::new(FrameKind::RunEvent, Some(session_id), &frame) {
                let _ = self.agent.frames.send(frame);
            }
        }
    }
}

/// `succeeded`, `max_turns` or `failed`, as headless JSON says it.
fn status_word(status: Option<RunStatus>) -> &'static str {
    match status {
        Some(RunStatus::Succeeded) => "succeeded",
        Some(RunStatus::MaxTurns) => "max_turns",
        Some(RunStatus::Failed | RunStatus::Cancelled | RunStatus::Running | RunStatus::Interrupted) | None => "failed",
    }
}

/// The response to a message whose runs ended with `outcomes`.
fn response(session: SessionId, relay: &Relay, outcomes: &[RunOutcome]) -> MessageSessionResponse {
    let posted = relay.posted.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let run_id = *relay.first_run.lock().unwrap_or_else(PoisonError::into_inner);
    let last = outcomes.last();
    MessageSessionResponse {
        session_id: session.to_string(),
        event_id: posted.as_ref().map(|p| p.0.clone()),
        seq: posted.map(|p| p.1),
        run_id: run_id.map(|r| r.to_string()),
        status: status_word(last.map(|o| o.status)).to_owned(),
        result: last.and_then(|o| o.result.clone()),
        continued_to_session_id: outcomes
            .iter()
            .rev()
            .find_map(|o| o.continued_to.as_ref().map(|c| c.session_id.to_string())),
        error: last.and_then(|o| o.error.clone()),
    }
}

/// A failed response, for a job that could not run at all.
fn failed(session: SessionId, error: String) -> MessageSessionResponse {
    MessageSessionResponse {
        session_id: session.to_string(),
        event_id: None,
        seq: None,
        run_id: None,
        status: "failed".into(),
        result: None,
        continued_to_session_id: None,
        error: Some(error),
    }
}

/// Runs `job`, which this server has claimed, to its end, and records the
/// outcome, which it returns (a job that could not run at all has a failed
/// one, saying why). `tell` hears when its message is posted.
pub(crate) async fn run(
    state: ServerState,
    job: RunJob,
    tell: Option<oneshot::Sender<(String, u64, String)>>,
) -> MessageSessionResponse {
    let session = job.session_id;
    let response = match run_claimed(&state, &job, tell).await {
        Ok(response) => response,
        Err(error) => failed(session, error.to_string()),
    };
    if let Some(error) = &response.error {
        tracing::warn!(job = %job.id, %session, attempt = job.attempts, %error, "a job's run failed");
    }
    let (id, outcome) = (job.id.clone(), serde_json::to_value(&response).unwrap_or_default());
    let owner = state.worker().to_owned();
    let recorded = state.blocking(move |store| Ok(store.finish_job(&id, &owner, &outcome)?)).await;
    match recorded {
        Ok(true) => {}
        Ok(false) => tracing::info!(job = %job.id, "another server took this job over; its outcome stands"),
        Err(e) => tracing::warn!(job = %job.id, error = %e, "cannot record a job's outcome"),
    }
    response
}

async fn run_claimed(
    state: &ServerState,
    job: &RunJob,
    tell: Option<oneshot::Sender<(String, u64, String)>>,
) -> Result<MessageSessionResponse, ApiError> {
    let request: JobRequest = serde_json::from_value(job.request.clone())
        .map_err(|e| ApiError::internal(format!("job {} has a request this server cannot read: {e}", job.id)))?;
    let agent = state.agent_runtime(&job.agent_id)?;
    let relay = Arc::new(Relay::new(state.clone(), agent.clone(), job.id.clone(), tell));
    let session = job.session_id;
    let command = match posted_message(state, job).await? {
        None => {
            let mut message = request.message;
            message.meta_mut().queued_as = Some(job.id.clone());
            Command::Send { session_id: session, message, lane: request.lane, max_turns: request.max_turns }
        }
        Some(event_id) => {
            tracing::info!(job = %job.id, %session, attempt = job.attempts, "taking over a job another server left");
            Command::Answer { session_id: session, event_id, max_turns: request.max_turns }
        }
    };
    let claim = tokio::spawn(keep_claim(state.clone(), job.id.clone(), session, agent.clone()));
    let submitted = agent.runtime.submit(command, relay.as_ref()).await;
    claim.abort();
    let outcomes = match submitted? {
        Submitted::Ran(outcomes) => outcomes,
        _ => Vec::new(),
    };
    Ok(response(session, &relay, &outcomes))
}

/// The message an earlier claimant of `job` posted, if any: recorded on the
/// job, or (when it stopped between posting and recording) found by the
/// job's id on the message itself.
async fn posted_message(state: &ServerState, job: &RunJob) -> Result<Option<EventId>, ApiError> {
    if let Some(event) = job.posted_event_id {
        return Ok(Some(event));
    }
    if job.attempts <= 1 {
        return Ok(None);
    }
    let (agent, session, id) = (job.agent_id.clone(), job.session_id, job.id.clone());
    state
        .blocking(move |store| {
            Ok(store.agent(&agent).read(|r| r.message_queued_as(session, &id))?.map(|event| event.id))
        })
        .await
}

/// Renews this server's claim on `job` while it runs; cancels the run when
/// someone asks to (on any server), or when the claim was lost to a server
/// that took the job over.
async fn keep_claim(state: ServerState, job: String, session: SessionId, agent: Arc<AgentRuntime>) {
    let every = (state.config().run_lease / 3).max(Duration::from_millis(50));
    let mut cancelled = false;
    loop {
        tokio::time::sleep(every).await;
        let (id, owner, ttl) = (job.clone(), state.worker().to_owned(), state.config().run_lease);
        let renewed = state.blocking(move |store| Ok(store.renew_job(&id, JobClaim { owner: &owner, ttl })?)).await;
        let stop = match renewed {
            Ok(JobRenewal::Held { cancel_requested }) => cancel_requested,
            Ok(JobRenewal::Lost) => {
                tracing::warn!(%job, "lost the claim on a job; stopping its run");
                true
            }
            Err(e) => {
                tracing::warn!(%job, error = %e, "cannot renew a job's claim");
                false
            }
        };
        if stop && !cancelled {
            cancelled = true;
            let _ = agent.runtime.submit(Command::Cancel { session_id: session }, &seri_runloop::Quiet).await;
        }
    }
}

/// How often a server deletes done jobs older than [`seri_store::JOB_RETENTION`].
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Takes over jobs other servers left: every `job_poll`, claims each job
/// that waits or whose claim lapsed, and runs it, until the server stops.
pub(crate) async fn work(state: ServerState) {
    let mut stopping = state.shutting_down();
    let mut pruned: Option<tokio::time::Instant> = None;
    loop {
        // At start and then hourly, the jobs done long ago go (any server may do it).
        if pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            pruned = Some(tokio::time::Instant::now());
            let gone = state.blocking(|store| Ok(store.prune_jobs(seri_store::JOB_RETENTION)?)).await;
            if let Err(e) = gone {
                tracing::warn!(error = %e, "cannot prune done jobs");
            }
        }
        tokio::select! {
            () = tokio::time::sleep(state.config().job_poll) => {}
            _ = stopping.changed() => return,
        }
        if *stopping.borrow() {
            return;
        }
        loop {
            let (owner, ttl) = (state.worker().to_owned(), state.config().run_lease);
            let claimed = state.blocking(move |store| Ok(store.claim_next_job(JobClaim { owner: &owner, ttl })?)).await;
            match claimed {
                Ok(Some(job)) => {
                    let state = state.clone();
                    // Its outcome is recorded on the job; a failure is logged by `run`.
                    tokio::spawn(run(state, job, None));
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot look for jobs to take over");
                    break;
                }
            }
        }
    }
}
