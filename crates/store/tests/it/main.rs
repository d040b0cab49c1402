//! Integration tests of seri-store, one module per feature, all against real
//! SQLite files (or in-memory databases) and real directories.

// clippy.toml allows unwrap and expect inside `#[test]` functions only; the
// helpers of this binary are test code just the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attachments;
mod check;
mod checkpoints;
mod concurrency;
mod continuations;
mod leases;
mod legacy;
mod open;
mod properties;
mod runs;
mod sessions;
mod support;
mod trajectories;
mod transactions;
