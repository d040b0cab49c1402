//! seri-tools' integration tests: the rules table (one case per rule, run
//! through the registry against an in-memory store and a real memory
//! folder), the normalisation rules and their properties, the coding tools
//! and their permission layer on real folders and processes, delegation
//! (result schemas, return_result, a child's registry), and the
//! freshness of the committed schemas.

// A test binary: clippy.toml allows unwrap in #[test] functions, and the
// same reasoning covers their helpers here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod coding;
mod delegate;
mod fixture;
mod normalize;
mod registry;
mod rules;
mod schemas;
