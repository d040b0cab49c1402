//! A claimed job run in this process: waiting for its session's older
//! messages, posting its message once, running it with the claim kept
//! fresh, and recording its outcome or handing it back.

use super::observer::*;
use super::*;

impl JobQueue {
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
    pub(super) async fn run(&self, job: RunJob, tell: Option<oneshot::Sender<Posted>>, ahead: Option<u64>) -> JobEnd {
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
        let (id, owner, outcome) = (job.id.clone(), self.inner.worker.clone(), report.outcome());
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
    pub(super) async fn taken_over(&self, job: &RunJob) -> JobEnd {
        let mut stopping = self.inner.stopping.clone();
        let every = self.look_again_every();
        let mut news = self.news();
        loop {
            let id = job.id.clone();
            match self.blocking(move |store| store.job(&id)).await {
                Ok(Some(done)) if done.state == seri_store::JobState::Done => return JobEnd::TakenOver(Box::new(done)),
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

    pub(super) async fn hand_back(&self, job: &RunJob) -> JobEnd {
        let (id, owner) = (job.id.clone(), self.inner.worker.clone());
        match self.blocking(move |store| store.release_job(&id, &owner)).await {
            Ok(true) => tracing::info!(job = %job.id, "handed a job back to the queue: this process is stopping"),
            Ok(false) => tracing::info!(job = %job.id, "a job this process stops on was taken over already"),
            // Its claim lapses on its own, and another process takes it over.
            Err(e) => tracing::warn!(job = %job.id, error = %e, "cannot hand a job back; its claim will lapse"),
        }
        JobEnd::HandedBack
    }

    pub(super) async fn run_claimed(
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
    pub(super) async fn wait_for_turn(
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
    pub(super) async fn posted_message(&self, job: &RunJob, fresh: bool) -> Result<Option<EventId>, JobError> {
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
    pub(super) async fn keep_claim(self, job: String, claim: watch::Sender<Claim>, stop: watch::Sender<bool>) {
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

/// What a panic said, cut short: it is told to a client.
pub(super) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
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
pub(super) enum Ran {
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
pub(super) enum Turn {
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
pub(super) enum Claim {
    /// Still this process's.
    Held,
    /// Someone asked (in any process) to cancel the job.
    CancelAsked,
    /// Another process took the job over (or it is done).
    Lost,
}

/// Aborts a task when dropped: the claim of a job whose run ended, or
/// panicked, is never renewed again.
pub(super) struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
