//! How the runtime carries out a [`Command`]: each submission registered
//! with its own cancel switch and the sessions it has run in (so a cancel of
//! a successor reaches it), run to its end, and unregistered however its
//! future ends.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use seri_core::{Actor, SessionId};
use seri_tools::RunKind;
use tokio::sync::watch;

use crate::command::{Command, CommandError, Submitted};
use crate::error::RunError;
use crate::protocol::{Lane, RunEvent, RunObserver, RunOutcome, RunSpec};
use crate::runtime::Runtime;

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
