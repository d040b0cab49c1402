//! Integration tests of the `seri` binary: real processes on temporary
//! profiles, with the scripted provider, checking output, exit codes and
//! what the database holds afterwards.

// clippy.toml allows unwrap and expect inside `#[test]` functions only; the
// helpers of this binary are test code just the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp;
mod attacks;
mod balanced;
mod browser;
mod children;
mod claude_code_file;
mod claude_project;
mod containment;
mod continuation;
mod faults;
mod forks;
mod headless;
mod hooks;
mod import;
mod inspect;
mod local_models;
mod lost_answers;
mod mcp;
mod modes;
mod outage;
mod repl;
mod search;
mod serve;
mod servers;
mod shared;
mod skills;
mod slash;
mod storage;
mod store;
mod support;
mod terminal;
mod trajectories;
mod web;
mod web_search;
