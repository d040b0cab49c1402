//! Integration tests of `seri serve`: the real server on a 127.0.0.1 port,
//! the scripted provider behind it, a real HTTP client (reqwest) and a real
//! WebSocket client (tokio-tungstenite) in front.

// clippy.toml allows unwrap and expect inside `#[test]` functions only; the
// helpers of this binary are test code just the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api;
mod bounded;
mod document;
mod hostile;
mod idempotency;
mod permissions;
mod queue;
mod recalls;
mod search;
mod servers;
mod support;
mod takeover;
mod ui;
mod work;
mod ws;
