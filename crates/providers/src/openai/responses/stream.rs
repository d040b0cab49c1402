//! Reading a streamed `/responses` answer back into a response. Sans-IO:
//! [`EventReader::on_data`] takes each event's data, [`EventReader::finish`]
//! judges completeness.
//!
//! Every event names itself in its `type`; items are keyed by
//! `output_index`, so a reasoning item, a message and several function
//! calls may stream side by side.
//!
//! - `response.output_text.delta` (and `response.refusal.delta`) is text.
//! - `response.reasoning_summary_text.delta` is thinking, the summary parts
//!   of one reasoning item joined by a blank line; `response.reasoning_text.delta`
//!   (open-weight models' raw reasoning) is thinking too.
//! - `response.output_item.added` of a `function_call` starts a call
//!   (`call_id`, `name`); `response.function_call_arguments.delta` adds to it.
//! - `response.output_item.done` of a `reasoning` item carries its
//!   `encrypted_content`, kept on the thinking to be sent back. An item
//!   whose parts never streamed as deltas (a server that only sends the
//!   finished item) is read from this event instead.
//! - `response.completed` ends the stream with its `usage`: `input` is
//!   `input_tokens` less `input_tokens_details.cached_tokens`, which are
//!   `cacheRead`; no `usage` is unknown, not zero. `response.incomplete`
//!   ends it too, stopped by `incomplete_details.reason`
//!   (`max_output_tokens`, `content_filter`).
//! - `response.failed` (the error inside its `response`) and `error` (the
//!   error at the top level as documented, or in an `error` object as sent)
//!   fail the call, classified: `context_length_exceeded` is an overflow, a
//!   rate limit waits as long as its message says ("try again in 11.054s").
//! - Other events (`response.created`, `…content_part.added`, `….done`
//!   echoes) change nothing. There is no `[DONE]`: the stream is complete
//!   only at `response.completed` or `response.incomplete`.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{Value, json};
use seri_core::Usage;

use crate::assemble::ResponseBuilder;
use crate::classify::{ErrorBody, classify, read_error_value};
use crate::error::{ErrorKind, ProviderError};
use crate::http::{ended_early, unreadable_event};
use crate::provider::EventSink;
use crate::response::{ModelResponse, StopReason};
use crate::retry_after::parse_try_again_in;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    summary_index: Option<u64>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default)]
    item: Option<Item>,
    #[serde(default)]
    response: Option<ResponseJson>,
    /// An `error` event's fields, at the top level as documented…
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<String>,
    /// …or in an object, as the API sends them.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    encrypted_content: Option<String>,
    #[serde(default)]
    summary: Option<Vec<Part>>,
    #[serde(default)]
    content: Option<Vec<Part>>,
}

/// A summary part, a message's content part or a reasoning content part.
#[derive(Deserialize)]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct ResponseJson {
    #[serde(default)]
    usage: Option<UsageJson>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct UsageJson {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// Reads one response from its stream events' data, delivering deltas to
/// a sink as they come.
pub struct EventReader<'a> {
    provider: &'a str,
    builder: ResponseBuilder<'a>,
    done: bool,
    /// How many events were read.
    events: u64,
    /// The item the last event without an `output_index` belongs to.
    current: u64,
    /// Items some delta streamed; the others are read from their `done` event.
    streamed: HashSet<u64>,
}

impl<'a> EventReader<'a> {
    /// A reader for a response from `provider`, delivering deltas to `sink`.
    pub fn new(provider: &'a str, sink: &'a dyn EventSink) -> Self {
        Self {
            provider,
            builder: ResponseBuilder::new(provider, sink),
            done: false,
            events: 0,
            current: 0,
            streamed: HashSet::new(),
        }
    }

    /// Whether `response.completed` (or `response.incomplete`) was seen.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Whether no event at all was read.
    pub fn is_empty(&self) -> bool {
        self.events == 0
    }

    /// Reads one event's data.
    pub fn on_data(&mut self, data: &str) -> Result<(), ProviderError> {
        self.events += 1;
        if data.trim() == "[DONE]" {
            // Not part of this format, but some compatible servers end with it.
            return Ok(());
        }
        let event: Event = serde_json::from_str(data).map_err(|e| unreadable_event(self.provider, data, &e))?;
        let key = event.output_index.unwrap_or(self.current);
        self.current = key;
        let delta = event.delta.as_deref().unwrap_or("");
        match event.kind.as_str() {
            "response.output_text.delta" | "response.refusal.delta" => {
                self.streamed.insert(key);
                self.builder.text(delta);
            }
            "response.reasoning_summary_part.added" if event.summary_index.is_some_and(|i| i > 0) => {
                // Each summary part after the first starts a new paragraph.
                self.builder.thinking(key, "\n\n");
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.streamed.insert(key);
                self.builder.thinking(key, delta);
            }
            "response.function_call_arguments.delta" => {
                self.streamed.insert(key);
                self.builder.tool_call(key, None, None, delta);
            }
            "response.output_item.added" => {
                if let Some(item) = event.item.filter(|item| item.kind == "function_call") {
                    let arguments = item.arguments.unwrap_or_default();
                    if !arguments.is_empty() {
                        self.streamed.insert(key);
                    }
                    self.builder.tool_call(key, item.call_id.as_deref(), item.name.as_deref(), &arguments);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = event.item {
                    self.item_done(key, item);
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = event.response;
                let reason = response.as_ref().and_then(|r| r.incomplete_details.as_ref()).map(|d| d.reason.clone());
                let stop = match (event.kind.as_str(), reason.flatten().as_deref()) {
                    ("response.completed", _) => StopReason::EndTurn,
                    (_, Some("max_output_tokens")) => StopReason::MaxTokens,
                    (_, Some("content_filter")) => StopReason::Refusal,
                    (_, Some(other)) => StopReason::Other(other.to_owned()),
                    (_, None) => StopReason::Other("incomplete".to_owned()),
                };
                self.builder.stop(stop);
                if let Some(usage) = response.and_then(|r| r.usage) {
                    let cached = usage.input_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0);
                    let cached = cached.min(usage.input_tokens);
                    *self.builder.usage_mut() = Usage {
                        input: usage.input_tokens - cached,
                        cache_read: cached,
                        cache_write: 0,
                        output: usage.output_tokens,
                    };
                }
                self.done = true;
            }
            "response.failed" => {
                let error = event.response.and_then(|r| r.error).filter(|e| !e.is_null());
                return Err(self.error(error, data));
            }
            "error" => {
                let error = match event.error.filter(|e| e.is_object()) {
                    Some(error) => error,
                    None => json!({"code": event.code, "message": event.message}),
                };
                return Err(self.error(Some(error), data));
            }
            _ => {}
        }
        Ok(())
    }

    /// A finished item: the encrypted reasoning, and whatever did not stream.
    fn item_done(&mut self, key: u64, item: Item) {
        let streamed = self.streamed.contains(&key);
        match item.kind.as_str() {
            "reasoning" => {
                if !streamed {
                    let parts = item.summary.or(item.content).unwrap_or_default();
                    let texts: Vec<String> = parts.into_iter().filter_map(|p| p.text).collect();
                    self.builder.thinking(key, &texts.join("\n\n"));
                }
                if let Some(encrypted) = item.encrypted_content.filter(|e| !e.is_empty()) {
                    self.builder.thinking_encrypted(key, &encrypted);
                }
            }
            "function_call" if !streamed => {
                let arguments = item.arguments.unwrap_or_default();
                self.builder.tool_call(key, item.call_id.as_deref(), item.name.as_deref(), &arguments);
            }
            "message" if !streamed => {
                for part in item.content.unwrap_or_default() {
                    self.builder.text(part.text.or(part.refusal).as_deref().unwrap_or(""));
                }
            }
            _ => {}
        }
    }

    /// The classified error of a `response.failed` or `error` event.
    fn error(&self, error: Option<Value>, data: &str) -> ProviderError {
        let body = error.and_then(|error| read_error_value(&json!({ "error": error }))).unwrap_or_else(|| ErrorBody {
            message: format!("the response failed without saying why: {data}"),
            ..ErrorBody::default()
        });
        let error = classify(self.provider, None, &body, None);
        let wait = (error.kind == ErrorKind::RateLimited).then(|| parse_try_again_in(&body.message)).flatten();
        error.with_retry_after(wait)
    }

    /// The response, if the stream reached `response.completed`.
    pub fn finish(self) -> Result<ModelResponse, ProviderError> {
        if !self.done {
            return Err(ended_early(self.provider, "`response.completed`"));
        }
        self.builder.finish()
    }
}

impl crate::openai::transport::StreamReader for EventReader<'_> {
    fn on_data(&mut self, data: &str) -> Result<(), ProviderError> {
        EventReader::on_data(self, data)
    }

    fn is_done(&self) -> bool {
        EventReader::is_done(self)
    }

    fn is_empty(&self) -> bool {
        EventReader::is_empty(self)
    }

    fn finish(self) -> Result<ModelResponse, ProviderError> {
        EventReader::finish(self)
    }
}
