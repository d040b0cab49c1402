//! seri-prompt's integration tests: snapshots of everything a model reads
//! (per-turn blocks at each pressure level, the verb contracts, the system
//! prompt) and properties of the escaping.

// A test binary: clippy.toml allows unwrap in #[test] functions, and the
// same reasoning covers their helpers here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod blocks;
mod escaping;
mod requests;
mod rules;
mod summarizer;
mod system_prompt;
