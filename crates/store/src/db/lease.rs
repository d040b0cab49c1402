//! The lease tables, `session_leases` and `session_waiters`: taking,
//! renewing and giving back a session's lease, and the queue of waiters,
//! each in the caller's write transaction. Who is alive is decided by
//! [`LeaseOwner`], outside SQL.

use std::time::Duration;

use crate::db::sql::params;
use seri_core::{RunId, SessionId, Timestamp};

use crate::db::rows::{Db, RowError, corrupt, query_all};
use crate::db::write::WriteTx;
use crate::error::Result;
use crate::lease::{LeaseAttempt, LeaseOwner, LeaseRequest, SessionLease};

/// The result recorded on a run whose holder was found gone.
pub(crate) const INTERRUPTED_RESULT: &str =
    r#"{"error":"interrupted: the process running it stopped before it finished"}"#;

const LEASE_COLUMNS: &str = "session_id, run_id, owner_instance, owner_pid, owner_host, owner_started, \
                             acquired_at, heartbeat_at, expires_at";

fn read_lease(row: &crate::db::sql::Row<'_>) -> std::result::Result<SessionLease, RowError> {
    read_lease_at(row, 0)
}

/// A lease from [`LEASE_COLUMNS`] starting at column `at`.
fn read_lease_at(row: &crate::db::sql::Row<'_>, at: usize) -> std::result::Result<SessionLease, RowError> {
    let session: String = row.get(at)?;
    let bad = |problem: String| corrupt("session_leases", &session, problem);
    let run: Option<String> = row.get(at + 1)?;
    Ok(SessionLease {
        session_id: session.parse().map_err(|e: seri_core::ParseIdError| bad(e.to_string()))?,
        run_id: run.map(|r| r.parse()).transpose().map_err(|e: seri_core::ParseIdError| bad(e.to_string()))?,
        owner: LeaseOwner {
            instance: row.get(at + 2)?,
            pid: u32::try_from(row.get::<_, i64>(at + 3)?).map_err(|e| bad(e.to_string()))?,
            host: row.get(at + 4)?,
            started: u64::try_from(row.get::<_, i64>(at + 5)?).map_err(|e| bad(e.to_string()))?,
        },
        acquired_at: Timestamp(row.get(at + 6)?),
        heartbeat_at: Timestamp(row.get(at + 7)?),
        expires_at: Timestamp(row.get(at + 8)?),
    })
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A waiter as recorded, to judge whether it is still there.
struct Waiter {
    id: String,
    lane_rank: i64,
    owner: LeaseOwner,
    enqueued_at: Timestamp,
    expires_at: Timestamp,
}

/// The lease on `session` (alive or not) and its queue in order, in one
/// statement: the lease's row first (part 0), then the waiters' (part 1),
/// in the columns both fill.
fn lease_and_queue(db: Db<'_>, session: SessionId) -> Result<(Option<SessionLease>, Vec<Waiter>)> {
    enum Part {
        Lease(SessionLease),
        Waiter(Waiter),
    }
    let sql = "SELECT CAST(0 AS BIGINT), session_id, run_id, owner_instance, owner_pid, owner_host, owner_started, \
                      acquired_at, heartbeat_at, expires_at, CAST(0 AS BIGINT) \
               FROM session_leases WHERE session_id = ?1 \
               UNION ALL \
               SELECT CAST(1 AS BIGINT), id, NULL, owner_instance, owner_pid, owner_host, owner_started, \
                      enqueued_at, enqueued_at, expires_at, lane_rank \
               FROM session_waiters WHERE session_id = ?1 \
               ORDER BY 1, 11, 8, 2";
    let rows = query_all(db, "reading a session's lease and queue", sql, params![session.to_string()], |row| {
        if row.get::<_, i64>(0)? == 0 {
            return Ok(Part::Lease(read_lease_at(row, 1)?));
        }
        let id: String = row.get(1)?;
        let bad = |problem: String| corrupt("session_waiters", &id, problem);
        Ok(Part::Waiter(Waiter {
            owner: LeaseOwner {
                instance: row.get(3)?,
                pid: u32::try_from(row.get::<_, i64>(4)?).map_err(|e| bad(e.to_string()))?,
                host: row.get(5)?,
                started: u64::try_from(row.get::<_, i64>(6)?).map_err(|e| bad(e.to_string()))?,
            },
            enqueued_at: Timestamp(row.get(7)?),
            expires_at: Timestamp(row.get(9)?),
            lane_rank: row.get(10)?,
            id,
        }))
    })?;
    let mut lease = None;
    let mut waiters = Vec::new();
    for row in rows {
        match row {
            Part::Lease(held) => lease = Some(held),
            Part::Waiter(waiter) => waiters.push(waiter),
        }
    }
    Ok((lease, waiters))
}

impl WriteTx<'_> {
    /// The lease on `session`, if anyone holds one (alive or not).
    pub fn session_lease(&self, session: SessionId) -> Result<Option<SessionLease>> {
        self.read().require_session(session)?;
        crate::db::rows::query_first(
            self.db(),
            "reading a session lease",
            &format!("SELECT {LEASE_COLUMNS} FROM session_leases WHERE session_id = ?1"),
            params![session.to_string()],
            read_lease,
        )
    }

    /// Takes a place in `session`'s queue and returns its ticket. `lane_rank`
    /// 0 is served before 1. The place lasts `ttl` unless the waiter renews
    /// it by trying again ([`WriteTx::try_acquire_lease`] does).
    pub fn enqueue_lease_waiter(
        &mut self,
        session: SessionId,
        lane_rank: u8,
        owner: &LeaseOwner,
        ttl: Duration,
    ) -> Result<String> {
        self.read().require_session(session)?;
        let id = self.store().new_record_id();
        let now = self.now();
        self.db()
            .conn
            .prepare_cached(
                "INSERT INTO session_waiters (id, session_id, lane_rank, owner_instance, owner_pid, owner_host, \
                 owner_started, enqueued_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    id,
                    session.to_string(),
                    i64::from(lane_rank.min(1)),
                    owner.instance,
                    i64::from(owner.pid),
                    owner.host,
                    i64::try_from(owner.started).unwrap_or(i64::MAX),
                    now.millis(),
                    now.millis().saturating_add(millis(ttl)),
                ])
            })
            .map_err(self.db().fail("joining a session's queue"))?;
        Ok(id)
    }

    /// Gives up a place in a queue (a waiter that stopped waiting).
    pub fn leave_lease_queue(&mut self, ticket: &str) -> Result<()> {
        self.db()
            .conn
            .execute("DELETE FROM session_waiters WHERE id = ?1", params![ticket])
            .map_err(self.db().fail("leaving a session's queue"))?;
        Ok(())
    }

    /// Tries once to take `request.session_id`'s lease.
    ///
    /// On the way, a holder found gone is cleared and its run (and every
    /// other run of the session still marked running) becomes `interrupted`;
    /// waiters found gone lose their places. The caller's own ticket is
    /// renewed when it has to wait on, and dropped when it gets the lease.
    pub fn try_acquire_lease(&mut self, request: &LeaseRequest<'_>) -> Result<LeaseAttempt> {
        self.acquire(request, None).map(|(_, attempt)| attempt)
    }

    /// Tries once to take `request.session_id`'s lease, as
    /// [`WriteTx::enqueue_lease_waiter`] (at `lane_rank`, for
    /// `request.ttl`) then [`WriteTx::try_acquire_lease`] with that ticket
    /// would, but joins the queue only when it has to wait: the ticket
    /// comes back then, and a caller that gets the lease at once wrote no
    /// place in the queue (nor deleted one). The lease's first try, with
    /// no ticket yet (`request.ticket` is not read).
    pub fn acquire_or_join_lease(
        &mut self,
        request: &LeaseRequest<'_>,
        lane_rank: u8,
    ) -> Result<(Option<String>, LeaseAttempt)> {
        self.acquire(&LeaseRequest { ticket: None, ..request.clone() }, Some(lane_rank))
    }

    /// [`WriteTx::try_acquire_lease`]; with `join`, the caller has no
    /// ticket and joins the queue at that lane if it has to wait (see
    /// [`WriteTx::acquire_or_join_lease`]).
    fn acquire(&mut self, request: &LeaseRequest<'_>, join: Option<u8>) -> Result<(Option<String>, LeaseAttempt)> {
        let session = request.session_id;
        let now = self.now();
        let expires = now.millis().saturating_add(millis(request.ttl));
        let mut reaped = Vec::new();
        // The lease and the queue behind it, read together: whoever waits
        // needs both, and one who takes a free session needs both too.
        self.read().require_session(session)?;
        let (lease, queue) = lease_and_queue(self.db(), session)?;
        if let Some(held) = lease {
            if held.owner.is_alive(held.expires_at, now) {
                let joined = self.wait_on(request, join, expires)?;
                return Ok((joined, LeaseAttempt::Held(held)));
            }
            self.db()
                .conn
                .execute("DELETE FROM session_leases WHERE session_id = ?1", params![session.to_string()])
                .map_err(self.db().fail("clearing a stopped holder's lease"))?;
            tracing::info!(session = %session, holder = %held, "cleared the lease of a holder that is gone");
            reaped.push(held);
        }
        self.interrupt_orphaned_runs(session, request.run_id, now)?;
        let mut ahead = 0;
        for waiter in queue {
            if Some(waiter.id.as_str()) == request.ticket {
                break;
            }
            // A waiter tries again (renewing its place) far more often than
            // its place lasts, so a place not renewed in time is left
            // behind, even by a process that still runs: one whose leave
            // failed, or whose join committed unseen, while the store was
            // away. Left there, it would hold up every waiter after it.
            if !(waiter.owner.is_alive(waiter.expires_at, now) && waiter.expires_at > now) {
                self.leave_lease_queue(&waiter.id)?;
            } else if join.is_none_or(|rank| {
                // One joining now goes after every waiter of its lane and
                // before those of a later lane (the queue's order).
                waiter.lane_rank < i64::from(rank.min(1))
                    || (waiter.lane_rank == i64::from(rank.min(1)) && waiter.enqueued_at <= now)
            }) {
                ahead += 1;
            }
        }
        if ahead > 0 {
            let joined = self.wait_on(request, join, expires)?;
            return Ok((joined, LeaseAttempt::Queued { ahead }));
        }
        if let Some(ticket) = request.ticket {
            self.leave_lease_queue(ticket)?;
        }
        let owner = request.owner;
        self.db()
            .conn
            .prepare_cached(&format!(
                "INSERT INTO session_leases ({LEASE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)"
            ))
            // Not waited for: under the session's lock, with its lease
            // found free, it can only fail, which the transaction's next
            // wait (its commit at the latest) reports.
            .and_then(|mut stmt| {
                stmt.execute_pipelined(vec![
                    session.to_string().into(),
                    request.run_id.map(|r| r.to_string()).into(),
                    owner.instance.as_str().into(),
                    i64::from(owner.pid).into(),
                    owner.host.as_str().into(),
                    i64::try_from(owner.started).unwrap_or(i64::MAX).into(),
                    now.millis().into(),
                    expires.into(),
                ])
            })
            .map_err(self.db().fail("taking a session lease"))?;
        Ok((None, LeaseAttempt::Acquired { reaped }))
    }

    /// The caller waits: its place is renewed (until `expires`), or, with
    /// `join`, taken at that lane (its ticket returned).
    fn wait_on(&mut self, request: &LeaseRequest<'_>, join: Option<u8>, expires: i64) -> Result<Option<String>> {
        if let Some(rank) = join {
            return self.enqueue_lease_waiter(request.session_id, rank, request.owner, request.ttl).map(Some);
        }
        if let Some(ticket) = request.ticket {
            self.renew_ticket(ticket, expires)?;
        }
        Ok(None)
    }

    fn renew_ticket(&mut self, ticket: &str, expires: i64) -> Result<()> {
        self.db()
            .conn
            .prepare_cached("UPDATE session_waiters SET expires_at = ?2 WHERE id = ?1")
            .and_then(|mut stmt| stmt.execute(params![ticket, expires]))
            .map_err(self.db().fail("renewing a place in a session's queue"))?;
        Ok(())
    }

    /// Marks every run of `session` still `running` as `interrupted`, but
    /// the one about to take the lease: called once the session has no live
    /// holder, so none of the others is running. Each is announced
    /// ([`crate::ChangeKind::RunInterrupted`]): its process, gone, never
    /// said it ended, and whoever watched it hears it from the store. The
    /// statement is the one it always was (its `RETURNING` names the runs);
    /// only a run found interrupted costs a notification.
    fn interrupt_orphaned_runs(&mut self, session: SessionId, taking: Option<RunId>, now: Timestamp) -> Result<()> {
        let interrupted: Vec<RunId> = query_all(
            self.db(),
            "marking stopped runs interrupted",
            "UPDATE runs SET status = 'interrupted', result = ?2, finished_at = ?3 \
             WHERE session_id = ?1 AND status = 'running' AND id IS DISTINCT FROM ?4 RETURNING id",
            params![session.to_string(), INTERRUPTED_RESULT, now.millis(), taking.map(|r| r.to_string())],
            |row| {
                let id: String = row.get(0)?;
                id.parse().map_err(|e: seri_core::ParseIdError| corrupt("runs", &id, e.to_string()))
            },
        )?;
        if !interrupted.is_empty() {
            tracing::info!(session = %session, runs = interrupted.len(), "marked runs of a stopped process interrupted");
        }
        for run in interrupted {
            self.announce_interrupted(session, run)?;
        }
        Ok(())
    }

    /// Fails with [`crate::WriteError::LeaseNotHeld`](crate::WriteError::LeaseNotHeld) unless `owner` holds
    /// `session`'s lease: the fence every write of a holder passes in its
    /// own transaction, so a holder whose lease was taken over (its host
    /// stalled past the lease) can never write after its successor.
    pub fn require_lease(&mut self, session: SessionId, owner: &LeaseOwner) -> Result<()> {
        match self.session_lease(session)? {
            Some(lease) if lease.owner.instance == owner.instance => Ok(()),
            _ => Err(crate::error::StoreError::Write(crate::error::WriteError::LeaseNotHeld { session_id: session })),
        }
    }

    /// Renews the lease `run_id` (or the run-less write, `None`) holds on
    /// `session` by `ttl`. `false`: the lease is no longer the caller's.
    pub fn renew_lease(
        &mut self,
        session: SessionId,
        owner: &LeaseOwner,
        run_id: Option<RunId>,
        ttl: Duration,
    ) -> Result<bool> {
        let now = self.now();
        let changed = self
            .db()
            .conn
            .prepare_cached(
                "UPDATE session_leases SET heartbeat_at = ?3, expires_at = ?4 \
                 WHERE session_id = ?1 AND owner_instance = ?2 AND run_id IS NOT DISTINCT FROM ?5",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    session.to_string(),
                    owner.instance,
                    now.millis(),
                    now.millis().saturating_add(millis(ttl)),
                    run_id.map(|r| r.to_string()),
                ])
            })
            .map_err(self.db().fail("renewing a session lease"))?;
        Ok(changed == 1)
    }

    /// Gives the lease back. Releasing a lease the caller no longer holds
    /// is not an error: whoever holds it now keeps it (so the answer is
    /// not waited for; the commit reads it).
    pub fn release_lease(&mut self, session: SessionId, owner: &LeaseOwner, run_id: Option<RunId>) -> Result<()> {
        self.db()
            .conn
            .prepare_cached("DELETE FROM session_leases WHERE session_id = ?1 AND owner_instance = ?2 AND run_id IS NOT DISTINCT FROM ?3")
            .and_then(|mut stmt| {
                stmt.execute_pipelined(vec![
                    session.to_string().into(),
                    owner.instance.as_str().into(),
                    run_id.map(|r| r.to_string()).into(),
                ])
            })
            .map_err(self.db().fail("releasing a session lease"))?;
        Ok(())
    }
}
