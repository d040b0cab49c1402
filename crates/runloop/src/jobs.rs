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
//! [`JobReport`], recorded as the job's typed outcome
//! ([`JobReport::outcome`], a [`seri_store::JobOutcome`]); a client's
//! answer is built from that when it asks.
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
    ChangeKind, Enqueued, JobClaim, JobKey, JobOutcome, JobRenewal, JobStatus, LeaseOwner, RunJob, Store, StoreChange,
    StoreError, StoreErrorKind,
};
use tokio::sync::{Notify, broadcast, oneshot, watch};
use tracing::Instrument as _;

use crate::command::{Command, CommandError, Submitted};
use crate::error::RunError;
use crate::protocol::{RunEvent, RunObserver, RunOutcome, RunStatus};
use crate::runtime::Runtime;

mod claimed;
mod observer;
mod queue;

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

    /// What the queue records as the job's outcome: what a client asking
    /// after the job reads back.
    pub fn outcome(&self) -> JobOutcome {
        let posted = self.posted.as_ref();
        JobOutcome {
            session_id: Some(self.session_id),
            event_id: posted.map(|p| p.event_id),
            seq: posted.map(|p| p.seq),
            run_id: self.run_id,
            status: JobStatus::of(self.status()),
            result: self.result().map(str::to_owned),
            continued_to_session_id: self.continued_to(),
            error: self.error().map(str::to_owned),
            blocked_by_hook: self.outcomes.last().and_then(|o| o.blocked_by_hook.clone()),
        }
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
    TakenOver(Box<RunJob>),
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
