//! What the store tells listeners: every transaction that creates a
//! session, appends to one or continues one announces it, delivered once it
//! commits (never when it rolls back), and
//! [`Store::subscribe_changes`](crate::Store::subscribe_changes) hears
//! them. So does a transaction that records a stopped process's run
//! `interrupted` ([`ChangeKind::RunInterrupted`]), and one that ends a job
//! of the shared queue or hands it back ([`ChangeKind::JobDone`],
//! [`ChangeKind::JobQueued`]). On PostgreSQL it is a notification
//! (`NOTIFY`), heard whichever server (on whichever machine) wrote; SQLite
//! has no channel between processes, and there a listener hears its own
//! process's commits.

use serde::{Deserialize, Serialize};
use seri_core::{AgentId, RunId, SessionId};

/// What happened to a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// It was created.
    Created,
    /// Events were appended (or its title changed).
    Updated,
    /// It continued into a successor.
    Continued,
    /// A run of it, left `running` by a process that stopped (killed, its
    /// machine gone), is recorded `interrupted` now: `run` names it. Its
    /// process never said it ended; the store does.
    RunInterrupted,
    /// One of its jobs in the shared queue is done (answered, failed,
    /// given up or cancelled): `job` names it.
    JobDone,
    /// One of its jobs was handed back to the queue, for any server to
    /// claim: `job` names it.
    JobQueued,
}

impl ChangeKind {
    /// Whether it is about a job of the shared queue, not the session's
    /// events or runs.
    pub fn is_job(self) -> bool {
        matches!(self, ChangeKind::JobDone | ChangeKind::JobQueued)
    }
}

/// One committed change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreChange {
    /// Whose session.
    pub agent: AgentId,
    /// The session.
    pub session: SessionId,
    /// What happened.
    pub change: ChangeKind,
    /// For [`ChangeKind::Continued`]: the successor it continued into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<SessionId>,
    /// For [`ChangeKind::RunInterrupted`]: the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunId>,
    /// For [`ChangeKind::JobDone`] and [`ChangeKind::JobQueued`]: the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

impl StoreChange {
    /// A change of `agent`'s `session` that names nothing else.
    pub fn of(agent: AgentId, session: SessionId, change: ChangeKind) -> Self {
        Self { agent, session, change, successor: None, run: None, job: None }
    }
}
