//! Integration tests of seri-projection: the continuation projection and
//! compaction planning as their callers see them.
//!
//! - `compaction`: the compact strategy's planner (its own modules inside).
//! - `scenarios`: one `insta` snapshot per representative projection, named
//!   after the scenario, through one data-driven `check` helper.
//! - `refusals`: bad input and failing readers give clear errors.
//! - `reading`: the compiler asks the thread only for what it needs.
//! - `properties`: proptest over generated threads, sources and budgets.
//! - `manifest`: the manifest survives a CBOR round trip unchanged.
//! - `support`: fixed test ids, a thread builder, and the invariants every
//!   projection must satisfy.

// clippy.toml allows unwrap in `#[test]` functions only; in this binary the
// helpers are test code too, and an unwrap that fails is a failing test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod compaction;
mod manifest;
mod properties;
mod reading;
mod refusals;
mod scenarios;
mod support;
