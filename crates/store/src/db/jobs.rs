//! The `run_jobs` table: enqueueing, claiming, renewing and finishing the
//! shared queue's jobs.
//!
//! These run in queue transactions (`TxKind::Queue`): on PostgreSQL they
//! do not take the store's write lock, and a claim selects its row with
//! `FOR UPDATE SKIP LOCKED`, so servers claiming at once never wait for
//! each other and never get the same job. SQLite's write transaction is
//! exclusive, which gives the same guarantee. A write of one statement
//! (finishing, handing back, recording a job's message, pruning) is a
//! transaction by itself (`TxKind::Single`): on PostgreSQL one round trip,
//! without `BEGIN` and `COMMIT`.

use seri_core::{AgentId, RunId, SessionId, Timestamp};

use crate::changes::{ChangeKind, StoreChange};
use crate::db::connection::TxKind;
use crate::db::sql::{self, Conn, Db, Row, RowError, params};
use crate::error::{LookupError, Result, StoreError};
use crate::jobs::{Enqueued, JobClaim, JobKey, JobOutcome, JobRenewal, JobState, LAST_LOOKS, MAX_JOB_ATTEMPTS, RunJob};
use crate::store::Store;

const JOB_COLUMNS: &str = "id, agent_id, session_id, request, state, claimed_by, claim_expires_at, attempts, \
     posted_event_id, run_id, cancel_requested, outcome, enqueued_at, finished_at";

fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// An outcome as its column keeps it: JSON text.
fn outcome_text(outcome: &JobOutcome) -> String {
    serde_json::to_string(outcome).unwrap_or_default()
}

fn read_job(row: &Row<'_>) -> std::result::Result<RunJob, RowError> {
    let id: String = row.get(0)?;
    let bad = |problem: String| crate::db::rows::corrupt("run_jobs", &id, problem);
    let json = |text: Option<String>| -> std::result::Result<Option<serde_json::Value>, RowError> {
        text.map(|t| serde_json::from_str(&t).map_err(|e| bad(format!("not JSON: {e}")))).transpose()
    };
    let state: String = row.get(4)?;
    Ok(RunJob {
        agent_id: AgentId(row.get(1)?),
        session_id: row.get::<_, String>(2)?.parse().map_err(|_| bad("session_id is not an id".into()))?,
        request: json(Some(row.get(3)?))?.unwrap_or_default(),
        state: JobState::parse(&state).ok_or_else(|| bad(format!("unknown state `{state}`")))?,
        claimed_by: row.get(5)?,
        claim_expires_at: row.get::<_, Option<i64>>(6)?.map(Timestamp),
        attempts: crate::db::rows::uint(row.get(7)?),
        posted_event_id: row
            .get::<_, Option<String>>(8)?
            .map(|t| t.parse().map_err(|_| bad("posted_event_id is not an id".into())))
            .transpose()?,
        run_id: row
            .get::<_, Option<String>>(9)?
            .map(|t| t.parse().map_err(|_| bad("run_id is not an id".into())))
            .transpose()?,
        cancel_requested: row.get::<_, i64>(10)? == 1,
        outcome: row
            .get::<_, Option<String>>(11)?
            .map(|t| serde_json::from_str(&t).map_err(|e| bad(format!("outcome is not a job's outcome: {e}"))))
            .transpose()?,
        enqueued_at: Timestamp(row.get(12)?),
        finished_at: row.get::<_, Option<i64>>(13)?.map(Timestamp),
        id,
    })
}

/// The job `key` made for `agent`'s `session`: [`Enqueued::Existing`] when
/// made with the same message, [`Enqueued::KeyReused`] when not.
fn keyed_job(db: Db<'_>, agent: &AgentId, session: SessionId, key: JobKey<'_>) -> Result<Option<Enqueued>> {
    let sql = format!(
        "SELECT {JOB_COLUMNS}, request_digest FROM run_jobs \
         WHERE agent_id = ?1 AND session_id = ?2 AND idempotency_key = ?3"
    );
    let params = params![agent.as_str(), session.to_string(), key.key];
    let found = sql::query_first(db, "reading a job by its key", &sql, params, |row| {
        Ok((read_job(row)?, row.get::<_, Option<String>>(14)?))
    })?;
    Ok(found.map(|(job, digest)| match digest.as_deref() == Some(key.digest) {
        true => Enqueued::Existing(job),
        false => Enqueued::KeyReused(job),
    }))
}

fn job_by_id(db: Db<'_>, id: &str) -> Result<Option<RunJob>> {
    let sql = format!("SELECT {JOB_COLUMNS} FROM run_jobs WHERE id = ?1");
    sql::query_first(db, "reading a job", &sql, params![id], read_job)
}

/// `FOR UPDATE SKIP LOCKED` where the backend has it.
fn skip_locked(db: Db<'_>) -> &'static str {
    match db.conn {
        Conn::Postgres(_) => " FOR UPDATE SKIP LOCKED",
        Conn::Sqlite(_) => "",
    }
}

/// Claims job `id` for `claim.owner`. A claim counts as an attempt only
/// when it takes over a job whose claimant stopped while answering it (the
/// job is still `running` and its message was posted): a job that waited in
/// a queue, or was handed back by a server stopping cleanly, tried nothing,
/// and a server taking back its own lapsed claim (its renewals were late,
/// it never stopped) tries nothing new either.
fn claim(db: Db<'_>, id: &str, claim: &JobClaim<'_>, now: Timestamp) -> Result<Option<RunJob>> {
    sql::execute(
        db,
        "claiming a job",
        "UPDATE run_jobs SET state = 'running', claimed_by = ?2, claim_expires_at = ?3, \
             attempts = attempts + CASE WHEN state = 'running' AND posted_event_id IS NOT NULL \
                 AND claimed_by IS DISTINCT FROM ?2 THEN 1 ELSE 0 END \
         WHERE id = ?1",
        params![id, claim.owner, now.millis().saturating_add(millis(claim.ttl))],
    )?;
    job_by_id(db, id)
}

/// A job that may be claimed now: its id, how many attempts it had, and
/// whether claiming it counts as one more (see [`claim`]).
struct Claimable {
    id: String,
    attempts: u64,
    /// Running with its message posted: its claimant stopped while answering.
    was_answering: bool,
    claimed_by: Option<String>,
}

impl Claimable {
    /// Whether `owner` claiming it is one more attempt.
    fn counts_for(&self, owner: &str) -> bool {
        self.was_answering && self.claimed_by.as_deref() != Some(owner)
    }
}

fn read_claimable(row: &Row<'_>) -> std::result::Result<Claimable, RowError> {
    let state: String = row.get(2)?;
    let posted: Option<String> = row.get(3)?;
    Ok(Claimable {
        id: row.get(0)?,
        attempts: crate::db::rows::uint(row.get(1)?),
        was_answering: state == JobState::Running.as_str() && posted.is_some(),
        claimed_by: row.get(4)?,
    })
}

/// The oldest job no live server holds: one waiting, one whose claim
/// expired, or one claimed by a server on this host whose process is gone
/// (a killed server's jobs are taken over at once, not after its claim).
fn next_claimable(db: Db<'_>, now: Timestamp) -> Result<Option<Claimable>> {
    let sql = format!(
        "SELECT id, attempts, state, posted_event_id, claimed_by FROM run_jobs \
         WHERE state = 'queued' OR (state = 'running' AND claim_expires_at < ?1) \
         ORDER BY enqueued_at, id LIMIT 1{}",
        skip_locked(db)
    );
    if let Some(next) = sql::query_first(db, "finding a job", &sql, params![now.millis()], read_claimable)? {
        return Ok(Some(next));
    }
    let host = format!("{} ", crate::lease::this_host());
    let sql = format!(
        "SELECT id, attempts, state, posted_event_id, claimed_by FROM run_jobs \
         WHERE state = 'running' AND substr(claimed_by, 1, length(?1)) = ?1 \
         ORDER BY enqueued_at, id LIMIT 64{}",
        skip_locked(db)
    );
    let local = sql::query_all(db, "finding a stopped server's job", &sql, params![host], read_claimable)?;
    Ok(local.into_iter().find(|job| job.claimed_by.as_deref().is_some_and(claimant_is_gone)))
}

/// Whether a claimant named `host pid instance` (a server's
/// [`JobClaim::owner`]) is a process of this host that no longer runs.
fn claimant_is_gone(owner: &str) -> bool {
    let mut words = owner.split(' ');
    let (Some(host), Some(pid)) = (words.next(), words.next()) else { return false };
    match pid.parse::<u32>() {
        Ok(pid) => host == crate::lease::this_host() && !crate::lease::process_runs(pid),
        Err(_) => false,
    }
}

impl Store {
    /// Queues `request` for `agent`'s `session` and returns the job; with
    /// `claim`, it is claimed in the same transaction (the server that took
    /// the message runs it unless it stops).
    pub fn enqueue_job(
        &self,
        agent: &AgentId,
        session: SessionId,
        request: &serde_json::Value,
        claim: Option<JobClaim<'_>>,
    ) -> Result<RunJob> {
        match self.enqueue(agent, session, request, None, claim)?.0 {
            Enqueued::New(job) | Enqueued::Existing(job) | Enqueued::KeyReused(job) => Ok(job),
        }
    }

    /// Queues `request` like [`Store::enqueue_job`] unless `key` was used
    /// for `agent`'s `session` before: then the job it made is returned
    /// ([`Enqueued::Existing`] when `key.digest` matches,
    /// [`Enqueued::KeyReused`] when not) and nothing is queued or claimed.
    /// Posts with one key at once queue one job between them: the unique
    /// index decides, and the others read the winner's job.
    pub fn enqueue_job_once(
        &self,
        agent: &AgentId,
        session: SessionId,
        request: &serde_json::Value,
        key: JobKey<'_>,
        claim: Option<JobClaim<'_>>,
    ) -> Result<Enqueued> {
        self.enqueue(agent, session, request, Some(key), claim).map(|(enqueued, _)| enqueued)
    }

    /// [`Store::enqueue_job_once`] (or, without `key`, [`Store::enqueue_job`])
    /// that also says how many jobs of the session were queued before the
    /// new one and are not done ([`Store::open_jobs_before`]), counted by
    /// the insert itself: a job claimed as it is queued starts at once when
    /// none is, without a read of its own. `None` for a job queued before.
    pub fn enqueue_job_counted(
        &self,
        agent: &AgentId,
        session: SessionId,
        request: &serde_json::Value,
        key: Option<JobKey<'_>>,
        claim: Option<JobClaim<'_>>,
    ) -> Result<(Enqueued, Option<u64>)> {
        self.enqueue(agent, session, request, key, claim)
    }

    /// The job `key` made for `agent`'s `session`, if any, and whether it
    /// was made with the same message (`key.digest`).
    pub fn job_by_key(&self, agent: &AgentId, session: SessionId, key: JobKey<'_>) -> Result<Option<Enqueued>> {
        self.read_transaction(|db| keyed_job(db, agent, session, key))
    }

    fn enqueue(
        &self,
        agent: &AgentId,
        session: SessionId,
        request: &serde_json::Value,
        key: Option<JobKey<'_>>,
        claim: Option<JobClaim<'_>>,
    ) -> Result<(Enqueued, Option<u64>)> {
        let id = self.new_record_id();
        let now = self.now();
        self.transaction(TxKind::Queue, |db| {
            // A session is never given to another agent, and a prune never
            // takes one with a job queued: once found, it is not looked up
            // again (PostgreSQL; see `Db::session_known`).
            if !db.session_known(agent, session) {
                let owned = "SELECT 1 FROM sessions WHERE id = ?1 AND agent_id = ?2";
                let params = params![session.to_string(), agent.as_str()];
                if sql::query_first(db, "queueing a run", owned, params, |_| Ok(()))?.is_none() {
                    return Err(StoreError::Lookup(LookupError::UnknownSession { session_id: session }));
                }
                db.learn_session(agent, session);
            }
            // The session's jobs are queued one at a time: two posts at
            // once must not both count nobody ahead of them, nor the one
            // queued second be stamped before the first (its `now` was
            // taken before it waited). So under the session's queue lock a
            // job is stamped after every open job of the session (one
            // millisecond after the newest when the clock says otherwise),
            // and every one of them is ahead of it.
            db.lock_jobs_of(session);
            // A key used before wins over the insert; on PostgreSQL a post
            // with the same key in flight makes this insert wait for it and
            // then do nothing (READ COMMITTED: the next read sees its row).
            // A job claimed as it is queued is inserted claimed (as
            // `claim` would leave a job just queued: no attempt counted),
            // and read back from the insert itself, with the count of the
            // session's jobs before it that are not done.
            let (state, claimed_by, expires) = match &claim {
                Some(c) => ("running", Some(c.owner), Some(now.millis().saturating_add(millis(c.ttl)))),
                None => ("queued", None, None),
            };
            let inserted = sql::query_first(
                db,
                "queueing a run",
                &format!(
                    "INSERT INTO run_jobs ({JOB_COLUMNS}, idempotency_key, request_digest) \
                     VALUES (?1, ?2, ?3, ?4, ?8, ?9, ?10, 0, NULL, NULL, 0, NULL, \
                      (SELECT CASE WHEN max(enqueued_at) >= ?5 THEN max(enqueued_at) + 1 ELSE ?5 END \
                       FROM run_jobs WHERE session_id = ?3 AND state <> 'done'), NULL, ?6, ?7) \
                     ON CONFLICT DO NOTHING RETURNING {JOB_COLUMNS}, \
                     (SELECT count(*) FROM run_jobs o WHERE o.session_id = ?3 AND o.state <> 'done' AND o.id <> ?1)"
                ),
                params![
                    id,
                    agent.as_str(),
                    session.to_string(),
                    request.to_string(),
                    now.millis(),
                    key.map(|k| k.key),
                    key.map(|k| k.digest),
                    state,
                    claimed_by,
                    expires
                ],
                |row| Ok((read_job(row)?, crate::db::rows::uint(row.get(14)?))),
            )?;
            if inserted.is_none()
                && let Some(key) = key
                && let Some(earlier) = keyed_job(db, agent, session, key)?
            {
                return Ok((earlier, None));
            }
            inserted
                .map(|(job, ahead)| (Enqueued::New(job), Some(ahead)))
                .ok_or_else(|| StoreError::Lookup(LookupError::UnknownJob { id: id.clone() }))
        })
    }

    /// Claims the oldest job that is waiting or whose claim expired (its
    /// server stopped renewing it), if any. A job taken over
    /// [`MAX_JOB_ATTEMPTS`] times is claimed for a last look (see there);
    /// one whose [`LAST_LOOKS`] stopped too is given up instead: done, with
    /// an error outcome, and the next is looked at.
    pub fn claim_next_job(&self, claim: JobClaim<'_>) -> Result<Option<RunJob>> {
        let now = self.now();
        let mut given_up = Vec::new();
        let claimed = self.transaction(TxKind::Queue, |db| {
            given_up.clear();
            loop {
                let Some(next) = next_claimable(db, now)? else { return Ok(None) };
                let attempts = next.attempts + u64::from(next.counts_for(claim.owner));
                if attempts < MAX_JOB_ATTEMPTS + LAST_LOOKS {
                    return self::claim(db, &next.id, &claim, now);
                }
                let outcome = JobOutcome::failed(crate::jobs::given_up(attempts));
                given_up.extend(finish(db, &next.id, None, &outcome, now)?);
                tracing::warn!(job = %next.id, attempts, "gave up a job");
            }
        })?;
        self.tell_committed(given_up);
        Ok(claimed)
    }

    /// Renews `owner`'s claim on job `id` by `ttl`.
    pub fn renew_job(&self, id: &str, claim: JobClaim<'_>) -> Result<JobRenewal> {
        let now = self.now();
        self.transaction(TxKind::Queue, |db| {
            let changed = sql::execute(
                db,
                "renewing a job",
                "UPDATE run_jobs SET claim_expires_at = ?3 WHERE id = ?1 AND claimed_by = ?2 AND state = 'running'",
                params![id, claim.owner, now.millis().saturating_add(millis(claim.ttl))],
            )?;
            if changed == 0 {
                return Ok(JobRenewal::Lost);
            }
            let job = job_by_id(db, id)?;
            Ok(JobRenewal::Held { cancel_requested: job.is_some_and(|j| j.cancel_requested) })
        })
    }

    /// Records the message `owner` posted for job `id`, and the run answering it.
    pub fn record_job_posted(
        &self,
        id: &str,
        owner: &str,
        event_id: seri_core::EventId,
        run_id: Option<RunId>,
    ) -> Result<()> {
        self.transaction(TxKind::Single, |db| {
            sql::execute(
                db,
                "recording a job's message",
                "UPDATE run_jobs SET posted_event_id = ?3, run_id = coalesce(?4, run_id) \
                 WHERE id = ?1 AND claimed_by = ?2",
                params![id, owner, event_id.to_string(), run_id.map(|r| r.to_string())],
            )?;
            Ok(())
        })
    }

    /// Records what job `id` came to, once, if `owner` still holds it.
    /// `false`: another server took it over, and its outcome stands.
    pub fn finish_job(&self, id: &str, owner: &str, outcome: &JobOutcome) -> Result<bool> {
        let now = self.now();
        // One statement, a transaction by itself: no BEGIN and COMMIT around it.
        let done = self.transaction(TxKind::Single, |db| finish(db, id, Some(owner), outcome, now))?;
        let finished = !done.is_empty();
        self.tell_committed(done);
        Ok(finished)
    }

    /// One job by id.
    pub fn job(&self, id: &str) -> Result<Option<RunJob>> {
        self.read_one(|db| job_by_id(db, id))
    }

    /// Every job, oldest first: what a checker reads to see that each
    /// accepted message came to exactly one outcome.
    pub fn jobs(&self) -> Result<Vec<RunJob>> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM run_jobs ORDER BY enqueued_at, id");
        self.read_transaction(|db| sql::query_all(db, "reading the jobs", &sql, params![], read_job))
    }

    /// How many jobs of `job`'s session were queued before it and are not
    /// done: a session's messages are answered in the order they were
    /// accepted, so a job waits until this is 0 before it posts its message.
    pub fn open_jobs_before(&self, job: &RunJob) -> Result<u64> {
        self.read_one(|db| {
            sql::query_first(
                db,
                "counting the jobs before one",
                "SELECT count(*) FROM run_jobs \
                 WHERE session_id = ?1 AND state <> 'done' AND (enqueued_at < ?2 OR (enqueued_at = ?2 AND id < ?3))",
                params![job.session_id.to_string(), job.enqueued_at.millis(), job.id],
                |r| Ok(crate::db::rows::uint(r.get(0)?)),
            )
            .map(Option::unwrap_or_default)
        })
    }

    /// `agent`'s jobs of `session` accepted at or before `at` and not done:
    /// the messages a client posting directly (a CLI, a REPL) lets go
    /// first, so a session's messages are answered in the order accepted.
    pub fn open_jobs_of(&self, agent: &AgentId, session: SessionId, at: Timestamp) -> Result<Vec<RunJob>> {
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM run_jobs \
             WHERE session_id = ?1 AND agent_id = ?2 AND state <> 'done' AND enqueued_at <= ?3 \
             ORDER BY enqueued_at, id"
        );
        let params = params![session.to_string(), agent.as_str(), at.millis()];
        self.read_transaction(|db| sql::query_all(db, "reading a session's open jobs", &sql, params, read_job))
    }

    /// Hands job `id` back to the queue if `owner` still holds it: a server
    /// stopping cleanly leaves the message for another server (or for
    /// itself once restarted) instead of cancelling it. What it posted stays
    /// recorded, so the next claimant answers that message rather than
    /// posting it again; the hand-back counts as no attempt. `false`: it no
    /// longer held the job.
    pub fn release_job(&self, id: &str, owner: &str) -> Result<bool> {
        let queued = self.transaction(TxKind::Single, |db| {
            changing_jobs(
                db,
                "handing a job back",
                "UPDATE run_jobs SET state = 'queued', claimed_by = NULL, claim_expires_at = NULL \
                 WHERE id = ?1 AND claimed_by = ?2 AND state = 'running'",
                params![id, owner],
                ChangeKind::JobQueued,
            )
        })?;
        let released = queued.len() == 1;
        self.tell_committed(queued);
        Ok(released)
    }

    /// Deletes the jobs done before `age` ago: the queue's record of who ran
    /// what, not history (the conversation is in the session). Open jobs
    /// are never touched. Returns how many went.
    pub fn prune_jobs(&self, age: std::time::Duration) -> Result<u64> {
        let cutoff = self.now().millis().saturating_sub(millis(age));
        self.transaction(TxKind::Single, |db| {
            sql::execute(
                db,
                "pruning done jobs",
                "DELETE FROM run_jobs WHERE state = 'done' AND finished_at < ?1",
                params![cutoff],
            )
        })
    }

    /// Asks whichever server runs `agent`'s open jobs in `session` to cancel
    /// them (it finds out when it renews its claim); a job no server has
    /// claimed yet is done at once, cancelled. Returns how many were asked.
    pub fn request_job_cancel(&self, agent: &AgentId, session: SessionId) -> Result<u64> {
        let now = self.now();
        self.transaction(TxKind::Queue, |db| {
            let params = params![session.to_string(), agent.as_str()];
            let asked = sql::execute(
                db,
                "cancelling jobs",
                "UPDATE run_jobs SET cancel_requested = 1 \
                 WHERE session_id = ?1 AND agent_id = ?2 AND state <> 'done'",
                params,
            )?;
            let outcome = JobOutcome::failed("cancelled before any server ran it");
            let done = changing_jobs(
                db,
                "cancelling jobs",
                "UPDATE run_jobs SET state = 'done', outcome = ?3, finished_at = ?4 \
                 WHERE session_id = ?1 AND agent_id = ?2 AND state = 'queued'",
                params![session.to_string(), agent.as_str(), outcome_text(&outcome), now.millis()],
                ChangeKind::JobDone,
            )?;
            Ok((asked, done))
        })
        .map(|(asked, done)| {
            self.tell_committed(done);
            asked
        })
    }
}

fn finish(db: Db<'_>, id: &str, owner: Option<&str>, outcome: &JobOutcome, now: Timestamp) -> Result<Vec<StoreChange>> {
    changing_jobs(
        db,
        "finishing a job",
        "UPDATE run_jobs SET state = 'done', outcome = ?3, finished_at = ?4, claim_expires_at = NULL \
         WHERE id = ?1 AND state <> 'done' AND (?2 = '' OR claimed_by = ?2)",
        params![id, owner.unwrap_or(""), outcome_text(outcome), now.millis()],
        ChangeKind::JobDone,
    )
}

impl crate::db::write::WriteTx<'_> {
    /// Records job `id` done with `outcome` in this transaction, if `owner`
    /// still holds it: the job of a message answered by the run that gives
    /// its session back in this transaction, so the answer and the job's
    /// end commit together. `false`: it was not `owner`'s to record (another
    /// process took it over, or it is done already). Told once this commits.
    pub fn finish_job_in(&mut self, id: &str, owner: &str, outcome: &JobOutcome) -> Result<bool> {
        let now = self.now();
        let done = finish(self.db(), id, Some(owner), outcome, now)?;
        let finished = !done.is_empty();
        for change in done {
            self.announce_committed(change);
        }
        Ok(finished)
    }
}

/// Runs `update`, an `UPDATE run_jobs …` without a `RETURNING`, and
/// announces each job it changed as `kind` once the transaction commits:
/// on PostgreSQL the statement itself notifies (`pg_notify` over the rows
/// it changed, so the announcement costs no statement more); on SQLite the
/// changes returned are for the caller to tell this process's listeners
/// ([`Store::tell_committed`]) once it committed.
fn changing_jobs(
    db: Db<'_>,
    context: &'static str,
    update: &str,
    params: &[&dyn sql::Param],
    kind: ChangeKind,
) -> Result<Vec<StoreChange>> {
    let kind_word = match kind {
        ChangeKind::JobQueued => "job_queued",
        _ => "job_done",
    };
    let sql = match db.conn {
        Conn::Postgres(_) => format!(
            "WITH changed AS ({update} RETURNING agent_id, session_id, id) \
             SELECT agent_id, session_id, id, pg_notify({channel}, json_build_object('agent', agent_id, \
             'session', session_id, 'change', '{kind_word}', 'job', id)::text) FROM changed",
            channel = crate::db::postgres::listen::CHANNEL_SQL
        ),
        Conn::Sqlite(_) => format!("{update} RETURNING agent_id, session_id, id"),
    };
    sql::query_all(db, context, &sql, params, |row| {
        let (agent, session, job): (String, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        let session: SessionId = session
            .parse()
            .map_err(|e: seri_core::ParseIdError| crate::db::rows::corrupt("run_jobs", &job, e.to_string()))?;
        Ok(StoreChange { job: Some(job), ..StoreChange::of(AgentId(agent), session, kind) })
    })
}
