//! Integration tests of seri-store, one module per feature, against real
//! databases and real directories.
//!
//! # A contract suite, run once per backend
//!
//! The store's contract is its public API: [`seri_store::Reader`],
//! [`seri_store::WriteTx`] and the `AgentStore` shorthands over them. These
//! tests are that contract's suite. A contract test opens its store only
//! through `support::Fixture::on(backend)` and runs its whole body once per
//! entry of `support::Backend::all()`:
//!
//! ```text
//! #[test]
//! fn a_rule_every_backend_keeps() {
//!     for backend in Backend::all() {
//!         let fx = Fixture::on(backend);
//!         // … only the public API from here on …
//!     }
//! }
//! ```
//!
//! Today the only backend is `Backend::Sqlite`. Adding PostgreSQL is adding
//! a `Backend::Postgres` variant to `Backend::all()` and its arm in
//! `Fixture::on` (a fresh, empty database with the fixture's clock); every
//! contract test then runs against it, and its insta snapshots compare
//! against the same `.snap` files (every snapshot is named explicitly, so
//! a second run of a test asserts the same file, not a `-2` copy).
//!
//! A few tests reach under the contract: they forge rows with raw SQL,
//! inspect or damage the database file, hold SQLite's lock from outside,
//! or open a second store on the file. They are SQLite's own, and say so
//! by taking `Fixture::sqlite()` (or opening files in `open.rs`);
//! PostgreSQL's own are in `postgres.rs`.

// clippy.toml allows unwrap and expect inside `#[test]` functions only; the
// helpers of this binary are test code just the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attachments;
mod check;
mod checkpoints;
mod concurrency;
mod continuations;
mod copy;
mod forks;
mod job_keys;
mod jobs;
mod leases;
mod nul;
mod open;
mod postgres;
mod properties;
mod runs;
mod search;
mod sessions;
mod storage;
mod support;
mod tls;
mod trajectories;
mod transactions;
mod work;
mod writers;
