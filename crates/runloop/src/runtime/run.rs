//! A run from start to end: queued runs drained in lane order, a run
//! followed into the successor it continued into, and one run taking its
//! session's lease, running its turns and recording how it ended, whatever
//! happened.

use std::future::Future;
use std::pin::Pin;

use seri_core::{EventId, RunId, Seq, Usage};
use seri_store::RunRecord;
use seri_tools::RunKind;
use tokio::sync::watch;

use super::Runtime;
use crate::error::RunError;
use crate::protocol::{Lane, RunEvent, RunObserver, RunOutcome, RunSpec, RunStatus};

impl Runtime {
    /// Queues a run. Interactive runs go before background ones.
    pub fn enqueue(&self, spec: RunSpec) {
        self.inner.queue.push(spec);
    }

    /// Runs everything queued, in lane order, until the queue is empty, and
    /// returns every outcome in the order the runs ended. A run that
    /// continues into a successor is followed into it (see
    /// [`Runtime::run_following`]), so a caller that sent the message gets
    /// the successor's answer too.
    pub async fn drain(&self, observer: &dyn RunObserver, cancel: &watch::Receiver<bool>) -> Vec<RunOutcome> {
        let mut outcomes = Vec::new();
        while let Some(spec) = self.inner.queue.pop() {
            let followed = self.run_following(spec, observer, cancel).await;
            let stop = followed.last().is_some_and(|o| o.status == RunStatus::Cancelled);
            outcomes.extend(followed);
            if stop {
                self.inner.queue.clear();
                break;
            }
        }
        outcomes
    }

    /// Executes `spec`, then, while a run ends by continuing into a
    /// successor, the successor's run, which answers the copied message
    /// (or finds it answered). Returns every outcome, in order.
    pub async fn run_following(
        &self,
        spec: RunSpec,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> Vec<RunOutcome> {
        let mut outcomes = Vec::new();
        let mut next = Some(spec);
        while let Some(spec) = next.take() {
            let max_turns = spec.max_turns;
            let outcome = self.run(spec, observer, cancel).await;
            if outcome.status != RunStatus::Cancelled
                && let Some(continued) = &outcome.continued_to
            {
                // Unstarted, the successor's run answers the copied message.
                // Started (another process got there first), the run finds
                // the answer given there, or gives it if that process
                // stopped first: either way the outcome carries the answer,
                // never a bare "succeeded" without one.
                next = Some(RunSpec {
                    session_id: continued.session_id,
                    kind: RunKind::Interactive,
                    lane: Lane::Interactive,
                    user_event_ids: vec![continued.user_event_id],
                    max_turns,
                    message: None,
                });
            }
            outcomes.push(outcome);
        }
        outcomes
    }

    /// Executes one run to its end. Never panics and never returns early
    /// with an error: every way a run can end is a [`RunOutcome`].
    ///
    /// The future is boxed because a run may start child runs, which are
    /// runs: a named, `Send` future type is what lets that recursion
    /// through.
    pub fn run<'a>(
        &'a self,
        spec: RunSpec,
        observer: &'a dyn RunObserver,
        cancel: &'a watch::Receiver<bool>,
    ) -> Pin<Box<dyn Future<Output = RunOutcome> + Send + 'a>> {
        Box::pin(self.run_to_end(spec, observer, cancel))
    }

    async fn run_to_end(
        &self,
        spec: RunSpec,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> RunOutcome {
        let run_id = self.inner.store.new_run_id();
        let observer = &self.inner.recorder.tee(run_id, &spec, observer, || self.seed(spec.session_id));
        observer.event(RunEvent::RunStarted { run_id, session_id: spec.session_id });
        let mut state = RunState::new(run_id, &spec);
        let record = RunRecord {
            id: run_id,
            session_id: spec.session_id,
            kind: spec.kind.name(),
            lane: spec.lane,
            parent_run_id: spec.kind.parent_run_id(),
            status: RunStatus::Running,
            result: None,
            started_at: self.inner.store.now(),
            finished_at: None,
        };
        // The run is recorded in the transaction that gives it the session,
        // so no run is ever `running` without holding its session.
        // A message posted directly lets a server's messages go first: those
        // accepted before it, and any posted already (checked again in the
        // transaction that takes the session, so none slips in between).
        let direct = spec.message.as_ref().is_some_and(|m| m.meta().queued_as.is_none());
        // A server's job posts its message in the transaction that takes
        // the session (settled first, and recorded on the job there): should
        // that commit go unseen (the store went away as it committed), the
        // job's record makes the next take answer it rather than post it
        // again. Not when its workspace is gone, which fails the run before
        // anything is posted; a message posted directly (nothing records
        // it) is posted once the run holds the session.
        let job = spec
            .message
            .as_ref()
            .and_then(|m| m.meta().queued_as.clone())
            .filter(|_| self.seed(spec.session_id).is_ok_and(|seed| seri_tools::Workspace::new(&seed.cwd).is_ok()));
        let opened = std::sync::Mutex::new(None);
        let (since, waiting_since) = (self.inner.store.now(), std::time::Instant::now());
        let leased = loop {
            let enforce = match self.wait_behind_queued_messages(&spec, direct, since, waiting_since, cancel).await {
                Ok(enforce) => enforce,
                Err(e) => break Err(e),
            };
            let session = spec.session_id;
            let start = |tx: &mut seri_store::WriteTx<'_>| {
                if enforce {
                    let count = tx.read().jobs_ahead_of_direct_message(session, since)?;
                    if count > 0 {
                        return Err(seri_store::StoreError::Write(seri_store::WriteError::QueuedMessagesFirst {
                            session_id: session,
                            count,
                        }));
                    }
                }
                tx.start_run(&record)?;
                // Its checkpoints count as used, so the per-project cap
                // retires other sessions' first.
                tx.touch_checkpoints(session)?;
                if let Some(job) = &job {
                    let message = spec.message.clone().map(seri_core::EventBody::Message);
                    let settled = super::settle::settle_then_post_in(tx, session, message, Some((job, run_id)))?;
                    *opened.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(settled);
                }
                Ok(())
            };
            let acquired = self.inner.leases.acquire(spec.session_id, Some(run_id), spec.lane, cancel, &start);
            match tracing::Instrument::instrument(acquired, tracing::debug_span!("run.acquire")).await {
                Err(RunError::Store(seri_store::StoreError::Write(seri_store::WriteError::QueuedMessagesFirst {
                    ..
                }))) => {}
                taken => break taken,
            }
        };
        // What the transaction that took the session settled and posted.
        state.opened = opened.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (lease, turns) = match leased {
            Ok((lease, _reaped)) => {
                // A run whose lease is taken from it stops as if cancelled,
                // before it writes anything more.
                let (stop_tx, stop) = watch::channel(*cancel.borrow());
                let mut outer = cancel.clone();
                let mut lost = lease.lost();
                let forward = tokio::spawn(async move {
                    tokio::select! {
                        Ok(_) = outer.wait_for(|c| *c) => {}
                        Ok(_) = lost.wait_for(|l| *l) => {}
                        else => return,
                    }
                    let _ = stop_tx.send(true);
                });
                let turns = self.turns(&spec, &mut state, observer, &stop);
                let turns = tracing::Instrument::instrument(turns, tracing::debug_span!("run.turns")).await;
                forward.abort();
                let turns = match turns {
                    Err(RunError::Cancelled) if *lease.lost().borrow() && !*cancel.borrow() => {
                        Err(RunError::LeaseLost { session_id: spec.session_id })
                    }
                    other => other,
                };
                (Some(lease), turns)
            }
            Err(e) => (None, Err(e)),
        };
        let store_out_of_reach = matches!(
            &turns,
            Err(RunError::Store(e)) if e.kind() == seri_store::StoreErrorKind::Unavailable
        );
        let status = match turns {
            Ok(status) => status,
            Err(RunError::Cancelled) => {
                state.error = Some("cancelled".to_owned());
                RunStatus::Cancelled
            }
            Err(e) => {
                tracing::warn!(run = %run_id, error = %e, "run failed");
                state.error = Some(e.to_string());
                RunStatus::Failed
            }
        };
        let mut outcome = RunOutcome {
            run_id,
            session_id: spec.session_id,
            status,
            result: state.result,
            continued_to: state.continued_to,
            turns: state.turns,
            usage: state.usage,
            error: state.error,
            returned: state.returned,
            store_out_of_reach,
            job_done: false,
            blocked_by_hook: None,
        };
        // The trajectory's last records go in with the run's end, in the
        // transaction that gives the session back.
        let ending = lease.as_ref().and_then(|_| self.inner.recorder.ending(run_id, &outcome));
        let record = ending.map(|ending| move |tx: &mut seri_store::WriteTx<'_>| ending.write(run_id, tx));
        // So does the end of the job this run answers, when this is its end:
        // the answer and the job's end commit together, in one transaction
        // fewer. Recorded only while this process still holds the job's
        // claim (a process that took it over records its own end).
        let job = lease.as_ref().and_then(|_| observer.job_ending(&outcome));
        let job_done = std::sync::atomic::AtomicBool::new(false);
        let then = |tx: &mut seri_store::WriteTx<'_>| {
            tx.finish_run(run_id, status, &outcome.record())?;
            if let Some(job) = &job {
                let done = tx.finish_job_in(&job.job_id, &job.owner, &job.outcome)?;
                job_done.store(done, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(())
        };
        if let Some(lease) = lease {
            match tracing::debug_span!("run.release").in_scope(|| lease.release_recording(then, record)) {
                Ok(()) => outcome.job_done = job_done.load(std::sync::atomic::Ordering::SeqCst),
                // The run's events are all recorded; only its summary row is
                // not (nor the job's end: its queue records that), and the
                // lease goes with the process.
                Err(e) => tracing::warn!(run = %run_id, error = %e, "could not record how the run ended"),
            }
        }
        observer.event(RunEvent::RunFinished(outcome.clone()));
        outcome
    }
}

/// How long a message posted directly (a CLI, a REPL) waits behind
/// messages a server accepted for its session when no server is answering
/// them (all queued, none claimed): a stopped server's handed-back
/// messages do not lock a session out of the terminal for ever.
const UNCLAIMED_JOBS_PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

impl Runtime {
    /// A message posted directly (not a server's job) waits until the
    /// messages servers accepted for its session before it, and any a
    /// server posted already, are answered, so it never gets in ahead of
    /// one whose server stopped mid-answer (which could then not be
    /// answered in turn). Jobs a live server holds are waited for as a busy
    /// session is; ones no server claims, for [`UNCLAIMED_JOBS_PATIENCE`] at
    /// most. `true`: none is left, and taking the session checks again.
    async fn wait_behind_queued_messages(
        &self,
        spec: &RunSpec,
        direct: bool,
        since: seri_core::Timestamp,
        waiting_since: std::time::Instant,
        cancel: &watch::Receiver<bool>,
    ) -> Result<bool, RunError> {
        if !direct {
            // A server's own job: the server keeps its session's jobs in order.
            return Ok(false);
        }
        let store = &self.inner.store;
        loop {
            let open: Vec<_> = self
                .inner
                .leases
                .read_patiently("reading the messages accepted first", || {
                    store.open_jobs_of(&self.inner.agent, spec.session_id, seri_core::Timestamp(i64::MAX))
                })?
                .into_iter()
                .filter(|j| j.enqueued_at <= since || j.posted_event_id.is_some())
                .collect();
            if open.is_empty() {
                return Ok(true);
            }
            let now = store.now();
            let held = open
                .iter()
                .any(|j| j.state == seri_store::JobState::Running && j.claim_expires_at.is_some_and(|at| at > now));
            if !held && waiting_since.elapsed() >= UNCLAIMED_JOBS_PATIENCE {
                tracing::warn!(session = %spec.session_id, waiting = open.len(), "no server answers the messages accepted first; going ahead");
                return Ok(false);
            }
            if self.inner.settings.busy == crate::BusyPolicy::Refuse {
                let ahead = u64::try_from(open.len()).unwrap_or(u64::MAX);
                let holder = Box::new(crate::lease::Busy::Queued { ahead });
                return Err(RunError::Busy { session_id: spec.session_id, holder });
            }
            tracing::info!(session = %spec.session_id, waiting = open.len(), "waiting for messages a server accepted first");
            let mut cancelled = cancel.clone();
            tokio::select! {
                () = tokio::time::sleep(std::time::Duration::from_millis(250)) => {}
                Ok(_) = cancelled.wait_for(|c| *c) => return Err(RunError::Cancelled),
            }
        }
    }
}

/// What a run has accumulated so far.
pub(super) struct RunState {
    pub(super) run_id: RunId,
    pub(super) turns: u32,
    pub(super) usage: Option<Usage>,
    pub(super) result: Option<String>,
    pub(super) continued_to: Option<crate::protocol::ContinuedTo>,
    pub(super) error: Option<String>,
    /// A typed child's value, once `return_result` accepted it.
    pub(super) returned: Option<serde_json::Value>,
    /// The message this run posted ([`RunSpec::message`]), once posted.
    pub(super) posted: Option<(EventId, Seq)>,
    /// This turn's first `continue_session` call: the only one that may
    /// run; a second in the same turn is refused before anything is created.
    pub(super) turn_continuation: Option<seri_core::ToolCallId>,
    /// This turn's `delegate` calls, decided, waiting to be recorded.
    pub(super) parked: super::children::ParkedCalls,
    /// The files this turn's calls worked on, for the glob rules.
    pub(super) touched: Vec<std::path::PathBuf>,
    /// The session's glob rules, read when a call first works on a file.
    pub(super) rules: Option<std::sync::Arc<crate::rules::GlobRules>>,
    /// The glob rules fired in the working context, and the seq it starts
    /// at: read from the store when a rule first matches (and again after a
    /// compaction moves the start), kept up to date after.
    pub(super) fired: Option<(seri_core::Seq, std::collections::BTreeSet<String>)>,
    /// Whether this run already offered the turn with only
    /// `continue_session` after an overflow (runtime/overflow.rs): once.
    pub(super) offered_continue: bool,
    /// What the transaction that took the session settled and posted (a
    /// job's message), until the turns take it.
    pub(super) opened: Option<super::settle::Settled>,
}

impl RunState {
    pub(super) fn new(run_id: RunId, _spec: &RunSpec) -> Self {
        Self {
            run_id,
            turns: 0,
            usage: None,
            result: None,
            continued_to: None,
            error: None,
            returned: None,
            posted: None,
            turn_continuation: None,
            parked: super::children::ParkedCalls::default(),
            touched: Vec::new(),
            rules: None,
            fired: None,
            offered_continue: false,
            opened: None,
        }
    }
}
