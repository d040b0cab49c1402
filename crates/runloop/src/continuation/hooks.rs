//! Test seams in the continuation's creation transaction, so tests can prove
//! that it commits everything or nothing:
//!
//! - [`CreationHooks::fail_after`]: the next creation fails right after a
//!   given step, inside the transaction, for in-process tests. It is a field
//!   of each [`crate::Runtime`], so tests running side by side never see each
//!   other's faults.
//! - The `SERI_TEST_PAUSE_IN_CONTINUATION_*` environment variables: the
//!   creation pauses at a given step, after touching a marker file, so a test
//!   of the `seri` binary can `kill -9` it there.
//!
//! Neither does anything unless a test asks for it. The variables are test
//! hooks, not settings: no user should ever set them, and nothing else in
//! the run loop reads the environment for them.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use super::ContinuationRefused;

/// Pause this many milliseconds inside the creation transaction (test hook).
pub const PAUSE_MS_ENV: &str = "SERI_TEST_PAUSE_IN_CONTINUATION_MS";

/// Where to pause: a [`CreationStep`] name, or `committed` for just after the
/// transaction committed and before the tool result is written (test hook).
/// Default: `edge_inserted`.
pub const PAUSE_AT_ENV: &str = "SERI_TEST_PAUSE_IN_CONTINUATION_AT";

/// A file created when the pause begins, so a test knows the process is
/// inside it (test hook).
pub const PAUSE_MARKER_ENV: &str = "SERI_TEST_PAUSE_IN_CONTINUATION_MARKER";

/// The pause point after the transaction committed.
pub const COMMITTED: &str = "committed";

/// The steps of the creation transaction, in the order they run. The
/// transaction commits after the last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CreationStep {
    /// The successor session exists, with its title, description, model
    /// override, frozen system prompt and carried plan.
    SuccessorCreated,
    /// The edge and its manifest are recorded.
    EdgeInserted,
    /// The initiating message's attachments are linked into the successor's
    /// folder (a step even when there are none).
    AttachmentsLinked,
    /// The projection is the successor's first event.
    ProjectionAppended,
    /// The copied initiating message is its second.
    MessageCopied,
}

impl CreationStep {
    /// Every step, in order.
    pub const ALL: [CreationStep; 5] = [
        CreationStep::SuccessorCreated,
        CreationStep::EdgeInserted,
        CreationStep::AttachmentsLinked,
        CreationStep::ProjectionAppended,
        CreationStep::MessageCopied,
    ];

    /// The step's name, as [`PAUSE_AT_ENV`] takes it: `edge_inserted`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CreationStep::SuccessorCreated => "successor_created",
            CreationStep::EdgeInserted => "edge_inserted",
            CreationStep::AttachmentsLinked => "attachments_linked",
            CreationStep::ProjectionAppended => "projection_appended",
            CreationStep::MessageCopied => "message_copied",
        }
    }
}

impl std::fmt::Display for CreationStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A runtime's fault injection: no fault until a test sets one.
#[derive(Debug, Default)]
pub struct CreationHooks {
    /// 0: none; otherwise the index in [`CreationStep::ALL`] plus one.
    fail_after: AtomicU8,
}

impl CreationHooks {
    /// Makes the next continuation fail right after `step`, inside its
    /// transaction, as if the store had failed there (`None` clears it). The
    /// fault fires once: a retry then runs normally.
    pub fn fail_after(&self, step: Option<CreationStep>) {
        let code = step.and_then(|s| CreationStep::ALL.iter().position(|x| *x == s)).map_or(0, |i| i as u8 + 1);
        self.fail_after.store(code, Ordering::SeqCst);
    }

    /// Called after each step: pauses if the environment asks for it, then
    /// fails if a test asked for a fault here.
    pub(crate) fn after(&self, step: CreationStep) -> Result<(), ContinuationRefused> {
        pause_if_asked(step.as_str());
        let code = CreationStep::ALL.iter().position(|x| *x == step).map_or(0, |i| i as u8 + 1);
        if self.fail_after.compare_exchange(code, 0, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            return Err(ContinuationRefused::InjectedFault { step });
        }
        Ok(())
    }
}

/// Writes the marker whole or not at all (a sibling file renamed over it), so
/// a test that sees the marker also sees what it says.
fn write_marker(marker: &std::path::Path, point: &str) -> std::io::Result<()> {
    let mut partial = marker.as_os_str().to_owned();
    partial.push(".partial");
    std::fs::write(&partial, point)?;
    std::fs::rename(&partial, marker)
}

/// Sleeps at `point` when [`PAUSE_MS_ENV`] is set and [`PAUSE_AT_ENV`] names
/// this point, after creating the [`PAUSE_MARKER_ENV`] file. Blocking on
/// purpose: the store's connection, and the write lock, are held meanwhile,
/// exactly as they would be in a slow transaction.
pub(crate) fn pause_if_asked(point: &str) {
    let Some(ms) = std::env::var(PAUSE_MS_ENV).ok().and_then(|v| v.trim().parse::<u64>().ok()) else {
        return;
    };
    let at = std::env::var(PAUSE_AT_ENV).unwrap_or_else(|_| CreationStep::EdgeInserted.as_str().to_owned());
    if at.trim() != point {
        return;
    }
    if let Some(marker) = std::env::var_os(PAUSE_MARKER_ENV).map(std::path::PathBuf::from)
        && let Err(e) = write_marker(&marker, point)
    {
        tracing::warn!(marker = ?marker, error = %e, "could not create the continuation pause marker");
    }
    tracing::warn!(point, ms, "pausing inside the continuation, as {PAUSE_MS_ENV} asks");
    std::thread::sleep(Duration::from_millis(ms));
}
