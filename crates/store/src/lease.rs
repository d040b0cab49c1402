//! Session leases: a run owns its session while it runs.
//!
//! One row of `session_leases` per session being changed now. Taking the
//! lease is one write transaction that also drops the leases and queue
//! tickets of holders that are gone and marks their runs `interrupted`, so a
//! crashed process never leaves a session refused or a run `running`.
//!
//! Whether a holder is gone is decided by who it is ([`LeaseOwner`]): a
//! holder on this host is alive exactly while its process is (same pid, same
//! start time: a reused pid is somebody else), whatever its heartbeat says,
//! so a process stopped with Ctrl-Z keeps its session; a holder on another
//! host is alive while it renews its expiry. A waiter is judged the same way.
//!
//! Waiting is first come, first served within a lane, interactive before
//! background, across every process on the database: a ticket in
//! `session_waiters` holds the place ([`WriteTx::try_acquire_lease`]).

use std::time::Duration;

use rusqlite::params;
use seri_core::{RunId, SessionId, Timestamp};

use crate::error::Result;
use crate::rows::{Db, RowError, corrupt, query_all};
use crate::write::WriteTx;

/// Who holds (or waits for) a lease: one runtime of one process on one host.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseOwner {
    /// Tells two runtimes of one process apart.
    pub instance: String,
    /// The process id.
    pub pid: u32,
    /// The host name.
    pub host: String,
    /// The process's start time in clock ticks since boot (0: unknown).
    pub started: u64,
}

impl LeaseOwner {
    /// This process, as the runtime `instance`.
    pub fn this_process(instance: impl Into<String>) -> Self {
        let pid = std::process::id();
        Self { instance: instance.into(), pid, host: this_host(), started: process_start(pid).unwrap_or(0) }
    }

    /// Whether the owner still runs. On this host, its process is asked; on
    /// another, only `expires_at` can tell.
    pub(crate) fn is_alive(&self, expires_at: Timestamp, now: Timestamp) -> bool {
        if self.host == this_host() {
            return match process_start(self.pid) {
                Some(started) => self.started == 0 || started == self.started,
                None => false,
            };
        }
        expires_at > now
    }
}

/// The host name, as `uname -n` prints it.
fn this_host() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

/// A process's start time (`/proc/PID/stat` field 22), or `None` when no
/// such process runs. Where there is no `/proc`, a live process reads as
/// started at 0, which matches any recorded start.
fn process_start(pid: u32) -> Option<u64> {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The command name (field 2) is in parentheses and may hold spaces:
        // count fields from the last `)`.
        // A zombie (`Z`, `X`) has ended; only its parent has not noticed.
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| {
            let mut fields = rest.split_whitespace();
            match fields.next() {
                Some("Z" | "X") => None,
                _ => fields.nth(18)?.parse().ok(),
            }
        }),
        Err(_) if std::path::Path::new("/proc/self/stat").exists() => None,
        Err(_) => {
            let pid = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
            rustix::process::test_kill_process(pid).ok().map(|()| 0)
        }
    }
}

/// A lease as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLease {
    /// The session.
    pub session_id: SessionId,
    /// The run that holds it (`None`: a short write outside a run).
    pub run_id: Option<RunId>,
    /// Its holder.
    pub owner: LeaseOwner,
    /// When it was taken.
    pub acquired_at: Timestamp,
    /// When its holder last renewed it.
    pub heartbeat_at: Timestamp,
    /// Until when it holds without a renewal (for holders on other hosts).
    pub expires_at: Timestamp,
}

impl std::fmt::Display for SessionLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.run_id.is_some() { "a run" } else { "a write" };
        let since = self.acquired_at.to_string();
        // `2026-12-01T10:02:11.123Z` → `2026-12-01 10:02:11 UTC`
        let since = since.get(..19).map_or(since.clone(), |s| format!("{} UTC", s.replace('T', " ")));
        write!(f, "{what} in seri pid {} on host {} since {since}", self.owner.pid, self.owner.host)
    }
}

/// What became of one attempt to take a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseAttempt {
    /// The lease is this caller's now.
    Acquired {
        /// The holders found gone and cleared on the way, whose runs are now
        /// `interrupted`: what they left unanswered is the caller's to settle.
        reaped: Vec<SessionLease>,
    },
    /// A live holder has it.
    Held(SessionLease),
    /// It is free, but earlier waiters come first.
    Queued {
        /// How many wait ahead of this caller.
        ahead: u64,
    },
}

/// What a caller asks for.
#[derive(Debug, Clone)]
pub struct LeaseRequest<'a> {
    /// The session.
    pub session_id: SessionId,
    /// The run that will hold it (`None`: a short write outside a run).
    pub run_id: Option<RunId>,
    /// Who asks.
    pub owner: &'a LeaseOwner,
    /// The caller's place in the queue, from [`WriteTx::enqueue_lease_waiter`];
    /// `None` takes the lease only when nobody waits.
    pub ticket: Option<&'a str>,
    /// How long the lease holds without a renewal.
    pub ttl: Duration,
}

/// The result recorded on a run whose holder was found gone.
const INTERRUPTED_RESULT: &str = r#"{"error":"interrupted: the process running it stopped before it finished"}"#;

const LEASE_COLUMNS: &str = "session_id, run_id, owner_instance, owner_pid, owner_host, owner_started, \
                             acquired_at, heartbeat_at, expires_at";

fn read_lease(row: &rusqlite::Row<'_>) -> std::result::Result<SessionLease, RowError> {
    let session: String = row.get(0)?;
    let bad = |problem: String| corrupt("session_leases", &session, problem);
    let run: Option<String> = row.get(1)?;
    Ok(SessionLease {
        session_id: session.parse().map_err(|e: seri_core::ParseIdError| bad(e.to_string()))?,
        run_id: run.map(|r| r.parse()).transpose().map_err(|e: seri_core::ParseIdError| bad(e.to_string()))?,
        owner: LeaseOwner {
            instance: row.get(2)?,
            pid: u32::try_from(row.get::<_, i64>(3)?).map_err(|e| bad(e.to_string()))?,
            host: row.get(4)?,
            started: u64::try_from(row.get::<_, i64>(5)?).map_err(|e| bad(e.to_string()))?,
        },
        acquired_at: Timestamp(row.get(6)?),
        heartbeat_at: Timestamp(row.get(7)?),
        expires_at: Timestamp(row.get(8)?),
    })
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A waiter as recorded, to judge whether it is still there.
struct Waiter {
    id: String,
    owner: LeaseOwner,
    expires_at: Timestamp,
}

fn waiters(db: Db<'_>, session: SessionId) -> Result<Vec<Waiter>> {
    query_all(
        db,
        "reading a session's queue",
        "SELECT id, owner_instance, owner_pid, owner_host, owner_started, expires_at FROM session_waiters \
         WHERE session_id = ?1 ORDER BY lane_rank, enqueued_at, id",
        params![session.to_string()],
        |row| {
            let id: String = row.get(0)?;
            let bad = |problem: String| corrupt("session_waiters", &id, problem);
            Ok(Waiter {
                owner: LeaseOwner {
                    instance: row.get(1)?,
                    pid: u32::try_from(row.get::<_, i64>(2)?).map_err(|e| bad(e.to_string()))?,
                    host: row.get(3)?,
                    started: u64::try_from(row.get::<_, i64>(4)?).map_err(|e| bad(e.to_string()))?,
                },
                expires_at: Timestamp(row.get(5)?),
                id,
            })
        },
    )
}

impl WriteTx<'_> {
    /// The lease on `session`, if anyone holds one (alive or not).
    pub fn session_lease(&self, session: SessionId) -> Result<Option<SessionLease>> {
        self.read().require_session(session)?;
        crate::rows::query_first(
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
        let session = request.session_id;
        let now = self.now();
        let expires = now.millis().saturating_add(millis(request.ttl));
        let mut reaped = Vec::new();
        if let Some(held) = self.session_lease(session)? {
            if held.owner.is_alive(held.expires_at, now) {
                if let Some(ticket) = request.ticket {
                    self.renew_ticket(ticket, expires)?;
                }
                return Ok(LeaseAttempt::Held(held));
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
        for waiter in waiters(self.db(), session)? {
            if Some(waiter.id.as_str()) == request.ticket {
                break;
            }
            if waiter.owner.is_alive(waiter.expires_at, now) {
                ahead += 1;
            } else {
                self.leave_lease_queue(&waiter.id)?;
            }
        }
        if ahead > 0 {
            if let Some(ticket) = request.ticket {
                self.renew_ticket(ticket, expires)?;
            }
            return Ok(LeaseAttempt::Queued { ahead });
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
            .and_then(|mut stmt| {
                stmt.execute(params![
                    session.to_string(),
                    request.run_id.map(|r| r.to_string()),
                    owner.instance,
                    i64::from(owner.pid),
                    owner.host,
                    i64::try_from(owner.started).unwrap_or(i64::MAX),
                    now.millis(),
                    expires,
                ])
            })
            .map_err(self.db().fail("taking a session lease"))?;
        Ok(LeaseAttempt::Acquired { reaped })
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
    /// holder, so none of the others is running.
    fn interrupt_orphaned_runs(&mut self, session: SessionId, taking: Option<RunId>, now: Timestamp) -> Result<()> {
        let changed = self
            .db()
            .conn
            .prepare_cached(
                "UPDATE runs SET status = 'interrupted', result = ?2, finished_at = ?3 \
                 WHERE session_id = ?1 AND status = 'running' AND id IS NOT ?4",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    session.to_string(),
                    INTERRUPTED_RESULT,
                    now.millis(),
                    taking.map(|r| r.to_string())
                ])
            })
            .map_err(self.db().fail("marking stopped runs interrupted"))?;
        if changed > 0 {
            tracing::info!(session = %session, runs = changed, "marked runs of a stopped process interrupted");
        }
        Ok(())
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
                 WHERE session_id = ?1 AND owner_instance = ?2 AND run_id IS ?5",
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
    /// is not an error: whoever holds it now keeps it.
    pub fn release_lease(&mut self, session: SessionId, owner: &LeaseOwner, run_id: Option<RunId>) -> Result<()> {
        self.db()
            .conn
            .prepare_cached("DELETE FROM session_leases WHERE session_id = ?1 AND owner_instance = ?2 AND run_id IS ?3")
            .and_then(|mut stmt| {
                stmt.execute(params![session.to_string(), owner.instance, run_id.map(|r| r.to_string())])
            })
            .map_err(self.db().fail("releasing a session lease"))?;
        Ok(())
    }
}
