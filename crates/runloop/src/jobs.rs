//! The shared queue of runs (`run_jobs`), worked: every message a server
//! is asked to answer becomes a job ([`RunJob`]) that the process claims at
//! once and runs ([`JobQueue::accept`]); while it runs, the claim is
//! renewed. Several processes on one database share the queue: one whose
//! claim lapsed (it was killed, its machine went away) has its job taken
//! over by another ([`JobQueue::work`]), which answers the message the
//! first one posted, or posts it if it never was. A cancel reaches the job
//! wherever it runs ([`JobQueue::cancel`]).
//!
//! What a job asks for is a [`JobRequest`]; what it came to is a
//! [`JobReport`], recorded as the job's outcome in the words the
//! [`JobHost`] gives it (a server: the response its API answers with).
//!
//! Each message is answered once: a claimant posts it with the job's id on
//! it (`queued_as`) and notes the posting on the job, so whoever takes the
//! job over answers the message posted before rather than posting it
//! again; only the claimant records an outcome or hands the job back.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::FutureExt as _;
use seri_core::{AgentId, EventId, Lane, Message, RunId, Seq, SessionId};
use seri_store::{
    ChangeKind, Enqueued, JobClaim, JobKey, JobRenewal, LeaseOwner, RunJob, Store, StoreChange, StoreError,
    StoreErrorKind,
};
use tokio::sync::{Notify, broadcast, oneshot, watch};
use tracing::Instrument as _;

use crate::command::{Command, CommandError, Submitted};
use crate::error::RunError;
use crate::protocol::{RunEvent, RunObserver, RunOutcome, RunStatus};
use crate::runtime::Runtime;

/// How often a process deletes done jobs older than [`seri_store::JOB_RETENTION`].
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// What a job asks for: the `request` the store keeps for it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRequest {
    /// The message to post and answer.
    pub message: Message,
    /// Its queue.
    pub lane: Lane,
    /// The turn budget; `None`: the runtime's.
    #[serde(default)]
    pub max_turns: Option<u32>,
}

/// What the queue needs from the process that works it.
pub trait JobHost: Send + Sync + 'static {
    /// The runtime that runs `agent`'s jobs (made on first use); why not,
    /// when there is none.
    fn runtime(&self, agent: &AgentId) -> Result<Runtime, String>;

    /// Hears each event of a run answering one of `agent`'s jobs, run `run`
    /// in `session` (a successor's run comes after its predecessor's).
    fn run_event(&self, agent: &AgentId, session: SessionId, run: RunId, event: &RunEvent);

    /// What the queue records as the outcome of a job that came to
    /// `report`: what a client asking after the job reads back.
    fn outcome(&self, report: &JobReport) -> serde_json::Value;
}

/// How the queue is worked.
#[derive(Debug, Clone, Copy)]
pub struct JobSettings {
    /// How long a claim lasts without renewal (it is renewed every third
    /// of it): once it lapses, another process takes the job over.
    pub claim: Duration,
    /// How often the process looks for jobs others left.
    pub poll: Duration,
}

/// A job's message, once posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posted {
    /// The message's event.
    pub event_id: EventId,
    /// Its seq.
    pub seq: Seq,
    /// The run answering it.
    pub run_id: Option<RunId>,
}

/// What a job came to.
#[derive(Debug, Clone)]
pub struct JobReport {
    /// The session its message was sent to.
    pub session_id: SessionId,
    /// Its message, once posted (by this claimant: one that took the job
    /// over answers the message posted before).
    pub posted: Option<Posted>,
    /// The first run answering it.
    pub run_id: Option<RunId>,
    /// How each run answering it ended, in order (a continuation's
    /// successor's after its predecessor's).
    pub outcomes: Vec<RunOutcome>,
    /// Why it ended without running, when it did.
    pub failure: Option<String>,
}

impl JobReport {
    fn failed(session_id: SessionId, failure: String) -> Self {
        Self { session_id, posted: None, run_id: None, outcomes: Vec::new(), failure: Some(failure) }
    }

    /// How its last run ended; `None` when none ran.
    pub fn status(&self) -> Option<RunStatus> {
        self.outcomes.last().map(|o| o.status)
    }

    /// The final answer, from whichever session gave it.
    pub fn result(&self) -> Option<&str> {
        self.outcomes.last().and_then(|o| o.result.as_deref())
    }

    /// The newest successor the answer went to, when the session continued.
    pub fn continued_to(&self) -> Option<SessionId> {
        self.outcomes.iter().rev().find_map(|o| o.continued_to.as_ref().map(|c| c.session_id))
    }

    /// What went wrong, when it failed.
    pub fn error(&self) -> Option<&str> {
        self.failure.as_deref().or_else(|| self.outcomes.last().and_then(|o| o.error.as_deref()))
    }
}

/// How a job this process ran ended here.
#[derive(Debug)]
pub enum JobEnd {
    /// Its outcome is recorded (or another process took it over and records
    /// its own): this is what its client is told.
    Finished(JobReport),
    /// This process stopped before answering it and handed the job back to
    /// the queue: another process (or this one, restarted) answers it.
    HandedBack,
    /// This process was running it already (its own poll claimed it again).
    AlreadyRunning,
    /// Another process took it over (this one's claim lapsed, a store
    /// outage outlasting it) and recorded its outcome: the job as done,
    /// whose outcome its client is told.
    TakenOver(RunJob),
}

/// A job just accepted and claimed by this process, running.
#[derive(Debug)]
pub struct Accepted {
    /// The job.
    pub job_id: String,
    /// Hears when its message is posted; dropped unheard when it never is.
    pub posted: oneshot::Receiver<Posted>,
    /// How it ends here.
    pub end: tokio::task::JoinHandle<JobEnd>,
}

/// What posting a message under an idempotency key came to.
#[derive(Debug)]
pub enum Acceptance {
    /// The key is new: its job was queued and runs here.
    New(Accepted),
    /// The key was used before, with the same message: the job it made.
    Existing(RunJob),
    /// The key was used before, with another message: the job it made.
    KeyReused(RunJob),
}

/// Why working a job failed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The run loop refused or failed the job's command.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// The job's request is not one this build reads.
    #[error("job {job} has a request this process cannot read: {problem}")]
    Unreadable {
        /// The job.
        job: String,
        /// What was wrong.
        problem: String,
    },
    /// The job's agent has no runtime here.
    #[error("{0}")]
    Runtime(String),
    /// A task on the blocking pool stopped.
    #[error("a store task failed: {0}")]
    Task(String),
}

impl JobError {
    /// Whether the store was out of reach: the job goes back to the queue,
    /// to run once it is back, rather than end failed.
    pub fn store_unavailable(&self) -> bool {
        match self {
            JobError::Store(e) | JobError::Command(CommandError::Run(RunError::Store(e))) => {
                e.kind() == StoreErrorKind::Unavailable
            }
            _ => false,
        }
    }
}

/// This process's side of the shared queue. Cheap to clone.
#[derive(Clone)]
pub struct JobQueue {
    inner: Arc<QueueInner>,
}

struct QueueInner {
    store: Arc<Store>,
    host: Arc<dyn JobHost>,
    settings: JobSettings,
    /// This process, as it claims jobs: `host pid instance`.
    worker: String,
    /// Flips once the process is stopping: its jobs go back to the queue.
    stopping: watch::Receiver<bool>,
    here: Here,
    /// What the store tells of its commits (every process's on
    /// PostgreSQL, this one's on SQLite), passed on while [`JobQueue::work`]
    /// runs: what a wait on another process's job wakes on.
    news: broadcast::Sender<StoreChange>,
}

/// The jobs this process is running or waiting to run, and for each of
/// their sessions a bell rung whenever one of its jobs ends: the jobs
/// queued behind it in that session look again at once, and those of other
/// sessions (whose turn it cannot be) do not look at all.
#[derive(Default)]
struct Here {
    count: AtomicUsize,
    /// Each session with jobs here: which, and its bell.
    sessions: Mutex<HashMap<SessionId, SessionHere>>,
    /// Which jobs: a claim of this process that lapsed (its store was away
    /// longer than the claim) is claimed again by its own poll, and must
    /// not start a second run of the same job. A job lost to another
    /// process is not among them while its outcome is awaited: nothing
    /// runs it here, and claimed back it is run again.
    ids: Mutex<HashSet<String>>,
}

/// A session's jobs running or waiting here, and its bell.
#[derive(Default)]
struct SessionHere {
    /// Each by when it was queued (the store's stamp, in milliseconds) and
    /// its id: the order the store answers a session's jobs in.
    jobs: BTreeSet<(i64, String)>,
    bell: Arc<Notify>,
}

/// Counts a job as this process's until dropped, and then rings its
/// session's bell.
struct InFlight {
    queue: JobQueue,
    /// When it was queued, and its id.
    key: (i64, String),
    session: SessionId,
    bell: Arc<Notify>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let here = &self.queue.inner.here;
        here.ids.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.key.1);
        here.count.fetch_sub(1, Ordering::SeqCst);
        let mut sessions = here.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(jobs) = sessions.get_mut(&self.session) {
            jobs.jobs.remove(&self.key);
            if jobs.jobs.is_empty() {
                sessions.remove(&self.session);
            }
        }
        drop(sessions);
        // Rung once it is no longer counted: a wait it wakes finds it gone.
        self.bell.notify_waiters();
    }
}

impl JobQueue {
    /// The queue of `store`, worked for `host`'s agents, until `stopping`
    /// turns true.
    pub fn new(
        store: Arc<Store>,
        host: Arc<dyn JobHost>,
        settings: JobSettings,
        stopping: watch::Receiver<bool>,
    ) -> Self {
        let owner = LeaseOwner::this_process(store.new_run_id().to_string());
        let worker = format!("{} {} {}", owner.host, owner.pid, owner.instance);
        let news = broadcast::channel(1024).0;
        Self { inner: Arc::new(QueueInner { store, host, settings, worker, stopping, here: Here::default(), news }) }
    }

    /// This process as a claimant of jobs (`host pid instance`).
    pub fn worker(&self) -> &str {
        &self.inner.worker
    }

    /// How many jobs this process is running or waiting to run.
    pub fn running_here(&self) -> usize {
        self.inner.here.count.load(Ordering::SeqCst)
    }

    /// Queues `request` for `agent`'s `session`, claimed by this process in
    /// the same transaction, and starts running it: it runs here unless
    /// this process stops, and then on another of the same database.
    pub async fn accept(
        &self,
        agent: &AgentId,
        session: SessionId,
        request: &JobRequest,
    ) -> Result<Accepted, JobError> {
        let request = serde_json::to_value(request)
            .map_err(|e| JobError::Unreadable { job: "(new)".to_owned(), problem: e.to_string() })?;
        let (owner, worker, ttl) = (agent.clone(), self.inner.worker.clone(), self.inner.settings.claim);
        let claim = move |store: &Store| {
            store.enqueue_job_counted(&owner, session, &request, None, Some(JobClaim { owner: &worker, ttl }))
        };
        let (enqueued, ahead) = self.blocking(claim).instrument(tracing::debug_span!("job.enqueue")).await?;
        let (Enqueued::New(job) | Enqueued::Existing(job) | Enqueued::KeyReused(job)) = enqueued;
        Ok(self.start(job, ahead))
    }

    /// Like [`JobQueue::accept`], unless `key` was used for `agent`'s
    /// `session` before (a client posting again a message whose answer it
    /// lost): then nothing is queued or started, and the job the first
    /// post made is returned, to be waited on like any job in the store
    /// ([`Acceptance::KeyReused`] when the key came with another message).
    pub async fn accept_once(
        &self,
        agent: &AgentId,
        session: SessionId,
        request: &JobRequest,
        key: &str,
        digest: &str,
    ) -> Result<Acceptance, JobError> {
        let request = serde_json::to_value(request)
            .map_err(|e| JobError::Unreadable { job: "(new)".to_owned(), problem: e.to_string() })?;
        let (owner, worker, ttl) = (agent.clone(), self.inner.worker.clone(), self.inner.settings.claim);
        let (key, digest) = (key.to_owned(), digest.to_owned());
        let enqueued = self
            .blocking(move |store| {
                let key = JobKey { key: &key, digest: &digest };
                store.enqueue_job_counted(&owner, session, &request, Some(key), Some(JobClaim { owner: &worker, ttl }))
            })
            .instrument(tracing::debug_span!("job.enqueue"))
            .await?;
        let (enqueued, ahead) = enqueued;
        Ok(match enqueued {
            Enqueued::New(job) => Acceptance::New(self.start(job, ahead)),
            Enqueued::Existing(job) => Acceptance::Existing(job),
            Enqueued::KeyReused(job) => Acceptance::KeyReused(job),
        })
    }

    /// Starts running `job`, just queued and claimed by this process, with
    /// `ahead` jobs of its session before it as it was queued.
    fn start(&self, job: RunJob, ahead: Option<u64>) -> Accepted {
        let (tell, posted) = oneshot::channel();
        let job_id = job.id.clone();
        let queue = self.clone();
        let end = tokio::spawn(async move { queue.run(job, Some(tell), ahead).await });
        Accepted { job_id, posted, end }
    }

    /// Asks every job of `agent`'s `session` that is not done to stop,
    /// wherever it runs (another process stops it when it next renews its
    /// claim). Returns how many were asked.
    pub async fn cancel(&self, agent: &AgentId, session: SessionId) -> Result<u64, JobError> {
        let agent = agent.clone();
        self.blocking(move |store| store.request_job_cancel(&agent, session)).await
    }

    /// Takes over jobs other processes left: every `poll`, claims each job
    /// that waits or whose claim lapsed, and runs it, until the process
    /// stops. Done jobs older than [`seri_store::JOB_RETENTION`] are
    /// deleted at start and then hourly (any process may do it).
    pub async fn work(self) {
        let mut stopping = self.inner.stopping.clone();
        let mut pruned: Option<tokio::time::Instant> = None;
        let queued = Arc::new(Notify::new());
        tokio::spawn(self.clone().hear(queued.clone()));
        loop {
            if pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                pruned = Some(tokio::time::Instant::now());
                if let Err(e) = self.blocking(|store| store.prune_jobs(seri_store::JOB_RETENTION)).await {
                    tracing::warn!(error = %e, "cannot prune done jobs");
                }
            }
            tokio::select! {
                () = tokio::time::sleep(self.inner.settings.poll) => {}
                // A job handed back (here or by another process) is claimed at once.
                () = queued.notified() => {}
                _ = stopping.changed() => return,
            }
            if *stopping.borrow() {
                return;
            }
            loop {
                let (owner, ttl) = (self.inner.worker.clone(), self.inner.settings.claim);
                match self.blocking(move |store| store.claim_next_job(JobClaim { owner: &owner, ttl })).await {
                    Ok(Some(job)) => {
                        let queue = self.clone();
                        // Its outcome is recorded on the job; a failure is logged by `run`.
                        tokio::spawn(async move {
                            queue.run(job, None, None).await;
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

    /// Passes on what the store tells of its commits to the waits of this
    /// process ([`JobQueue::news`]), and rings `queued` when a job is
    /// handed back to the queue, until the process stops.
    async fn hear(self, queued: Arc<Notify>) {
        let mut changes = self.inner.store.subscribe_changes();
        let mut stopping = self.inner.stopping.clone();
        loop {
            let change = tokio::select! {
                change = changes.recv() => match change {
                    Some(change) => change,
                    None => return,
                },
                _ = stopping.changed() => return,
            };
            if change.change == ChangeKind::JobQueued {
                queued.notify_one();
            }
            let _ = self.inner.news.send(change);
        }
    }

    /// What the store tells of its commits from now on (see
    /// [`seri_store::changes`]), while [`JobQueue::work`] runs: a wait on a
    /// job another process runs wakes when the store says it ended, rather
    /// than reading the job again and again. Subscribe before reading what
    /// is waited on, so nothing told in between is missed.
    pub fn news(&self) -> broadcast::Receiver<StoreChange> {
        self.inner.news.subscribe()
    }

    /// How often a wait on another process's job reads it again, in case
    /// what the store told was lost (its listening connection dropped): the
    /// poll on PostgreSQL, whose every commit is told to every process; on
    /// SQLite, which tells only this process's commits, a quarter of a
    /// second at most.
    pub fn look_again_every(&self) -> Duration {
        let poll = self.inner.settings.poll;
        if self.inner.store.is_postgres() {
            poll
        } else {
            poll.clamp(Duration::from_millis(10), Duration::from_millis(250))
        }
    }

    /// Runs `f` on the blocking pool with the store: SQLite never blocks an
    /// async worker.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, JobError> {
        let store = self.inner.store.clone();
        Ok(tokio::task::spawn_blocking(move || f(&store)).await.map_err(|e| JobError::Task(e.to_string()))??)
    }

    /// Counts job `id` of `session` as running (or waiting to run) here
    /// until the guard drops; `None` when it already is (a second run of it
    /// must not start).
    fn started(&self, job: &RunJob) -> Option<InFlight> {
        let here = &self.inner.here;
        if !here.ids.lock().unwrap_or_else(PoisonError::into_inner).insert(job.id.clone()) {
            return None;
        }
        here.count.fetch_add(1, Ordering::SeqCst);
        let key = (job.enqueued_at.millis(), job.id.clone());
        let mut sessions = here.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let jobs = sessions.entry(job.session_id).or_default();
        jobs.jobs.insert(key.clone());
        let bell = jobs.bell.clone();
        Some(InFlight { queue: self.clone(), key, session: job.session_id, bell })
    }

    /// Whether a job of `job`'s session queued before it runs or waits
    /// here. Such a job is not done (its end is recorded before it leaves),
    /// so `job` is not first: the store need not be asked. Only a stamp
    /// strictly earlier counts: the store breaks a tie by comparing ids in
    /// its own collation, which need not be this one (and a tie does not
    /// happen among a session's open jobs, each stamped after the others).
    fn queued_before_here(&self, job: &RunJob) -> bool {
        let sessions = self.inner.here.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions
            .get(&job.session_id)
            .and_then(|jobs| jobs.jobs.first())
            .is_some_and(|(at, _)| *at < job.enqueued_at.millis())
    }

    /// Runs `job`, which this process has claimed, to its end, and records
    /// the outcome (a job that could not run at all has a failed one,
    /// saying why). `tell` hears when its message is posted; `ahead`, when
    /// known, how many jobs of its session were before it as it was queued.
    ///
    /// A job waits until every job of its session accepted before it is
    /// done: a session's messages are answered in the order they were
    /// accepted, so a newer message never gets in ahead of an older one
    /// whose process stopped. A process that stops cleanly hands its jobs
    /// back instead of cancelling them; a panic in the run is a failed
    /// outcome, never a claim renewed for ever.
    async fn run(&self, job: RunJob, tell: Option<oneshot::Sender<Posted>>, ahead: Option<u64>) -> JobEnd {
        let Some(in_flight) = self.started(&job) else {
            // This process runs it already: its claim lapsed and was renewed
            // by this claim; the run in flight goes on and records the outcome.
            // (One in flight that finds the job lost to another process lets
            // it go: this claim then lapses, unrenewed, and the next is run.)
            tracing::info!(job = %job.id, "claimed again a job this process is running");
            return JobEnd::AlreadyRunning;
        };
        let session = job.session_id;
        let ran =
            std::panic::AssertUnwindSafe(self.run_claimed(&job, tell, ahead, &in_flight.bell)).catch_unwind().await;
        // Whether the run recorded the job's end with its own.
        let (report, recorded) = match ran {
            Ok(Ok(Ran::Answered(report))) => (report, false),
            Ok(Ok(Ran::Recorded(report))) => (report, true),
            Ok(Ok(Ran::HandBack)) => return self.hand_back(&job).await,
            Ok(Ok(Ran::Lost)) => {
                tracing::info!(job = %job.id, "another process took this job over; waiting for its outcome");
                // Nothing runs it here any more, so it is no longer this
                // process's: should the process that took it stop in turn
                // (killed, or its claim lapsing in a store outage), this
                // process's poll claims it back and must run it, not take
                // it for a run in flight (fault schedule 0x2525c71ba2d8d16b:
                // the poll kept claiming such a job and running nothing,
                // and its session waited behind it for as long as the
                // server lived).
                drop(in_flight);
                return self.taken_over(&job).await;
            }
            // The store went away before the run could start: the job goes
            // back to the queue, to run once it is back, rather than end failed.
            Ok(Err(error)) if error.store_unavailable() => return self.hand_back(&job).await,
            Ok(Err(error)) => (JobReport::failed(session, error.to_string()), false),
            Err(panic) => {
                let error = format!("the run stopped on an internal error: {}", panic_text(&panic));
                (JobReport::failed(session, error), false)
            }
        };
        if let Some(error) = report.error() {
            tracing::warn!(job = %job.id, %session, attempt = job.attempts, %error, "a job's run failed");
        }
        if recorded {
            return JobEnd::Finished(report);
        }
        let (id, owner, outcome) = (job.id.clone(), self.inner.worker.clone(), self.inner.host.outcome(&report));
        let finished = self.blocking(move |store| store.finish_job(&id, &owner, &outcome));
        match finished.instrument(tracing::debug_span!("job.finish")).await {
            Ok(true) => {}
            Ok(false) => tracing::info!(job = %job.id, "another process took this job over; its outcome stands"),
            Err(e) => tracing::warn!(job = %job.id, error = %e, "cannot record a job's outcome"),
        }
        JobEnd::Finished(report)
    }

    /// The outcome the process that took `job` over records, once it has:
    /// the client that posted the message here is told how it was
    /// answered, never that it failed because another process answers it.
    /// Should this process stop first, the client is told it was handed
    /// over.
    async fn taken_over(&self, job: &RunJob) -> JobEnd {
        let mut stopping = self.inner.stopping.clone();
        let every = self.look_again_every();
        let mut news = self.news();
        loop {
            let id = job.id.clone();
            match self.blocking(move |store| store.job(&id)).await {
                Ok(Some(done)) if done.state == seri_store::JobState::Done => return JobEnd::TakenOver(done),
                Ok(_) => {}
                Err(e) => tracing::warn!(job = %job.id, error = %e, "cannot read a job taken over; reading again"),
            }
            if *stopping.borrow() {
                return JobEnd::HandedBack;
            }
            tokio::select! {
                () = heard(&mut news, |c| c.change == ChangeKind::JobDone && c.job.as_deref() == Some(&job.id)) => {}
                () = tokio::time::sleep(every) => {}
                _ = stopping.changed() => {}
            }
        }
    }

    async fn hand_back(&self, job: &RunJob) -> JobEnd {
        let (id, owner) = (job.id.clone(), self.inner.worker.clone());
        match self.blocking(move |store| store.release_job(&id, &owner)).await {
            Ok(true) => tracing::info!(job = %job.id, "handed a job back to the queue: this process is stopping"),
            Ok(false) => tracing::info!(job = %job.id, "a job this process stops on was taken over already"),
            // Its claim lapses on its own, and another process takes it over.
            Err(e) => tracing::warn!(job = %job.id, error = %e, "cannot hand a job back; its claim will lapse"),
        }
        JobEnd::HandedBack
    }

    async fn run_claimed(
        &self,
        job: &RunJob,
        tell: Option<oneshot::Sender<Posted>>,
        ahead: Option<u64>,
        bell: &Notify,
    ) -> Result<Ran, JobError> {
        let request: JobRequest = serde_json::from_value(job.request.clone())
            .map_err(|e| JobError::Unreadable { job: job.id.clone(), problem: e.to_string() })?;
        let runtime = self.inner.host.runtime(&job.agent_id).map_err(JobError::Runtime)?;
        // The accepting process is told when the message is posted; a job it
        // did not just accept came from the queue.
        let fresh = tell.is_some();
        let observer = JobObserver::new(self.clone(), job, tell);
        let session = job.session_id;
        let (claim_tx, mut claim) = watch::channel(Claim::Held);
        let (stop_tx, stop) = watch::channel(false);
        let renewing = self.clone().keep_claim(job.id.clone(), claim_tx, stop_tx);
        let _renewing = AbortOnDrop(tokio::spawn(renewing));
        match self
            .wait_for_turn(job, &mut claim, ahead, bell)
            .instrument(tracing::debug_span!("job.wait_for_turn"))
            .await?
        {
            Turn::Now => {}
            Turn::Stopping => return Ok(Ran::HandBack),
            Turn::Lost => return Ok(Ran::Lost),
            Turn::Cancelled => {
                return Ok(Ran::Answered(JobReport::failed(session, "cancelled before it ran".to_owned())));
            }
        }
        // A job that stopped every server answering it too often gets a last
        // look, not another answer: its message may have been answered
        // since (a run stopped before it recorded the job done, another
        // client of the session answered it), and that answer is its
        // outcome; the model is not asked again (no turn), and the job is
        // given up if none is found.
        let last_look = job.attempts >= seri_store::MAX_JOB_ATTEMPTS;
        let command = match self.posted_message(job, fresh).await? {
            None if last_look => {
                return Ok(Ran::Answered(JobReport::failed(session, seri_store::given_up(job.attempts))));
            }
            None => {
                let mut message = request.message;
                message.meta_mut().queued_as = Some(job.id.clone());
                Command::Send { session_id: session, message, lane: request.lane, max_turns: request.max_turns }
            }
            Some(event_id) => {
                tracing::info!(job = %job.id, %session, attempt = job.attempts, last_look, "taking over a job another process left");
                let max_turns = if last_look { Some(0) } else { request.max_turns };
                Command::Answer { session_id: session, event_id, max_turns }
            }
        };
        // A cancel or a lost claim that the renewals found before the run was
        // submitted stops it here; one found after stops the run (see keep_claim).
        match *claim.borrow() {
            Claim::Held => {}
            Claim::Lost => return Ok(Ran::Lost),
            Claim::CancelAsked => {
                return Ok(Ran::Answered(JobReport::failed(session, "cancelled before it ran".to_owned())));
            }
        }
        let submitted = runtime.submit_cancellable(command, &observer, stop);
        let outcomes = match submitted.instrument(tracing::debug_span!("job.submit")).await? {
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
        if stopped_here && claim != Claim::CancelAsked && *self.inner.stopping.borrow() {
            return Ok(Ran::HandBack);
        }
        let recorded = outcomes.last().is_some_and(|o| o.job_done);
        let report = observer.report(session, outcomes);
        if recorded {
            return Ok(Ran::Recorded(report));
        }
        if last_look && report.status() != Some(RunStatus::Succeeded) {
            tracing::warn!(job = %job.id, attempts = job.attempts, "gave up a job: its last look found no answer");
            // Its look ran no turn; what it came to is that nothing answered.
            let failure = Some(seri_store::given_up(job.attempts));
            return Ok(Ran::Answered(JobReport { failure, outcomes: Vec::new(), ..report }));
        }
        Ok(Ran::Answered(report))
    }

    /// Waits until every job accepted before `job` in its session is done
    /// (answered, failed, or given up), so messages are answered in the
    /// order they were accepted whichever process runs them. The claim is
    /// renewed meanwhile: waiting is not an attempt, and is never taken over.
    ///
    /// A job of this process ending rings `bell`, its session's, at once;
    /// one ending on another process is told by the store (on SQLite, seen
    /// at the next look). A job with one queued before it here waits for
    /// the bell alone: only the first of a session's jobs here asks the
    /// store and hears what it tells. `ahead`, counted as the job was
    /// queued, stands for the first look: none before it then, none later
    /// (a job queued after it is after it).
    async fn wait_for_turn(
        &self,
        job: &RunJob,
        claim: &mut watch::Receiver<Claim>,
        mut ahead: Option<u64>,
        bell: &Notify,
    ) -> Result<Turn, JobError> {
        let mut stopping = self.inner.stopping.clone();
        // One ending on another process is told by the store.
        let every = self.look_again_every();
        let mut news = None;
        loop {
            if *stopping.borrow() {
                return Ok(Turn::Stopping);
            }
            match *claim.borrow() {
                Claim::Held => {}
                Claim::Lost => return Ok(Turn::Lost),
                Claim::CancelAsked => return Ok(Turn::Cancelled),
            }
            // Listening before looking: a job that ends while the store is
            // asked rings this wait, never a bell nobody hears.
            let rung = bell.notified();
            tokio::pin!(rung);
            rung.as_mut().enable();
            // One queued before it here is not done: no need to ask the
            // store, nor to hear what it tells, until that one's end rings
            // the bell. (Five clients posting to one session had each job's
            // end wake every job waiting behind it, and each asked; and
            // every waiting job woke for every commit the store told.)
            let behind_one_here = self.queued_before_here(job);
            if behind_one_here {
                news = None;
            } else if news.is_none() {
                news = Some(self.news());
            }
            let this = job.clone();
            let before = match ahead.take() {
                Some(counted) => counted,
                None if behind_one_here => 1,
                None => self.blocking(move |store| store.open_jobs_before(&this)).await?,
            };
            if before == 0 {
                return Ok(Turn::Now);
            }
            let ended_elsewhere = async {
                match news.as_mut() {
                    Some(news) => {
                        heard(news, |c| c.change == ChangeKind::JobDone && c.session == job.session_id).await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep(every) => tracing::trace!("a job waiting for its turn looks again: its poll"),
                () = &mut rung => tracing::trace!("a job waiting for its turn looks again: rung"),
                () = ended_elsewhere => {}
                _ = stopping.changed() => {}
                _ = claim.changed() => {}
            }
        }
    }

    /// The message an earlier claimant of `job` posted, if any: recorded on
    /// the job, or (when it stopped between posting and recording) found by
    /// the job's id on the message itself.
    async fn posted_message(&self, job: &RunJob, fresh: bool) -> Result<Option<EventId>, JobError> {
        if let Some(event) = job.posted_event_id {
            return Ok(Some(event));
        }
        // A job claimed as it was accepted never ran anywhere; any other may
        // have been posted by a process that stopped before recording it
        // (its store went away, it was killed in between), however few
        // attempts it counts.
        if fresh {
            return Ok(None);
        }
        let (agent, session, id, since) = (job.agent_id.clone(), job.session_id, job.id.clone(), job.enqueued_at);
        self.blocking(move |store| {
            Ok(store.agent(&agent).read(|r| r.message_queued_as(session, &id, since))?.map(|event| event.id))
        })
        .await
    }

    /// Renews this process's claim on `job` while it waits and runs,
    /// telling `claim` what the renewals find; a cancel asked anywhere or a
    /// claim lost to another process flips `stop`, which stops the job's
    /// own run (and no other run of its session). A renewal that fails (the
    /// store is away) is tried again at the next beat: the claim has two
    /// more before it lapses.
    async fn keep_claim(self, job: String, claim: watch::Sender<Claim>, stop: watch::Sender<bool>) {
        let ttl = self.inner.settings.claim;
        let every = (ttl / 3).max(Duration::from_millis(50));
        loop {
            tokio::time::sleep(every).await;
            let (id, owner) = (job.clone(), self.inner.worker.clone());
            let now = match self.blocking(move |store| store.renew_job(&id, JobClaim { owner: &owner, ttl })).await {
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
}

/// Waits until the store tells of a change `wanted` accepts, or until some
/// of what it told was missed (this wait fell behind): either way, time to
/// read again. Never returns once the telling stopped (the caller's poll
/// stands).
pub async fn heard(news: &mut broadcast::Receiver<StoreChange>, wanted: impl Fn(&StoreChange) -> bool) {
    loop {
        match news.recv().await {
            Ok(change) if wanted(&change) => return,
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(_)) => return,
            Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
        }
    }
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

/// How running a job went in this process.
enum Ran {
    /// It ran to an end: the report to record.
    Answered(JobReport),
    /// It ran to an end, recorded with the answer, in the transaction that
    /// gave the session back ([`RunObserver::job_ending`]).
    Recorded(JobReport),
    /// This process stops: the job goes back to the queue.
    HandBack,
    /// Another process holds the job now.
    Lost,
}

/// Whether a job may post its message now.
enum Turn {
    /// Every job of its session accepted before it is done.
    Now,
    /// This process is stopping.
    Stopping,
    /// Another process took the job over.
    Lost,
    /// Someone asked to cancel it.
    Cancelled,
}

/// Where this process's claim on a job stands, as its renewals find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// Still this process's.
    Held,
    /// Someone asked (in any process) to cancel the job.
    CancelAsked,
    /// Another process took the job over (or it is done).
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

/// Hears a job's runs: notes the message once posted (the job's row has it
/// from the posting's own transaction, so a process taking the job over
/// answers it rather than posting it again) and the first run, and passes
/// every event on to the host.
struct JobObserver {
    queue: JobQueue,
    /// The job, its session, and whether this is its last look (whose
    /// outcome the queue decides after the run).
    job_id: String,
    session_id: SessionId,
    last_look: bool,
    agent: AgentId,
    current: Mutex<Option<(SessionId, RunId)>>,
    first_run: Mutex<Option<RunId>>,
    posted: Mutex<Option<(EventId, Seq)>>,
    told: Mutex<Option<oneshot::Sender<Posted>>>,
}

impl JobObserver {
    fn new(queue: JobQueue, job: &RunJob, tell: Option<oneshot::Sender<Posted>>) -> Self {
        Self {
            queue,
            job_id: job.id.clone(),
            session_id: job.session_id,
            last_look: job.attempts >= seri_store::MAX_JOB_ATTEMPTS,
            agent: job.agent_id.clone(),
            current: Mutex::new(None),
            first_run: Mutex::new(None),
            posted: Mutex::new(None),
            told: Mutex::new(tell),
        }
    }

    /// The report of a job whose runs ended with `outcomes`.
    fn report(&self, session_id: SessionId, outcomes: Vec<RunOutcome>) -> JobReport {
        let posted = *self.posted.lock().unwrap_or_else(PoisonError::into_inner);
        let run_id = *self.first_run.lock().unwrap_or_else(PoisonError::into_inner);
        let posted = posted.map(|(event_id, seq)| Posted { event_id, seq, run_id });
        JobReport { session_id, posted, run_id, outcomes, failure: None }
    }
}

impl RunObserver for JobObserver {
    fn event(&self, event: RunEvent) {
        if let RunEvent::RunStarted { run_id, session_id } = &event {
            *self.current.lock().unwrap_or_else(PoisonError::into_inner) = Some((*session_id, *run_id));
            self.first_run.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(*run_id);
        }
        // The message is recorded on the job by the transaction that posts
        // it (`Runtime::settle_then_post`).
        if let RunEvent::MessagePosted { event_id, seq, .. } = &event {
            *self.posted.lock().unwrap_or_else(PoisonError::into_inner) = Some((*event_id, *seq));
            let run_id = *self.first_run.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(tell) = self.told.lock().unwrap_or_else(PoisonError::into_inner).take() {
                let _ = tell.send(Posted { event_id: *event_id, seq: *seq, run_id });
            }
        }
        let current = *self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((session_id, run_id)) = current {
            self.queue.inner.host.run_event(&self.agent, session_id, run_id, &event);
        }
    }

    /// The job's end, when the job's own run ended it: not a run that
    /// continued into a successor (the successor's run answers), nor one
    /// stopped here or cut off by the store (the queue decides: a lost
    /// claim, a stop, a hand-back), nor a last look (whose outcome the
    /// queue decides after it). The outcome is the one the queue would
    /// record for the same report.
    fn job_ending(&self, outcome: &RunOutcome) -> Option<crate::protocol::JobEnding> {
        let first = *self.first_run.lock().unwrap_or_else(PoisonError::into_inner);
        if self.last_look
            || first != Some(outcome.run_id)
            || outcome.continued_to.is_some()
            || outcome.status == RunStatus::Cancelled
            || outcome.store_out_of_reach
        {
            return None;
        }
        let report = self.report(self.session_id, vec![outcome.clone()]);
        Some(crate::protocol::JobEnding {
            job_id: self.job_id.clone(),
            owner: self.queue.inner.worker.clone(),
            outcome: self.queue.inner.host.outcome(&report),
        })
    }
}
