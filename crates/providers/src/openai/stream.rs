//! Reading `chat.completion.chunk` events back into a response. Sans-IO:
//! [`ChunkReader::on_data`] takes each event's data, [`ChunkReader::finish`]
//! judges completeness.
//!
//! - `delta.content` is text; `delta.reasoning_content` (DeepSeek, vLLM,
//!   llama.cpp) or `delta.reasoning` (OpenRouter, Ollama) is thinking.
//! - `delta.tool_calls[]` fragments are keyed by `index`, so several calls
//!   may interleave; a server that omits `index` starts a new call whenever
//!   a fragment carries an `id`.
//! - Usage arrives in a last chunk with empty `choices`: `input` is
//!   `prompt_tokens` less the cached tokens
//!   (`prompt_tokens_details.cached_tokens`, or DeepSeek's
//!   `prompt_cache_hit_tokens`), which are `cacheRead`.
//! - A chunk with an `error` object (OpenRouter reports upstream failures
//!   mid-stream this way) fails the call, classified.
//! - The stream is complete only at `data: [DONE]`.

use serde::Deserialize;
use serde_json::Value;
use seri_core::Usage;

use crate::assemble::ResponseBuilder;
use crate::classify::{ErrorBody, classify, read_error_value};
use crate::error::ProviderError;
use crate::http::{ended_early, unreadable_event};
use crate::provider::EventSink;
use crate::response::{ModelResponse, StopReason};

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<UsageJson>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct UsageJson {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// Reads one response from its stream events' data, delivering deltas to
/// a sink as they come. Sans-IO: the provider feeds it from HTTP, a test
/// or a benchmark from bytes it holds.
pub struct ChunkReader<'a> {
    provider: &'a str,
    builder: ResponseBuilder<'a>,
    done: bool,
    /// How many events were read, `[DONE]` included.
    events: u64,
    /// The key and id of the last tool-call fragment, for servers that omit `index`.
    last_key: Option<u64>,
    last_id: Option<String>,
}

impl<'a> ChunkReader<'a> {
    /// A reader for a response from `provider`, delivering deltas to `sink`.
    pub fn new(provider: &'a str, sink: &'a dyn EventSink) -> Self {
        Self {
            provider,
            builder: ResponseBuilder::new(provider, sink),
            done: false,
            events: 0,
            last_key: None,
            last_id: None,
        }
    }

    /// Whether `[DONE]` was seen; nothing after it is read.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Whether no event at all was read: the server answered `200` and
    /// closed the stream without a word.
    pub fn is_empty(&self) -> bool {
        self.events == 0
    }

    /// Reads one event's data.
    pub fn on_data(&mut self, data: &str) -> Result<(), ProviderError> {
        self.events += 1;
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| unreadable_event(self.provider, data, &e))?;
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            let body = read_error_value(&serde_json::json!({ "error": error })).unwrap_or_else(|| ErrorBody {
                message: format!("an error chunk without a message: {data}"),
                ..ErrorBody::default()
            });
            return Err(classify(self.provider, None, &body, None));
        }
        // seri asks for one choice (no `n`), so only the first is read.
        if let Some(choice) = chunk.choices.into_iter().next() {
            let delta = choice.delta.unwrap_or_default();
            if let Some(thinking) = delta.reasoning_content.as_deref().or(delta.reasoning.as_deref()) {
                self.builder.thinking(0, thinking);
            }
            if let Some(text) = &delta.content {
                self.builder.text(text);
            }
            if let Some(refusal) = &delta.refusal {
                self.builder.text(refusal);
            }
            for call in delta.tool_calls.unwrap_or_default() {
                let key = self.tool_call_key(&call);
                let (name, arguments) = match &call.function {
                    Some(f) => (f.name.as_deref(), f.arguments.as_deref().unwrap_or("")),
                    None => (None, ""),
                };
                self.builder.tool_call(key, call.id.as_deref(), name, arguments);
            }
            if let Some(reason) = choice.finish_reason {
                self.builder.stop(stop_reason(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            let cached = usage.prompt_tokens_details.and_then(|d| d.cached_tokens).or(usage.prompt_cache_hit_tokens);
            let cached = cached.unwrap_or(0).min(usage.prompt_tokens);
            *self.builder.usage_mut() = Usage {
                input: usage.prompt_tokens - cached,
                cache_read: cached,
                cache_write: 0,
                output: usage.completion_tokens,
            };
        }
        Ok(())
    }

    fn tool_call_key(&mut self, call: &ToolCallDelta) -> u64 {
        let key = match (call.index, self.last_key) {
            (Some(index), _) => index,
            (None, None) => 0,
            // Without `index`, a fragment with a new id starts the next call;
            // one without an id (or repeating the id) continues the last one.
            (None, Some(last)) => match &call.id {
                Some(id) if self.last_id.as_deref() != Some(id.as_str()) => last + 1,
                _ => last,
            },
        };
        self.last_key = Some(key);
        if call.id.is_some() {
            self.last_id.clone_from(&call.id);
        }
        key
    }

    /// The response, if the stream reached `[DONE]`.
    pub fn finish(self) -> Result<ModelResponse, ProviderError> {
        if !self.done {
            return Err(ended_early(self.provider, "`data: [DONE]`"));
        }
        if !self.builder.has_stop_reason() {
            return Err(ProviderError::new(
                crate::error::ErrorKind::MalformedResponse,
                self.provider,
                "the stream reached [DONE] without a finish_reason",
            ));
        }
        self.builder.finish()
    }
}

/// OpenAI's `finish_reason` in seri's (Anthropic's) vocabulary.
fn stop_reason(finish_reason: &str) -> StopReason {
    match finish_reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

impl crate::openai::transport::StreamReader for ChunkReader<'_> {
    fn on_data(&mut self, data: &str) -> Result<(), ProviderError> {
        ChunkReader::on_data(self, data)
    }

    fn is_done(&self) -> bool {
        ChunkReader::is_done(self)
    }

    fn is_empty(&self) -> bool {
        ChunkReader::is_empty(self)
    }

    fn finish(self) -> Result<ModelResponse, ProviderError> {
        ChunkReader::finish(self)
    }
}
