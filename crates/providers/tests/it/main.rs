//! Integration tests of seri-providers: every provider against servers on
//! 127.0.0.1 that replay the real wire formats byte for byte, the retry
//! policy, the scripted provider's contract, the request log and the factory.

// clippy's allow-unwrap-in-tests covers `#[test]` functions only; the
// helpers of this test binary fail a test the same way, by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic;
mod factory;
mod llama;
mod local_servers;
mod models;
mod openai;
mod request_log;
mod responses;
mod retry;
mod scripted;
mod server;
mod support;
