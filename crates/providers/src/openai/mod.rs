//! OpenAI-compatible chat completions, streamed: OpenAI itself, OpenRouter,
//! Ollama, vLLM and llama.cpp servers, all through a base URL.
//!
//! - [`dialect`]: what differs between those servers (the max-tokens field,
//!   how reasoning effort is asked for, `top_k`, OpenRouter's provider pin,
//!   the `content` of a tool-call-only assistant message).
//! - [`body`]: the neutral request as a `/chat/completions` body (pure).
//! - [`stream`]: the `chat.completion.chunk` events read back into a response.
//! - [`provider`]: the [`OpenAiCompatible`] provider tying them to HTTP.
//! - `transport`: what both wire formats share (base URL, key, `GET /models`,
//!   the streamed POST, an empty stream read as an overflow).
//! - [`responses`]: the same servers' other wire format, OpenAI's Responses
//!   API, chosen per provider with `"api": "responses"`.

pub mod body;
pub mod dialect;
pub mod provider;
pub mod responses;
pub mod stream;
mod transport;

pub use dialect::{MaxTokensField, OpenAiDialect, ProviderPin, ReasoningField, ToolCallContent};
pub use provider::OpenAiCompatible;
pub use responses::OpenAiResponses;
