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

/// One thing `seri store check` found wrong.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inconsistency {
    /// The check that found it (see [`ConsistencyReport::checks`]).
    pub check: &'static str,
    /// What it is about: a session, an edge, a content.
    pub subject: String,
    /// What is wrong, in words.
    pub problem: String,
}

/// One check and how many problems it found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckOutcome {
    /// Its name.
    pub name: &'static str,
    /// What it looks at.
    pub about: &'static str,
    /// How many problems it found.
    pub problems: u64,
}

/// What `seri store check` found: every check that ran, and every problem.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsistencyReport {
    /// Sessions in the store.
    pub sessions: u64,
    /// Events folded by the cached-column check.
    pub events: u64,
    /// Every check, in the order they ran.
    pub checks: Vec<CheckOutcome>,
    /// Every problem, by check.
    pub problems: Vec<Inconsistency>,
}

impl ConsistencyReport {
    /// Whether nothing was found wrong.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}
