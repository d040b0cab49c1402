//! Run ownership: a run holds its session's lease from before it reads the
//! history until after its last append, so two runs (in one process or in
//! several) never interleave in one session.
//!
//! A run that finds the session leased waits in the session's queue
//! (interactive before background, then first come first served, across
//! processes) or, with [`BusyPolicy::Refuse`], fails at once naming the
//! holder. While it holds the lease a heartbeat renews it; a holder whose
//! process is gone is cleared by the next run that asks, its runs become
//! `interrupted`, and only then are its unanswered calls settled.
//!
//! `Leases` is a value the runtime owns (its own store handle, the
//! runtime's lease owner, the lease's time to live and the busy policy);
//! it knows nothing of the runtime.

use std::sync::Arc;
use std::time::{Duration, Instant};

use seri_core::{AgentId, RunId, SessionId};
use seri_store::{LeaseAttempt, LeaseOwner, LeaseRequest, SessionLease, Store, StoreError, StoreErrorKind, WriteTx};
use tokio::sync::watch;

use crate::error::RunError;
use crate::protocol::Lane;

/// What a run does when another run holds its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BusyPolicy {
    /// Wait in the session's queue, then run on the settled history.
    #[default]
    Wait,
    /// Fail at once, naming the holder (`--no-wait`).
    Refuse,
}

/// How long a lease holds without a heartbeat. Only holders on other hosts
/// are judged by it: on this host a holder is alive while its process is.
pub const LEASE_TTL: Duration = Duration::from_secs(30);

/// How often a waiter asks again, at most. A lease given back in this
/// process wakes its waiters at once ([`RELEASED`]); this bounds how long a
/// waiter sleeps on one released by another process.
const POLL_MAX: Duration = Duration::from_millis(100);

/// Rung whenever this process gives a lease back, so its own waiters (many
/// clients of one server) ask again at once instead of at their next poll.
static RELEASED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Why a session could not be had at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Busy {
    /// A live holder has it.
    Held(SessionLease),
    /// It is free, but others wait first.
    Queued {
        /// How many.
        ahead: u64,
    },
}

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Busy::Held(lease) => write!(f, "{lease}"),
            Busy::Queued { ahead: 1 } => write!(f, "1 run waits for it"),
            Busy::Queued { ahead } => write!(f, "{ahead} runs wait for it"),
        }
    }
}

/// A lease this runtime holds, renewed in the background until released.
/// Dropped without [`HeldLease::release`] (an early return, a panic), it
/// gives the lease back on its own, so a live process never strands a
/// session.
pub(crate) struct HeldLease {
    session_id: SessionId,
    run_id: Option<RunId>,
    store: Arc<Store>,
    agent: AgentId,
    owner: LeaseOwner,
    heartbeat: Option<tokio::task::JoinHandle<()>>,
    lost: watch::Receiver<bool>,
    released: bool,
    outage: Arc<Outage>,
}

impl HeldLease {
    /// Set once a renewal found the lease taken from this holder.
    pub(crate) fn lost(&self) -> watch::Receiver<bool> {
        self.lost.clone()
    }

    /// Gives the lease back; `then` runs in the same transaction (a run
    /// records how it ended there). A store out of reach is waited out
    /// ([`patiently`]): a lease must never outlive an outage, or its session
    /// stays locked for as long as this process lives.
    pub(crate) fn release(self, then: impl Fn(&mut WriteTx<'_>) -> Result<(), StoreError>) -> Result<(), StoreError> {
        self.release_recording(then, None::<fn(&mut WriteTx<'_>) -> Result<(), StoreError>>)
    }

    /// [`HeldLease::release`], also writing what `record` writes (a run's
    /// trajectory) in the same transaction, unless that fails: a recording
    /// never keeps a lease from going back, so the transaction is then
    /// written again without it.
    pub(crate) fn release_recording(
        mut self,
        then: impl Fn(&mut WriteTx<'_>) -> Result<(), StoreError>,
        record: Option<impl Fn(&mut WriteTx<'_>) -> Result<(), StoreError>>,
    ) -> Result<(), StoreError> {
        if let Some(beat) = &self.heartbeat {
            beat.abort();
        }
        self.released = true;
        let (session, owner, run) = (self.session_id, &self.owner, self.run_id);
        let store = self.store.agent(&self.agent);
        let mut recording = record.is_some();
        let released = patiently(&self.outage, "giving a session lease back", || {
            loop {
                let written = store.write(|tx| {
                    // The recording first: its first statement takes the
                    // session's lock (or the trajectory's), which goes out
                    // with the store's in one statement, and the session's
                    // lock comes before the run's row, as when a lease is taken.
                    if let Some(record) = record.as_ref().filter(|_| recording) {
                        record(tx)?;
                    }
                    then(tx)?;
                    tx.release_lease(session, owner, run)
                });
                match written {
                    Err(e) if recording && !matches!(e.kind(), StoreErrorKind::Unavailable | StoreErrorKind::Busy) => {
                        tracing::warn!(%session, error = %e, "could not record the run's trajectory as it ended");
                        recording = false;
                    }
                    written => break written,
                }
            }
        });
        if let Err(e) = &released
            && e.kind() == StoreErrorKind::Unavailable
        {
            self.release_once_reachable();
        }
        RELEASED.notify_waiters();
        released
    }

    /// Keeps trying, on a thread of its own, to give the lease back to a
    /// store that stayed out of reach past [`STORE_OUTAGE_PATIENCE`]: a
    /// holder on this host is alive while its process is, so a lease left
    /// in the store would lock the session until the process ends. The
    /// run's summary row is not retried; the next holder marks it
    /// `interrupted`.
    fn release_once_reachable(&self) {
        let (store, agent, owner) = (self.store.clone(), self.agent.clone(), self.owner.clone());
        let (session, run) = (self.session_id, self.run_id);
        let retry = std::thread::Builder::new().name("seri-lease-release".into()).spawn(move || {
            loop {
                std::thread::sleep(Duration::from_secs(2));
                match store.agent(&agent).write(|tx| tx.release_lease(session, &owner, run)) {
                    Ok(()) => {
                        tracing::info!(%session, "gave back a session lease once the store was reachable again");
                        RELEASED.notify_waiters();
                        return;
                    }
                    Err(e) if e.kind() == StoreErrorKind::Unavailable => {}
                    Err(e) => {
                        tracing::warn!(%session, error = %e, "could not give a session lease back");
                        return;
                    }
                }
            }
        });
        if let Err(e) = retry {
            tracing::warn!(%session, error = %e, "cannot start the thread that gives a lease back");
        }
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        if let Some(beat) = &self.heartbeat {
            beat.abort();
        }
        if !self.released {
            let (session, owner, run) = (self.session_id, &self.owner, self.run_id);
            let store = self.store.agent(&self.agent);
            let released = patiently(&self.outage, "giving a session lease back", || {
                store.write(|tx| tx.release_lease(session, owner, run))
            });
            match released {
                Ok(()) => {}
                Err(e) if e.kind() == StoreErrorKind::Unavailable => self.release_once_reachable(),
                Err(e) => tracing::warn!(session = %session, error = %e, "could not give a session lease back"),
            }
            RELEASED.notify_waiters();
        }
    }
}

/// How long a write of a run waits for a store that is out of reach
/// before the run fails: long enough for a database to restart.
pub const STORE_OUTAGE_PATIENCE: Duration = Duration::from_secs(60);

/// Since when the store has been out of reach, as this runtime's writes
/// found it. One outage gets [`STORE_OUTAGE_PATIENCE`] in all: a run that
/// gave up on an append does not wait a minute more to give its lease
/// back, and another after that to record how it ended.
#[derive(Debug, Default)]
pub(crate) struct Outage {
    since: std::sync::Mutex<Option<Instant>>,
}

impl Outage {
    fn since(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.since.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A write found the store out of reach; the outage's patience runs
    /// from its first such write. The time patience ends.
    fn out_of_reach(&self) -> Instant {
        *self.since().get_or_insert_with(Instant::now) + STORE_OUTAGE_PATIENCE
    }

    /// The store answered: a later outage is a new one.
    fn answered(&self) {
        *self.since() = None;
    }
}

/// Runs `write` until it succeeds, fails for a reason other than the store
/// being out of reach (or busy), or patience ends: [`STORE_OUTAGE_PATIENCE`]
/// from this call, or from the start of the outage `outage` has seen, if
/// sooner. `write` itself decides what a retry must check first.
fn patiently<T>(
    outage: &Outage,
    what: &str,
    mut write: impl FnMut() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut deadline = Instant::now() + STORE_OUTAGE_PATIENCE;
    let mut pause = Duration::from_millis(50);
    loop {
        let result = write();
        match &result {
            Err(e) if e.kind() == StoreErrorKind::Unavailable => deadline = deadline.min(outage.out_of_reach()),
            Err(e) if e.kind() == StoreErrorKind::Busy => {}
            _ => outage.answered(),
        }
        match result {
            Err(e)
                if matches!(e.kind(), StoreErrorKind::Unavailable | StoreErrorKind::Busy)
                    && Instant::now() + pause < deadline =>
            {
                tracing::warn!(error = %e, "{what}: the store is out of reach; trying again");
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}

/// The stopped holders a lease was taken over from.
pub(crate) type Reaped = Vec<SessionLease>;

/// How one runtime takes session leases: who it is when it holds one, how
/// long a lease lasts without a heartbeat, and whether it waits for a busy
/// session. A value the runtime owns; it knows nothing of the runtime.
#[derive(Debug)]
pub(crate) struct Leases {
    store: Arc<Store>,
    agent: AgentId,
    owner: LeaseOwner,
    ttl: Duration,
    busy: BusyPolicy,
    outage: Arc<Outage>,
}

impl Leases {
    /// Appends `bodies` to `session` if this runtime still holds its lease,
    /// in one transaction with the check: the fence that keeps a holder
    /// whose lease was taken over (its host stalled past the lease) from
    /// writing after its successor.
    ///
    /// A store that is out of reach (a database restarting) is waited out,
    /// for [`STORE_OUTAGE_PATIENCE`] at most: a finished tool's result is
    /// recorded once the store is back, not lost to a failed run. When the
    /// connection went during the commit, whether it committed is read
    /// back by the events' ids before anything is written again, so an
    /// append is never doubled.
    pub(crate) fn append(
        &self,
        session: SessionId,
        bodies: impl IntoIterator<Item = seri_core::EventBody>,
    ) -> Result<Vec<seri_core::Event>, StoreError> {
        let bodies: Vec<seri_core::EventBody> = bodies.into_iter().collect();
        self.write_patiently(
            "appending to a session",
            |tx| {
                tx.require_lease(session, &self.owner)?;
                tx.append(session, bodies.iter().cloned())
            },
            |events: &Vec<seri_core::Event>| events.first().map(|e| e.id),
        )
    }

    /// Runs `write` in a transaction, waiting out a store that is out of
    /// reach (or busy) for [`STORE_OUTAGE_PATIENCE`] at most, as every
    /// write of a run does ([`Leases::append`] is one): `appended` names the first event
    /// the write appended, if any, and when the connection went during the
    /// commit, that event is looked up before the write is tried again, so
    /// nothing it appends is ever doubled. A write that appended nothing
    /// changed nothing else worth keeping apart from it, and is tried again.
    pub(crate) fn write_patiently<T: Clone>(
        &self,
        what: &str,
        mut write: impl FnMut(&mut WriteTx<'_>) -> Result<T, StoreError>,
        appended: impl Fn(&T) -> Option<seri_core::EventId>,
    ) -> Result<T, StoreError> {
        let store = self.store.agent(&self.agent);
        let mut tried: Option<T> = None;
        patiently(&self.outage, what, || {
            if let Some(value) = tried.take()
                && let Some(first) = appended(&value)
            {
                match store.event(first) {
                    Ok(_) => return Ok(value),
                    Err(e) if e.kind() == StoreErrorKind::NotFound => {}
                    Err(e) => {
                        tried = Some(value);
                        return Err(e);
                    }
                }
            }
            let mut written = None;
            // A write that may run twice: an append in it takes its
            // session's head as this process left it (one round trip less),
            // and runs once more if the server refuses that guess.
            let result = store.write_again(|tx| {
                let value = write(tx)?;
                written = Some(value.clone());
                Ok(value)
            });
            if result.is_err() {
                tried = written;
            }
            result
        })
    }

    /// Runs `read` until the store answers it, waiting out an outage as
    /// the writes of a run do: a read changes nothing, so it is simply
    /// tried again.
    pub(crate) fn read_patiently<T>(
        &self,
        what: &str,
        read: impl FnMut() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        patiently(&self.outage, what, read)
    }

    /// Who this runtime is when it holds a lease.
    pub(crate) fn owner(&self) -> &LeaseOwner {
        &self.owner
    }

    /// Leases over `agent`'s part of `store`, held as `owner`.
    pub(crate) fn new(store: Arc<Store>, agent: AgentId, owner: LeaseOwner, ttl: Duration, busy: BusyPolicy) -> Self {
        Self { store, agent, owner, ttl, busy, outage: Arc::default() }
    }

    /// Takes `session`'s lease for `run_id` (or for a short write outside a
    /// run, `None`), waiting or refusing as the settings say. `then` runs in
    /// the transaction that takes it (a run records itself there, so a run
    /// is never `running` without the lease).
    ///
    /// When the store went out of reach while it was being taken, the
    /// take may have committed unseen: the lease is given back (patiently)
    /// before the error is returned, so a lease never outlives the outage.
    pub(crate) async fn acquire(
        &self,
        session_id: SessionId,
        run_id: Option<RunId>,
        lane: Lane,
        cancel: &watch::Receiver<bool>,
        then: &(dyn Fn(&mut WriteTx<'_>) -> Result<(), StoreError> + Sync),
    ) -> Result<(HeldLease, Reaped), RunError> {
        let deadline = Instant::now() + STORE_OUTAGE_PATIENCE;
        loop {
            let taken = self.take(session_id, run_id, lane, cancel, then).await;
            if let Err(RunError::Store(e)) = &taken
                && e.kind() == StoreErrorKind::Unavailable
            {
                let store = self.store.agent(&self.agent);
                let owner = &self.owner;
                let undone = patiently(&self.outage, "giving back a lease taken unseen", || {
                    store.write(|tx| tx.release_lease(session_id, owner, run_id))
                });
                RELEASED.notify_waiters();
                match undone {
                    // Given back (or never taken): take it again once the store answers.
                    Ok(()) if Instant::now() < deadline => {
                        tracing::warn!(session = %session_id, error = %e, "the store went away while taking a session; trying again");
                        tokio::time::sleep(Duration::from_millis(250)).await;
                        continue;
                    }
                    Ok(()) => {}
                    Err(e) => {
                        tracing::warn!(session = %session_id, error = %e, "could not give back a lease taken during an outage");
                    }
                }
            }
            return taken;
        }
    }

    async fn take(
        &self,
        session_id: SessionId,
        run_id: Option<RunId>,
        lane: Lane,
        cancel: &watch::Receiver<bool>,
        then: &(dyn Fn(&mut WriteTx<'_>) -> Result<(), StoreError> + Sync),
    ) -> Result<(HeldLease, Reaped), RunError> {
        let (owner, ttl) = (&self.owner, self.ttl);
        let store = self.store.agent(&self.agent);
        let lane_rank = match lane {
            Lane::Interactive => 0,
            Lane::Background => 1,
        };
        let refuse = self.busy == BusyPolicy::Refuse;
        let first = store.write(|tx| -> Result<_, StoreError> {
            // A place in the queue is taken only when the lease cannot be
            // had at once: a free session costs no waiter row.
            let request = LeaseRequest { session_id, run_id, owner, ticket: None, ttl };
            let (ticket, attempt) = if refuse {
                (None, tx.try_acquire_lease(&request)?)
            } else {
                tx.acquire_or_join_lease(&request, lane_rank)?
            };
            if let LeaseAttempt::Acquired { .. } = attempt {
                then(tx)?;
            }
            Ok((ticket, attempt))
        })?;
        let (ticket, mut attempt) = first;
        let mut pause = Duration::from_millis(5);
        let reaped = loop {
            match attempt {
                LeaseAttempt::Acquired { reaped } => break reaped,
                LeaseAttempt::Held(lease) if refuse => {
                    return Err(RunError::Busy { session_id, holder: Box::new(Busy::Held(lease)) });
                }
                LeaseAttempt::Queued { ahead } if refuse => {
                    return Err(RunError::Busy { session_id, holder: Box::new(Busy::Queued { ahead }) });
                }
                LeaseAttempt::Held(_) | LeaseAttempt::Queued { .. } => {}
            }
            let mut cancelled = cancel.clone();
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = RELEASED.notified() => {}
                Ok(_) = cancelled.wait_for(|c| *c) => {
                    if let Some(ticket) = &ticket {
                        store.write(|tx| tx.leave_lease_queue(ticket))?;
                    }
                    return Err(RunError::Cancelled);
                }
            }
            pause = (pause * 2).min(POLL_MAX);
            let next = store.write(|tx| -> Result<_, StoreError> {
                let attempt =
                    tx.try_acquire_lease(&LeaseRequest { session_id, run_id, owner, ticket: ticket.as_deref(), ttl })?;
                if let LeaseAttempt::Acquired { .. } = attempt {
                    then(tx)?;
                }
                Ok(attempt)
            });
            attempt = match next {
                Ok(attempt) => attempt,
                Err(e) => {
                    // Its place in the queue goes with it: a live waiter's
                    // ticket left behind would hold up every waiter after it.
                    if let Some(ticket) = &ticket
                        && let Err(left) = patiently(&self.outage, "leaving a session's queue", || {
                            store.write(|tx| tx.leave_lease_queue(ticket))
                        })
                    {
                        tracing::warn!(session = %session_id, error = %left, "could not leave a session's queue");
                    }
                    return Err(e.into());
                }
            };
        };
        Ok((self.held(session_id, run_id, true), reaped))
    }

    /// Takes the lease only if it is free now: for writes that cannot wait
    /// (`/rewind` runs outside the async world).
    ///
    /// A store out of reach is waited out, as a write of a run waits it
    /// out: opening a session (its recovery takes the session this way)
    /// during a brief outage is delayed, not failed. A take whose commit
    /// went unseen holds the session as this runtime, so it is given back
    /// before the next try, and, when patience ends, once the store is back.
    pub(crate) fn try_now(&self, session_id: SessionId) -> Result<HeldLease, RunError> {
        let (owner, ttl) = (&self.owner, self.ttl);
        let store = self.store.agent(&self.agent);
        let mut unseen = false;
        let taken = patiently(&self.outage, "taking a free session", || {
            if unseen {
                store.write(|tx| tx.release_lease(session_id, owner, None))?;
            }
            let taken = store
                .write(|tx| tx.try_acquire_lease(&LeaseRequest { session_id, run_id: None, owner, ticket: None, ttl }));
            unseen = matches!(&taken, Err(e) if e.kind() == StoreErrorKind::Unavailable);
            taken
        });
        if unseen {
            // Dropped unreleased: given back patiently, or once reachable.
            drop(self.held(session_id, None, false));
        }
        let attempt = taken?;
        match attempt {
            LeaseAttempt::Acquired { .. } => Ok(self.held(session_id, None, false)),
            LeaseAttempt::Held(lease) => Err(RunError::Busy { session_id, holder: Box::new(Busy::Held(lease)) }),
            LeaseAttempt::Queued { ahead } => {
                Err(RunError::Busy { session_id, holder: Box::new(Busy::Queued { ahead }) })
            }
        }
    }

    /// The lease as held; with `beat`, renewed in the background (a run),
    /// else held as taken (a short write, done long before it expires).
    fn held(&self, session_id: SessionId, run_id: Option<RunId>, beat: bool) -> HeldLease {
        let (lost_tx, lost) = watch::channel(false);
        let store = self.store.clone();
        let agent = self.agent.clone();
        let owner = self.owner.clone();
        let ttl = self.ttl;
        // The renewal is a blocking write: on a thread of its own, so a
        // store out of reach (each try waits up to the busy timeout) never
        // holds up the runtime's workers, and a run that ends stops its
        // heartbeat at once. A beat missed while waiting is not made up in
        // a burst: the next comes a full interval later.
        let heartbeat = beat.then(|| {
            tokio::spawn(async move {
                let mut every = tokio::time::interval(ttl / 3);
                every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                every.tick().await;
                loop {
                    every.tick().await;
                    let (store, agent, owner) = (store.clone(), agent.clone(), owner.clone());
                    let renewed = tokio::task::spawn_blocking(move || {
                        store.agent(&agent).write(|tx| tx.renew_lease(session_id, &owner, run_id, ttl))
                    })
                    .await;
                    match renewed {
                        Ok(Ok(true)) => {}
                        Ok(Ok(false)) => {
                            tracing::warn!(session = %session_id, "the session's lease was taken from this run");
                            let _ = lost_tx.send(true);
                            return;
                        }
                        // A renewal that failed (a locked database) is tried
                        // again at the next beat; the lease has two more.
                        Ok(Err(e)) => {
                            tracing::warn!(session = %session_id, error = %e, "could not renew a session lease");
                        }
                        Err(e) => {
                            tracing::warn!(session = %session_id, error = %e, "a session lease's renewal stopped");
                            return;
                        }
                    }
                }
            })
        });
        HeldLease {
            session_id,
            run_id,
            store: self.store.clone(),
            agent: self.agent.clone(),
            owner: self.owner.clone(),
            heartbeat,
            lost,
            released: false,
            outage: self.outage.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_outage_has_one_patience_however_many_writes_wait_on_it() {
        let outage = Outage::default();
        let first = outage.out_of_reach();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(outage.out_of_reach(), first, "a second write waits for what is left of the first's patience");
        outage.answered();
        assert!(outage.out_of_reach() > first, "once the store answered, a new outage has patience of its own");
    }
}
