//! Integration tests of the run loop: whole runs against the scripted
//! provider and a real SQLite store, checking the events recorded and the
//! exact requests sent (through `SERI_REQUEST_LOG`).

// clippy.toml allows unwrap and expect inside `#[test]` functions only; the
// helpers of this binary are test code just the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attachments;
mod bench;
mod children;
mod commands;
mod compaction;
mod continuation;
mod hooks;
mod outage;
mod rewind;
mod runs;
mod search_reach;
mod shared;
mod support;
mod trajectories;
