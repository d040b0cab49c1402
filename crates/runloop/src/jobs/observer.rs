//! The observer of a job's runs: the posting noted once, every event
//! passed on to the host.

use super::*;

/// Hears a job's runs: notes the message once posted (the job's row has it
/// from the posting's own transaction, so a process taking the job over
/// answers it rather than posting it again) and the first run, and passes
/// every event on to the host.
pub(super) struct JobObserver {
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
    pub(super) fn new(queue: JobQueue, job: &RunJob, tell: Option<oneshot::Sender<Posted>>) -> Self {
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
    pub(super) fn report(&self, session_id: SessionId, outcomes: Vec<RunOutcome>) -> JobReport {
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
            outcome: report.outcome(),
        })
    }
}
