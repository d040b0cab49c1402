//! Retention: trajectories age out; conversations never do.
//!
//! [`crate::AgentStore::prune_trajectories`] runs at the start of each session
//! (the command line calls it when it opens a runtime). With a window of
//! `N` days:
//!
//! - A session recorded in `seri.db` is pruned once its most recent
//!   trajectory record (or header, for a run that wrote no record) is older
//!   than the window: every trajectory of that session, header and records,
//!   is deleted. Its runs (`runs`), its events and its checkpoints stay.
//! - A session imported from an older release's `.jsonl` file goes by the
//!   file's modification time instead (read from the file when it is still
//!   there, else the time recorded when it was imported). The only
//!   trajectory such a file holds is the tool calls and results it brought
//!   in, so pruning it means seri *forgets that trajectory*: a row in
//!   `trajectory_legacy_prunes` says so, and `seri trajectory show` stops
//!   presenting the imported calls as one. The file is never written,
//!   moved or deleted, and the imported session keeps every event:
//!   `seri thread` still shows the whole conversation. Runs recorded in
//!   that session since (after a `--resume`) are seri's own and follow the
//!   first rule.
//! - The session being recorded ([`RetentionPolicy::current_session`]) is
//!   never pruned, however old its records are.
//!
//! Everything is decided against the store's clock, so tests move a
//! [`crate::ManualClock`] instead of waiting.

use std::path::PathBuf;
use std::time::UNIX_EPOCH;

use seri_core::{SessionId, Timestamp};

/// How many days recordings are kept when `trajectories.retentionDays` is not set.
pub const DEFAULT_RETENTION_DAYS: u32 = 30;

const DAY_MILLIS: i64 = 86_400_000;

/// What to prune.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Recordings older than this many days go.
    pub days: u32,
    /// The session being recorded, if any: never pruned.
    pub current_session: Option<SessionId>,
}

impl RetentionPolicy {
    /// The default window, keeping `current_session`.
    pub fn new(current_session: Option<SessionId>) -> Self {
        Self { days: DEFAULT_RETENTION_DAYS, current_session }
    }

    /// The oldest time that is still inside the window, seen from `now`.
    pub fn cutoff(&self, now: Timestamp) -> Timestamp {
        Timestamp(now.millis().saturating_sub(i64::from(self.days).saturating_mul(DAY_MILLIS)))
    }
}

/// What a pruning removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Sessions whose trajectories were deleted, oldest id first.
    pub sessions: Vec<SessionId>,
    /// Trajectories (runs) deleted.
    pub trajectories: u64,
    /// Records deleted with them.
    pub records: u64,
    /// Legacy files whose trajectory was forgotten.
    pub legacy_files: Vec<PathBuf>,
}

impl PruneReport {
    /// Whether nothing was pruned.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty() && self.legacy_files.is_empty()
    }
}

/// A session imported from a legacy file, as trajectories see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyTrajectory {
    /// The file.
    pub path: PathBuf,
    /// When retention forgot its trajectory, if it did.
    pub pruned_at: Option<Timestamp>,
    /// The modification time that decision went by.
    pub file_modified_at: Option<Timestamp>,
}

/// A file's modification time in Unix milliseconds, if the file is there
/// and the file system keeps one.
pub(crate) fn file_modified(path: &std::path::Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let millis = modified.duration_since(UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(millis).ok()
}
