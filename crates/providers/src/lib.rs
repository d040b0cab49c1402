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
//!   OpenRouter with its provider pin, Ollama, vLLM, llama.cpp), and
//!   OpenAI's Responses API ([`openai::responses`]) for a provider
//!   configured with `"api": "responses"`.
//! - [`anthropic`]: the Messages API over SSE, with thinking and prompt-cache
//!   breakpoints.
//! - [`retry`]: bounded exponential backoff honouring `Retry-After`, each
//!   retry reported as a [`StreamEvent::Retrying`].
//! - [`request_log`]: `SERI_REQUEST_LOG`, one JSON line per request sent.
//! - [`request_size`]: a request's characters as the local estimate counts
//!   them, part by part.
//! - [`settings`] and [`factory`]: keys and URLs from the environment or
//!   configuration, and [`build_provider`] that wires it all together.
//! - [`window`]: a local server's context window, asked of the server.
//! - [`sse`] and [`retry_after`]: the sans-IO parsers underneath.
//!
//! Offline, the scripted provider streams its script's turns whatever the
//! request says (`cargo run -p seri-providers --example stream_turn` also
//! streams from an OpenAI-compatible server):
//!
//! ```
//! use seri_providers::script::{Script, ScriptReply, ScriptTurn, ScriptedProvider};
//! use seri_providers::{ModelRequest, Provider, RequestMessage, StopReason, StreamEvent};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let reply = ScriptReply { text: "Hello there!".into(), ..ScriptReply::default() };
//! let provider = ScriptedProvider::new(Script::from_turns("inline", vec![ScriptTurn::Reply(reply)]));
//! let mut request = ModelRequest::new("scripted", "Be brief.");
//! request.messages.push(RequestMessage::user("Say hello"));
//!
//! let (sink, mut events) = tokio::sync::mpsc::unbounded_channel();
//! let runtime = tokio::runtime::Builder::new_current_thread().build()?;
//! let response = runtime.block_on(provider.stream(&request, &sink))?;
//! assert_eq!(response.text, "Hello there!");
//! assert_eq!(response.stop_reason, StopReason::EndTurn);
//! let mut streamed = String::new();
//! while let Ok(StreamEvent::TextDelta(text)) = events.try_recv() {
//!     streamed.push_str(&text);
//! }
//! assert_eq!(streamed, response.text);
//! # Ok(()) }
//! ```
//!
//! With a real model, configured from the environment:
//!
//! ```no_run
//! use seri_providers::{build_provider, process_env, ModelRequest, ProviderKind, RequestMessage, Settings, StreamEvent};
//!
//! # async fn turn() -> Result<(), Box<dyn std::error::Error>> {
//! let configured = build_provider(ProviderKind::Anthropic, "claude-sonnet-4-5", &Settings::default(), &process_env)?;
//! let mut request = ModelRequest::new(configured.model.model.clone(), "frozen system prompt");
//! request.messages.push(RequestMessage::user("Fix the bug in a.rs"));
//! request.mark_cache_breakpoint(); // everything above repeats next turn
//! request.messages.push(RequestMessage::user("<context_usage …/>")); // per-turn blocks last
//!
//! let (sink, mut events) = tokio::sync::mpsc::unbounded_channel();
//! let ui = tokio::spawn(async move {
//!     while let Some(event) = events.recv().await {
//!         if let StreamEvent::TextDelta(text) = event { /* show it */ }
//!     }
//! });
//! let response = configured.provider.stream(&request, &sink).await?;
//! drop(sink);
//! ui.await?;
//! // response.text, response.tool_calls, response.usage, response.stop_reason
//! # Ok(()) }
//! ```
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
pub mod request_size;
pub mod response;
pub mod retry;
pub mod retry_after;
pub mod script;
pub mod settings;
pub mod sse;
pub mod window;

pub use error::{ErrorKind, ProviderError};
pub use factory::{ConfiguredProvider, SCRIPTED_MODEL, api_key, base_url, build_provider, process_env};
pub use http::{DEFAULT_EVENT_IDLE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, HttpOptions};
pub use provider::{EventSink, IgnoreEvents, Provider};
pub use request::{AssistantTurn, ImageInput, ModelRequest, ReasoningEffort, RequestMessage, Sampling, ToolSpec};
pub use request_log::{REQUEST_LOG_ENV, RequestLog};
pub use response::{ModelResponse, RetryNotice, StopReason, StreamEvent};
pub use retry::{RetryPolicy, Sleeper, TokioSleeper};
pub use settings::{OpenAiApi, ProviderConfig, ProviderKind, Settings, SettingsError};
pub use window::{ServerWindow, WindowSource, detect_window};
