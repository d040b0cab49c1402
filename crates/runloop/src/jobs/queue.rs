//! The queue's own work: accepting a message as a job, working the
//! jobs of stopped processes, hearing of new ones, and cancelling.

use super::*;

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
    pub(super) fn start(&self, job: RunJob, ahead: Option<u64>) -> Accepted {
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
    pub(super) async fn hear(self, queued: Arc<Notify>) {
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
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, JobError> {
        let store = self.inner.store.clone();
        Ok(tokio::task::spawn_blocking(move || f(&store)).await.map_err(|e| JobError::Task(e.to_string()))??)
    }

    /// Counts job `id` of `session` as running (or waiting to run) here
    /// until the guard drops; `None` when it already is (a second run of it
    /// must not start).
    pub(super) fn started(&self, job: &RunJob) -> Option<InFlight> {
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
    pub(super) fn queued_before_here(&self, job: &RunJob) -> bool {
        let sessions = self.inner.here.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions
            .get(&job.session_id)
            .and_then(|jobs| jobs.jobs.first())
            .is_some_and(|(at, _)| *at < job.enqueued_at.millis())
    }
}
