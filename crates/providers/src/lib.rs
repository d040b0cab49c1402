//! seri's model providers, behind one trait.
//!
//! The run loop builds a provider-neutral [`ModelRequest`] (frozen system
//! prompt, working context, per-turn blocks last) and calls
//! [`Provider::stream`]: deltas arrive on an [`EventSink`] as they stream,
//! and the assembled [`ModelResponse`] (text, thinking with signatures, tool
//! calls with parsed arguments, [`seri_core::Usage`], [`StopReason`]) comes
//! back only when the provider's stream ended properly. Failures are one
//! [`ProviderError`] with an [`ErrorKind`] that says what to do next.
//!
//! - [`request`], [`response`], [`provider`], [`error`]: the vocabulary.
//! - [`script`]: deterministic replay of a JSON script (the design contract).
//! - [`openai`]: OpenAI-compatible chat completions over SSE (OpenAI,
//!   OpenRouter with its provider pin, Ollama, vLLM, llama.cpp).
//! - [`anthropic`]: the Messages API over SSE, with thinking and prompt-cache
//!   breakpoints.
//! - [`retry`]: bounded exponential backoff honouring `Retry-After`, each
//!   retry reported as a [`StreamEvent::Retrying`].
//! - [`request_log`]: `SERI_REQUEST_LOG`, one JSON line per request sent.
//! - [`settings`] and [`factory`]: keys and URLs from the environment or
//!   configuration, and [`build_provider`] that wires it all together.
//! - [`sse`] and [`retry_after`]: the sans-IO parsers underneath.
//!
//! This crate never writes events, never reads the session store and never
//! decides what goes into a request: it translates a request it is given
//! and reports faithfully what came back. It never returns a response for a
//! stream that was cut, and never retries an error that retrying cannot fix
//! (auth, context overflow). It reads no environment variable itself: the
//! caller hands in a lookup function.

pub mod anthropic;
mod assemble;
mod classify;
pub mod error;
pub mod factory;
mod http;
pub mod openai;
pub mod provider;
pub mod request;
pub mod request_log;
pub mod response;
pub mod retry;
pub mod retry_after;
pub mod script;
pub mod settings;
pub mod sse;

pub use error::{ErrorKind, ProviderError};
pub use factory::{ConfiguredProvider, SCRIPTED_MODEL, build_provider, process_env};
pub use http::HttpOptions;
pub use provider::{EventSink, IgnoreEvents, Provider};
pub use request::{AssistantTurn, ModelRequest, ReasoningEffort, RequestMessage, Sampling, ToolSpec};
pub use request_log::{REQUEST_LOG_ENV, RequestLog};
pub use response::{ModelResponse, RetryNotice, StopReason, StreamEvent};
pub use retry::{RetryPolicy, Sleeper, TokioSleeper};
pub use settings::{ProviderConfig, ProviderKind, Settings, SettingsError};
