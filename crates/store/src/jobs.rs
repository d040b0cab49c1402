//! The shared queue of runs (`run_jobs`): what servers sharing one database
//! use so that each message is answered once, by one server at a time,
//! and taken over when the server that claimed it stops. See
//! [`Store::enqueue_job`](crate::Store::enqueue_job) and its siblings.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use seri_core::{AgentId, EventId, RunId, RunStatus, Seq, SessionId, Timestamp};

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
    pub outcome: Option<JobOutcome>,
    /// When it was queued.
    pub enqueued_at: Timestamp,
    /// When it was done.
    pub finished_at: Option<Timestamp>,
}

/// How a job's task ended, in the three words of the headless contract
/// (`succeeded`, `max_turns`, `failed`): a cancelled, interrupted or
/// missing run did not finish, so it failed. `seri-protocol`'s
/// `TaskStatus` is these words as clients read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// The model ended its turn (or the session continued and the
    /// successor's did).
    Succeeded,
    /// The turn budget ran out first.
    MaxTurns,
    /// Anything else: a failure, a cancellation, nothing run.
    Failed,
}

impl JobStatus {
    /// The word for a task whose last run ended with `status` (`None`:
    /// nothing ran).
    pub fn of(status: Option<RunStatus>) -> Self {
        match status {
            Some(RunStatus::Succeeded) => JobStatus::Succeeded,
            Some(RunStatus::MaxTurns) => JobStatus::MaxTurns,
            Some(RunStatus::Failed | RunStatus::Cancelled | RunStatus::Running | RunStatus::Interrupted) | None => {
                JobStatus::Failed
            }
        }
    }
}

/// What a job came to, as `run_jobs.outcome` keeps it: typed when written
/// and when read; a client's answer (`seri serve`'s message response) is
/// built from it when asked. A job given up or cancelled before anything
/// ran has only its status and error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobOutcome {
    /// The session the message was posted to (absent from a job that
    /// never ran: its row's session is the one).
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// The message's event, once posted.
    #[serde(default)]
    pub event_id: Option<EventId>,
    /// Its seq.
    #[serde(default)]
    pub seq: Option<Seq>,
    /// The run that answered it.
    #[serde(default)]
    pub run_id: Option<RunId>,
    /// How the task ended.
    pub status: JobStatus,
    /// The final answer, from whichever session gave it.
    #[serde(default)]
    pub result: Option<String>,
    /// The newest successor the answer went to, when the session continued.
    #[serde(default)]
    pub continued_to_session_id: Option<SessionId>,
    /// What went wrong, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A `UserPromptSubmit` hook blocked the message, which was not
    /// recorded: what the hook said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_by_hook: Option<String>,
}

impl JobOutcome {
    /// The outcome of a job that ended without running: failed, saying why.
    pub fn failed(error: impl Into<String>) -> Self {
        Self {
            session_id: None,
            event_id: None,
            seq: None,
            run_id: None,
            status: JobStatus::Failed,
            result: None,
            continued_to_session_id: None,
            error: Some(error.into()),
            blocked_by_hook: None,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_written_before_they_were_typed_read_back() {
        // A server's answer, as releases before the typed outcome stored it.
        let answered = r#"{"sessionId":"01a22b56-d880-7000-8000-000000000002","eventId":"01a22b56-d880-7000-8000-000000000003","seq":4,"runId":"01a22b56-d880-7000-8000-000000000001","status":"max_turns","result":"Half done.","continuedToSessionId":null}"#;
        let outcome: JobOutcome = serde_json::from_str(answered).unwrap();
        assert_eq!(
            (outcome.status, outcome.seq, outcome.result.as_deref()),
            (JobStatus::MaxTurns, Some(Seq(4)), Some("Half done."))
        );
        // The store's own, for a job given up or cancelled before it ran.
        let cancelled: JobOutcome =
            serde_json::from_str(r#"{"status": "failed", "error": "cancelled before any server ran it"}"#).unwrap();
        assert_eq!(cancelled, JobOutcome::failed("cancelled before any server ran it"));
        // And what is written now reads back as it was.
        let text = serde_json::to_string(&outcome).unwrap();
        assert_eq!(serde_json::from_str::<JobOutcome>(&text).unwrap(), outcome);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            serde_json::from_str::<serde_json::Value>(answered).unwrap()
        );
    }

    #[test]
    fn a_task_failed_unless_its_last_run_succeeded_or_ran_out_of_turns() {
        assert_eq!(JobStatus::of(Some(RunStatus::Succeeded)), JobStatus::Succeeded);
        assert_eq!(JobStatus::of(Some(RunStatus::MaxTurns)), JobStatus::MaxTurns);
        for status in [RunStatus::Failed, RunStatus::Cancelled, RunStatus::Running, RunStatus::Interrupted] {
            assert_eq!(JobStatus::of(Some(status)), JobStatus::Failed, "{status:?}");
        }
        assert_eq!(JobStatus::of(None), JobStatus::Failed);
    }
}
