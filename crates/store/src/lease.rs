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
//! `session_waiters` holds the place ([`crate::WriteTx::try_acquire_lease`]).

use std::time::Duration;

use seri_core::{RunId, SessionId, Timestamp};

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

/// Whether a process with this pid runs on this host now (a zombie does not).
pub(crate) fn process_runs(pid: u32) -> bool {
    process_start(pid).is_some()
}

/// The host name, as `uname -n` prints it.
pub(crate) fn this_host() -> String {
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
    /// The caller's place in the queue, from [`crate::WriteTx::enqueue_lease_waiter`];
    /// `None` takes the lease only when nobody waits.
    pub ticket: Option<&'a str>,
    /// How long the lease holds without a renewal.
    pub ttl: Duration,
}
