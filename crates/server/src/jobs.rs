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

use futures_util::FutureExt as _;

use seri_core::{EventId, Lane, Message, RunId, SessionId};
use seri_runloop::{Command, RunEvent, RunObserver, RunOutcome, RunStatus, Submitted};
use seri_store::{JobClaim, JobRenewal, RunJob};
use tokio::sync::{oneshot, watch};

use crate::error::ApiError;
use crate::protocol::{MessageSessionResponse, ServerFrame};
use crate::relay::Relayed;
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

/// Passes a job's run events on to the WebSocket clients of its session
/// (on every server on the database),
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
        let relay = self.state.relay();
        if let Some((session_id, run_id)) = current
            && (self.agent.frames.receiver_count() > 0 || relay.is_some())
        {
            let frame = ServerFrame::run_event(
                session_id.to_string(),
                run_id.to_string(),
                seri_protocol::StreamEvent::of(&event),
            );
            if let Some(frame) = HubFrame::new(FrameKind::RunEvent, Some(session_id), &frame) {
                // The clients of other servers on the database hear it too.
                if let Some(relay) = relay {
                    let agent = self.agent.agent.clone();
                    relay.send(&Relayed::RunEvent { agent, session: session_id, frame: frame.text.to_string() });
                }
                let _ = self.agent.frames.send(frame);
            }
        }
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
        status: seri_protocol::TaskStatus::of(last.map(|o| o.status)),
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
        status: seri_protocol::TaskStatus::Failed,
        result: None,
        continued_to_session_id: None,
        error: Some(error),
    }
}

/// How a job this server ran ended here.
#[derive(Debug)]
pub(crate) enum JobEnd {
    /// Its outcome is recorded (or another server took it over and records
    /// its own): this is what the client is told.
    Finished(MessageSessionResponse),
    /// This server stopped before answering it and handed the job back to
    /// the queue: another server (or this one, restarted) answers it.
    HandedBack,
    /// This server was running it already (its own poll claimed it again).
    AlreadyRunning,
}

/// Runs `job`, which this server has claimed, to its end, and records the
/// outcome (a job that could not run at all has a failed one, saying why).
/// `tell` hears when its message is posted.
///
/// A job waits until every job of its session accepted before it is done:
/// a session's messages are answered in the order they were accepted, so
/// a newer message never gets in ahead of an older one whose server
/// stopped. A server that stops cleanly hands its jobs back instead of
/// cancelling them; a panic in the run is a failed outcome, never a claim
/// renewed for ever.
pub(crate) async fn run(
    state: ServerState,
    job: RunJob,
    tell: Option<oneshot::Sender<(String, u64, String)>>,
) -> JobEnd {
    let Some(_in_flight) = state.job_started(&job.id) else {
        // This server runs it already: its claim lapsed and was renewed by
        // this claim; the run in flight goes on and records the outcome.
        tracing::info!(job = %job.id, "claimed again a job this server is running");
        return JobEnd::AlreadyRunning;
    };
    let session = job.session_id;
    let ran = std::panic::AssertUnwindSafe(run_claimed(&state, &job, tell)).catch_unwind().await;
    let response = match ran {
        Ok(Ok(Ran::Answered(response))) => response,
        Ok(Ok(Ran::HandBack)) => return hand_back(&state, &job).await,
        Ok(Ok(Ran::Lost)) => {
            tracing::info!(job = %job.id, "another server took this job over; its outcome stands");
            return JobEnd::Finished(failed(session, "another server took this message over".to_owned()));
        }
        // The store went away before the run could start: the job goes back
        // to the queue, to run once it is back, rather than end failed.
        Ok(Err(error)) if error.code == "store_unavailable" => return hand_back(&state, &job).await,
        Ok(Err(error)) => failed(session, error.to_string()),
        Err(panic) => failed(session, format!("the run stopped on an internal error: {}", panic_text(&panic))),
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
    JobEnd::Finished(response)
}

/// What a panic said, cut short: it is told to a client.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned());
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

async fn hand_back(state: &ServerState, job: &RunJob) -> JobEnd {
    let (id, owner) = (job.id.clone(), state.worker().to_owned());
    match state.blocking(move |store| Ok(store.release_job(&id, &owner)?)).await {
        Ok(true) => tracing::info!(job = %job.id, "handed a job back to the queue: this server is stopping"),
        Ok(false) => tracing::info!(job = %job.id, "a job this server stops on was taken over already"),
        // Its claim lapses on its own, and another server takes it over.
        Err(e) => tracing::warn!(job = %job.id, error = %e, "cannot hand a job back; its claim will lapse"),
    }
    JobEnd::HandedBack
}

/// How running a job went on this server.
enum Ran {
    /// It ran to an end: the response to record.
    Answered(MessageSessionResponse),
    /// This server stops: the job goes back to the queue.
    HandBack,
    /// Another server holds the job now.
    Lost,
}

async fn run_claimed(
    state: &ServerState,
    job: &RunJob,
    tell: Option<oneshot::Sender<(String, u64, String)>>,
) -> Result<Ran, ApiError> {
    let request: JobRequest = serde_json::from_value(job.request.clone())
        .map_err(|e| ApiError::internal(format!("job {} has a request this server cannot read: {e}", job.id)))?;
    let agent = state.agent_runtime(&job.agent_id)?;
    // The accepting server is told when the message is posted; a job it
    // did not just accept came from the queue.
    let fresh = tell.is_some();
    let relay = Arc::new(Relay::new(state.clone(), agent.clone(), job.id.clone(), tell));
    let session = job.session_id;
    let (claim_tx, mut claim) = watch::channel(Claim::Held);
    let (stop_tx, stop) = watch::channel(false);
    let renewing = keep_claim(state.clone(), job.id.clone(), claim_tx, stop_tx);
    let _renewing = AbortOnDrop(tokio::spawn(renewing));
    match wait_for_turn(state, job, &mut claim).await? {
        Turn::Now => {}
        Turn::Stopping => return Ok(Ran::HandBack),
        Turn::Lost => return Ok(Ran::Lost),
        Turn::Cancelled => return Ok(Ran::Answered(failed(session, "cancelled before it ran".to_owned()))),
    }
    let command = match posted_message(state, job, fresh).await? {
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
    // A cancel or a lost claim that the renewals found before the run was
    // submitted stops it here; one found after stops the run (see keep_claim).
    match *claim.borrow() {
        Claim::Held => {}
        Claim::Lost => return Ok(Ran::Lost),
        Claim::CancelAsked => return Ok(Ran::Answered(failed(session, "cancelled before it ran".to_owned()))),
    }
    let ran = agent.runtime.submit_cancellable(command, relay.as_ref(), stop).await;
    let outcomes = match ran? {
        Submitted::Ran(outcomes) => outcomes,
        _ => Vec::new(),
    };
    // A run the store's outage stopped is run again once the store is back:
    // the job goes back to the queue instead of ending failed.
    if outcomes.last().is_some_and(|o| o.store_out_of_reach) {
        return Ok(Ran::HandBack);
    }
    let stopped_here = outcomes.last().is_some_and(|o| o.status == RunStatus::Cancelled);
    let claim = *claim.borrow();
    if stopped_here && claim == Claim::Lost {
        return Ok(Ran::Lost);
    }
    if stopped_here && claim != Claim::CancelAsked && *state.shutting_down().borrow() {
        return Ok(Ran::HandBack);
    }
    Ok(Ran::Answered(response(session, &relay, &outcomes)))
}

/// Whether a job may post its message now.
enum Turn {
    /// Every job of its session accepted before it is done.
    Now,
    /// This server is stopping.
    Stopping,
    /// Another server took the job over.
    Lost,
    /// Someone asked to cancel it.
    Cancelled,
}

/// Waits until every job accepted before `job` in its session is done
/// (answered, failed, or given up), so messages are answered in the order
/// they were accepted whichever server runs them. The claim is renewed
/// meanwhile: waiting is not an attempt, and is never taken over.
async fn wait_for_turn(
    state: &ServerState,
    job: &RunJob,
    claim: &mut watch::Receiver<Claim>,
) -> Result<Turn, ApiError> {
    let mut stopping = state.shutting_down();
    // A job of this server ending rings at once; one ending on another
    // server is seen at the next look.
    let every = state.config().job_poll.clamp(Duration::from_millis(10), Duration::from_millis(250));
    loop {
        if *stopping.borrow() {
            return Ok(Turn::Stopping);
        }
        match *claim.borrow() {
            Claim::Held => {}
            Claim::Lost => return Ok(Turn::Lost),
            Claim::CancelAsked => return Ok(Turn::Cancelled),
        }
        let this = job.clone();
        if state.blocking(move |store| Ok(store.open_jobs_before(&this)?)).await? == 0 {
            return Ok(Turn::Now);
        }
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = state.job_finished_here() => {}
            _ = stopping.changed() => {}
            _ = claim.changed() => {}
        }
    }
}
/// The message an earlier claimant of `job` posted, if any: recorded on the
/// job, or (when it stopped between posting and recording) found by the
/// job's id on the message itself.
async fn posted_message(state: &ServerState, job: &RunJob, fresh: bool) -> Result<Option<EventId>, ApiError> {
    if let Some(event) = job.posted_event_id {
        return Ok(Some(event));
    }
    // A job claimed as it was accepted never ran anywhere; any other may
    // have been posted by a server that stopped before recording it (its
    // store went away, it was killed in between), however few attempts
    // it counts.
    if fresh {
        return Ok(None);
    }
    let (agent, session, id, since) = (job.agent_id.clone(), job.session_id, job.id.clone(), job.enqueued_at);
    state
        .blocking(move |store| {
            Ok(store.agent(&agent).read(|r| r.message_queued_as(session, &id, since))?.map(|event| event.id))
        })
        .await
}

/// Where this server's claim on a job stands, as its renewals find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// Still this server's.
    Held,
    /// Someone asked (on any server) to cancel the job.
    CancelAsked,
    /// Another server took the job over (or it is done).
    Lost,
}

/// Aborts a task when dropped: the claim of a job whose run ended, or
/// panicked, is never renewed again.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Renews this server's claim on `job` while it waits and runs, telling
/// `claim` what the renewals find; a cancel asked anywhere or a claim lost
/// to another server flips `stop`, which stops the job's own run (and no
/// other run of its session). A renewal that fails (the store is away) is tried again at the
/// next beat: the claim has two more before it lapses.
async fn keep_claim(state: ServerState, job: String, claim: watch::Sender<Claim>, stop: watch::Sender<bool>) {
    let every = (state.config().run_lease / 3).max(Duration::from_millis(50));
    loop {
        tokio::time::sleep(every).await;
        let (id, owner, ttl) = (job.clone(), state.worker().to_owned(), state.config().run_lease);
        let renewed = state.blocking(move |store| Ok(store.renew_job(&id, JobClaim { owner: &owner, ttl })?)).await;
        let now = match renewed {
            Ok(JobRenewal::Held { cancel_requested: false }) => Claim::Held,
            Ok(JobRenewal::Held { cancel_requested: true }) => Claim::CancelAsked,
            Ok(JobRenewal::Lost) => {
                tracing::warn!(%job, "lost the claim on a job; stopping its run");
                Claim::Lost
            }
            Err(e) => {
                tracing::warn!(%job, error = %e, "cannot renew a job's claim");
                continue;
            }
        };
        if now != Claim::Held && *claim.borrow() == Claim::Held {
            claim.send_replace(now);
            // This job's run alone: other clients' runs of the session go on.
            stop.send_replace(true);
        }
        if now == Claim::Lost {
            return;
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
                    tokio::spawn(async move {
                        run(state, job, None).await;
                    });
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
