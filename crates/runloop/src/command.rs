//! The run loop's inbound protocol: a closed [`Command`] enum, submitted
//! through one [`Runtime::submit`]. Outbound it speaks [`RunEvent`]s; the
//! REPL, headless mode and the server all drive it with the same commands.
//!
//! A submission runs to its end: a message is posted once the session is
//! free, its run goes on until the model ends its turn, and a continuation
//! is followed into the successor, whose run answers the copied message,
//! because the submitter sent it. Each submission is cancelled on its own
//! ([`Command::Cancel`] names the session), so many clients of one runtime
//! never stop each other's runs.
//!
//! [`RunEvent`]: crate::RunEvent

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use seri_core::{Actor, EventId, Message, SessionId};
use seri_tools::{CallRef, Decision, RunKind};
use tokio::sync::watch;

use crate::error::RunError;
use crate::protocol::{ContinuedTo, Lane, RunEvent, RunObserver, RunOutcome, RunSpec};
use crate::rewind::{RewindError, RewindPlan, RewindReport};
use crate::runtime::Runtime;

/// Something a client asks of the runtime.
// A command is built once per request and moved once into `submit`, never
// kept in bulk: boxing the message would cost every caller a line for no
// memory saved.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A person's (or a trigger's) message: posted once no other run holds
    /// the session, then answered, following a continuation. A message from
    /// a trigger (`Actor::Trigger`: automation, not a person) is answered by
    /// a script run, which never sees `continue_session` or the coding tools.
    Send {
        /// Where it goes.
        session_id: SessionId,
        /// The message.
        message: Message,
        /// Its queue: interactive when someone waits for the answer.
        lane: Lane,
        /// The turn budget; `None`: the runtime's.
        max_turns: Option<u32>,
    },
    /// Answers a message already in the session that no run answered (a
    /// successor whose run was lost), or whose answer a stopped run left
    /// unfinished (a server taking over a job): its calls are settled and
    /// the answer goes on from there. A message answered since is left alone.
    Answer {
        /// The session.
        session_id: SessionId,
        /// The message.
        event_id: EventId,
        /// The turn budget; `None`: the runtime's.
        max_turns: Option<u32>,
    },
    /// Compacts the oldest part of the working context now (`/compact`); on
    /// the continue strategy it compacts nothing and says why.
    Compact {
        /// The session.
        session_id: SessionId,
        /// Words that steer the recap.
        focus: String,
    },
    /// Carries out a rewind plan (`/rewind`).
    Rewind {
        /// The plan, from [`Runtime::plan_rewind`].
        plan: RewindPlan,
        /// Overwrite files changed outside seri's tools.
        overwrite_changed: bool,
    },
    /// Settles what a stopped process left in a session, and names the
    /// successor whose waiting message is still to be answered.
    Recover {
        /// The session opened.
        session_id: SessionId,
    },
    /// Cancels every submission running in (or started for) a session.
    Cancel {
        /// The session.
        session_id: SessionId,
    },
    /// Answers a question a run asks ([`crate::Approvals`]).
    Approve {
        /// The call that asks.
        call: CallRef,
        /// Yes, yes for the rest of the session, or no.
        decision: Decision,
    },
}

/// What a command came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// The runs a message took, in the order they ended (the session's own,
    /// then each successor's it continued into).
    Ran(Vec<RunOutcome>),
    /// What `/compact` tells the person.
    Compacted(String),
    /// What a rewind did.
    Rewound(RewindReport),
    /// The successor whose waiting message is to be answered, if any.
    Recovered(Option<ContinuedTo>),
    /// Whether anything was running to cancel.
    Cancelled(bool),
    /// Whether the question was still waiting.
    Approved(bool),
}

/// Why a command could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The run loop failed before a run could start, or the store did.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A rewind was refused.
    #[error(transparent)]
    Rewind(#[from] RewindError),
}

/// The submissions running now, each with the sessions it has run in and
/// its own cancel switch.
#[derive(Debug, Default)]
pub(crate) struct Submissions {
    active: Mutex<Vec<Active>>,
    /// Set by [`Runtime::cancel_all`]: the runtime is stopping, so what it
    /// cancels from now on was stopped, not refused.
    stopping: std::sync::atomic::AtomicBool,
}

#[derive(Debug)]
struct Active {
    id: u64,
    sessions: HashSet<SessionId>,
    cancel: watch::Sender<bool>,
}

impl Submissions {
    fn start(&self, session: SessionId) -> (u64, watch::Receiver<bool>) {
        let (cancel, cancelled) = watch::channel(false);
        let mut active = self.active.lock().unwrap_or_else(PoisonError::into_inner);
        let id = active.iter().map(|a| a.id).max().map_or(0, |m| m + 1);
        active.push(Active { id, sessions: HashSet::from([session]), cancel });
        (id, cancelled)
    }

    fn entered(&self, id: u64, session: SessionId) {
        let mut active = self.active.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(a) = active.iter_mut().find(|a| a.id == id) {
            a.sessions.insert(session);
        }
    }

    /// The switch that cancels submission `id` alone.
    fn switch(&self, id: u64) -> Option<watch::Sender<bool>> {
        let active = self.active.lock().unwrap_or_else(PoisonError::into_inner);
        active.iter().find(|a| a.id == id).map(|a| a.cancel.clone())
    }

    fn end(&self, id: u64) {
        self.active.lock().unwrap_or_else(PoisonError::into_inner).retain(|a| a.id != id);
    }

    fn cancel_all(&self, stopping: bool) -> usize {
        if stopping {
            self.stopping.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        let active = self.active.lock().unwrap_or_else(PoisonError::into_inner);
        active.iter().filter(|a| a.cancel.send(true).is_ok()).count()
    }

    /// Whether the runtime is stopping ([`Runtime::cancel_all`] was called).
    pub(crate) fn stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn running(&self) -> usize {
        self.active.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    fn cancel(&self, session: SessionId) -> bool {
        let active = self.active.lock().unwrap_or_else(PoisonError::into_inner);
        let mut any = false;
        for a in active.iter().filter(|a| a.sessions.contains(&session)) {
            any |= a.cancel.send(true).is_ok();
        }
        any
    }
}

/// A submission running: ended (unregistered) when dropped, however its
/// future ends.
struct Submission<'a> {
    submissions: &'a Submissions,
    id: u64,
    cancel: watch::Receiver<bool>,
    _forward: Option<AbortOnDrop>,
}

impl Drop for Submission<'_> {
    fn drop(&mut self) {
        self.submissions.end(self.id);
    }
}

/// Aborts a task when dropped: a forwarder that outlived its submission
/// would cancel nothing, but would hold its switch's receiver for ever.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Passes a submission's run events on, noting each session it runs in so
/// a cancel of a successor reaches it too.
struct Tracking<'a> {
    inner: &'a dyn RunObserver,
    submissions: &'a Submissions,
    id: u64,
}

impl RunObserver for Tracking<'_> {
    fn event(&self, event: RunEvent) {
        if let RunEvent::RunStarted { session_id, .. } = &event {
            self.submissions.entered(self.id, *session_id);
        }
        self.inner.event(event);
    }

    fn job_ending(&self, outcome: &RunOutcome) -> Option<crate::protocol::JobEnding> {
        self.inner.job_ending(outcome)
    }
}

impl Runtime {
    /// Carries out `command`, reporting runs to `observer`; see [`Command`].
    pub async fn submit(&self, command: Command, observer: &dyn RunObserver) -> Result<Submitted, CommandError> {
        self.submit_stoppable(command, observer, None).await
    }

    /// [`Runtime::submit`], with a switch of the caller's that cancels this
    /// submission alone (a `Send` or `Answer`) when it turns true, whatever
    /// else runs in its session: a server whose claim on one message was
    /// lost stops that message's run, not another client's.
    pub async fn submit_cancellable(
        &self,
        command: Command,
        observer: &dyn RunObserver,
        stop: watch::Receiver<bool>,
    ) -> Result<Submitted, CommandError> {
        self.submit_stoppable(command, observer, Some(stop)).await
    }

    async fn submit_stoppable(
        &self,
        command: Command,
        observer: &dyn RunObserver,
        stop: Option<watch::Receiver<bool>>,
    ) -> Result<Submitted, CommandError> {
        match command {
            Command::Send { session_id, message, lane, max_turns } => {
                // The submission starts before its UserPromptSubmit hooks,
                // so a cancel of the session reaches a hook still running.
                let submission = self.start_submission(session_id, stop);
                // A UserPromptSubmit hook may drop the message, or add to it.
                let message = match self.prompt_hooks(session_id, message, &submission.cancel).await {
                    Ok(Ok(message)) => message,
                    Ok(Err(reason)) => {
                        return Ok(Submitted::Ran(vec![RunOutcome::blocked_prompt(session_id, reason)]));
                    }
                    Err(RunError::Cancelled) => {
                        return Ok(Submitted::Ran(vec![RunOutcome::cancelled_prompt(session_id)]));
                    }
                    Err(error) => return Err(error.into()),
                };
                let kind = if message.actor == Actor::Trigger { RunKind::Script } else { RunKind::Interactive };
                let spec = RunSpec {
                    session_id,
                    kind,
                    lane,
                    user_event_ids: Vec::new(),
                    max_turns: max_turns.unwrap_or(self.settings().max_turns),
                    message: Some(message),
                };
                Ok(Submitted::Ran(self.run_submitted(submission, spec, observer).await))
            }
            Command::Answer { session_id, event_id, max_turns } => {
                let spec = RunSpec {
                    session_id,
                    kind: RunKind::Interactive,
                    lane: Lane::Interactive,
                    user_event_ids: vec![event_id],
                    max_turns: max_turns.unwrap_or(self.settings().max_turns),
                    message: None,
                };
                let submission = self.start_submission(session_id, stop);
                Ok(Submitted::Ran(self.run_submitted(submission, spec, observer).await))
            }
            Command::Compact { session_id, focus } => {
                Ok(Submitted::Compacted(self.compact_now(session_id, &focus).await?))
            }
            Command::Rewind { plan, overwrite_changed } => {
                Ok(Submitted::Rewound(self.apply_rewind(&plan, overwrite_changed)?))
            }
            Command::Recover { session_id } => Ok(Submitted::Recovered(self.recover(session_id)?)),
            Command::Cancel { session_id } => Ok(Submitted::Cancelled(self.submissions().cancel(session_id))),
            Command::Approve { call, decision } => Ok(Submitted::Approved(self.permissions().answer(&call, decision))),
        }
    }

    /// Cancels every submission running now (a server shutting down); each
    /// settles its calls (telling the model seri stopped, not that the
    /// person refused) and records its run as cancelled. Returns how many.
    pub fn cancel_all(&self) -> usize {
        self.submissions().cancel_all(true)
    }

    /// Cancels every submission running now because the person asked
    /// (Ctrl-C in headless mode): the calls it stops tell the model the
    /// user interrupted, as `Command::Cancel` does. Returns how many.
    pub fn interrupt_all(&self) -> usize {
        self.submissions().cancel_all(false)
    }

    /// How many submissions are running now.
    pub fn running_submissions(&self) -> usize {
        self.submissions().running()
    }

    /// Registers a submission in `session`, cancelled by
    /// [`Command::Cancel`] and by the caller's `stop`, until it is dropped.
    fn start_submission(&self, session: SessionId, stop: Option<watch::Receiver<bool>>) -> Submission<'_> {
        let submissions = self.submissions();
        let (id, cancel) = submissions.start(session);
        // The caller's own switch, forwarded to this submission's alone.
        let forward = match (stop, submissions.switch(id)) {
            (Some(mut stop), Some(switch)) => Some(AbortOnDrop(tokio::spawn(async move {
                if stop.wait_for(|s| *s).await.is_ok() {
                    let _ = switch.send(true);
                }
            }))),
            _ => None,
        };
        Submission { submissions, id, cancel, _forward: forward }
    }

    async fn run_submitted(
        &self,
        submission: Submission<'_>,
        spec: RunSpec,
        observer: &dyn RunObserver,
    ) -> Vec<RunOutcome> {
        let tracking = Tracking { inner: observer, submissions: submission.submissions, id: submission.id };
        self.run_following(spec, &tracking, &submission.cancel).await
    }
}
