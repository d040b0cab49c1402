//! Integration tests of seri-import: the older release's files and the
//! peers' own recorded files imported into real stores (SQLite, and
//! PostgreSQL when `SERI_TEST_POSTGRES_URL` names a server), through the
//! store's public API only.

// clippy.toml allows unwrap and expect inside `#[test]` functions only; the
// helpers of this binary are test code just the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod legacy;
mod long_lines;
mod peers;
mod retention;
// The store's own fixtures (a store of each backend on a temporary profile
// with a manual clock), shared rather than copied; not every helper is
// used here.
#[allow(dead_code)]
#[path = "../../../store/tests/it/support.rs"]
mod support;
