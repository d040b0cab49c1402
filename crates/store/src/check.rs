//! The cached-column check: refold every session from its seed and events
//! and compare the result with the cached columns of `sessions`.
//!
//! Cached columns exist only because a fold can rebuild them; this is that
//! rebuild. Appends keep them right by construction (they fold the new
//! events onto the cached values in the same transaction), so a mismatch
//! means someone edited the database by hand, or a bug.

use seri_core::SessionId;

/// Whether the check only reports or also rewrites what it found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckMode {
    /// Report mismatches; change nothing.
    Report,
    /// Report mismatches and overwrite the cached columns with the fold.
    Repair,
}

/// One cached column that disagrees with the fold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheMismatch {
    /// The session.
    pub session_id: SessionId,
    /// The column of `sessions`.
    pub column: &'static str,
    /// What the column holds.
    pub cached: String,
    /// What the fold of seed and events says.
    pub folded: String,
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// How many sessions were folded.
    pub sessions: u64,
    /// How many events were folded.
    pub events: u64,
    /// Every disagreement, by session then column.
    pub mismatches: Vec<CacheMismatch>,
    /// Whether the mismatches were overwritten with the fold.
    pub repaired: bool,
}

impl CheckReport {
    /// Whether every cached column matched.
    pub fn is_clean(&self) -> bool {
        self.mismatches.is_empty()
    }
}
