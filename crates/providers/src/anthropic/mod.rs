//! Anthropic's Messages API, streamed: tool use, extended thinking with
//! signatures, and prompt-cache breakpoints.
//!
//! - [`body`]: the neutral request as a `/v1/messages` body (pure), with
//!   the role merging and cache breakpoints this API needs.
//! - [`stream`]: the `message_start` … `message_stop` events read back.
//! - [`provider`]: the [`Anthropic`] provider tying them to HTTP.

pub mod body;
pub mod provider;
pub mod stream;

pub use provider::{ANTHROPIC_VERSION, Anthropic};
