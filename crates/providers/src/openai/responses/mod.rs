//! OpenAI's Responses API (`POST {baseUrl}/responses`, streamed), the
//! second OpenAI wire format, chosen per provider with `"api": "responses"`.
//!
//! What it adds over chat completions is reasoning that lasts: a reasoning
//! model's reasoning comes back as items with `encrypted_content`, kept on
//! the turn's thinking, and goes back in the next request before the
//! function calls it led to, so the model goes on from its own reasoning
//! while the server stores nothing (`store: false`).
//!
//! - [`body`]: the neutral request as a `/responses` body (pure).
//! - [`stream`]: the typed stream events read back into a response (sans-IO).
//! - [`provider`]: the [`OpenAiResponses`] provider tying them to HTTP.

pub mod body;
pub mod provider;
pub mod stream;

pub use provider::OpenAiResponses;
