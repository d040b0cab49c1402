//! The shared queue of runs (`run_jobs`): what servers sharing one database
//! use so that each message is answered once, by one server at a time,
//! and taken over when the server that claimed it stops. See
//! [`Store::enqueue_job`](crate::Store::enqueue_job) and its siblings.

use std::time::Duration;

use seri_core::{AgentId, EventId, RunId, SessionId, Timestamp};

/// How long a done job is kept before [`Store::prune_jobs`](crate::Store::prune_jobs) may delete it.
pub const JOB_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// How many servers may stop while answering a job before the model is no
/// longer asked: a message that stops every server that answers it is not
/// run forever. Five, not fewer: a kill is not told from a crash, and the
/// fault suite showed three kills landing inside one slow message often
/// enough (3 jobs in 300 PostgreSQL schedules) to drop messages that no
/// fault of their own stopped. Waiting (in a session's queue, or behind the session's
/// older jobs) and a clean hand-back are never attempts.
///
/// A job taken over this many times is still claimed, for a last look: its
/// message may have been answered meanwhile (by a run that stopped before
/// it recorded the job done, or by another client of the session), and
/// then that answer is its outcome. The claimant answers from what is
/// stored, never asking the model again, and gives the job up otherwise
/// ([`given_up`]). A job whose last looks stopped [`LAST_LOOKS`] times too
/// is given up by [`Store::claim_next_job`](crate::Store::claim_next_job).
pub const MAX_JOB_ATTEMPTS: u64 = 5;

/// How many last looks a job gets after [`MAX_JOB_ATTEMPTS`].
pub const LAST_LOOKS: u64 = 2;

/// The error of a job given up after `attempts` servers stopped answering it.
pub fn given_up(attempts: u64) -> String {
    format!("given up after {attempts} attempts: every server that answered this message stopped before it finished")
}

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Waiting for a server.
    Queued,
    /// Claimed by a server, until its claim expires.
    Running,
    /// Its outcome is recorded.
    Done,
}

impl JobState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        [JobState::Queued, JobState::Running, JobState::Done].into_iter().find(|s| s.as_str() == text)
    }
}

/// One job as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RunJob {
    /// The job.
    pub id: String,
    /// Whose session it runs in.
    pub agent_id: AgentId,
    /// The session.
    pub session_id: SessionId,
    /// What to run: the message, its lane and turn budget (the server's JSON).
    pub request: serde_json::Value,
    /// Where it is.
    pub state: JobState,
    /// The server that claimed it last.
    pub claimed_by: Option<String>,
    /// Until when that claim holds.
    pub claim_expires_at: Option<Timestamp>,
    /// How many times it was taken over from a server that stopped while
    /// answering it (its message posted); see [`MAX_JOB_ATTEMPTS`].
    pub attempts: u64,
    /// The message, once posted.
    pub posted_event_id: Option<EventId>,
    /// The run answering it.
    pub run_id: Option<RunId>,
    /// Whether someone asked to cancel it.
    pub cancel_requested: bool,
    /// What it came to, once done.
    pub outcome: Option<serde_json::Value>,
    /// When it was queued.
    pub enqueued_at: Timestamp,
    /// When it was done.
    pub finished_at: Option<Timestamp>,
}

/// A claim: who, and for how long without renewal.
#[derive(Debug, Clone, Copy)]
pub struct JobClaim<'a> {
    /// The claiming server (`host pid instance`).
    pub owner: &'a str,
    /// How long the claim holds unless renewed.
    pub ttl: Duration,
}

/// What renewing a claim found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobRenewal {
    /// Still the claimant's; `cancel_requested` says whether to stop.
    Held {
        /// Someone asked to cancel the job.
        cancel_requested: bool,
    },
    /// Another server took it over (or it is done): stop working on it.
    Lost,
}

/// A client's key for one message (its `Idempotency-Key`), and a digest of
/// the message it was sent with: a message posted again under the same key
/// finds the job the first post made instead of queueing a second.
#[derive(Debug, Clone, Copy)]
pub struct JobKey<'a> {
    /// The client's key, unique per agent and session.
    pub key: &'a str,
    /// A digest of what was posted under it.
    pub digest: &'a str,
}

/// What queueing a message under a [`JobKey`] came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Enqueued {
    /// A new job (claimed, when a claim was given).
    New(RunJob),
    /// The key was used before with the same message: the job it made.
    Existing(RunJob),
    /// The key was used before with a different message: the job it made,
    /// left alone.
    KeyReused(RunJob),
}
