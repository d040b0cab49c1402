//! Reading Anthropic's stream events back into a response. Sans-IO:
//! [`EventReader::on_data`] takes each event's data, [`EventReader::finish`]
//! judges completeness.
//!
//! - `message_start` carries the first usage (`input_tokens`,
//!   `cache_read_input_tokens`, `cache_creation_input_tokens`,
//!   `output_tokens`); `message_delta` carries cumulative updates and the
//!   `stop_reason`.
//! - `content_block_start` opens a `text`, `thinking`, `redacted_thinking`
//!   or `tool_use` block at an index; `content_block_delta` adds
//!   `text_delta`, `thinking_delta`, `signature_delta` or `input_json_delta`
//!   to it.
//! - `ping` and event types this build does not know are skipped, as the
//!   API's versioning policy asks of clients.
//! - An `error` event (`overloaded_error` mid-stream, say) fails the call,
//!   classified.
//! - The stream is complete only at `message_stop`.

use serde::Deserialize;
use serde_json::Value;

use crate::assemble::ResponseBuilder;
use crate::classify::{ErrorBody, classify, read_error_value};
use crate::error::ProviderError;
use crate::http::{ended_early, unreadable_event};
use crate::provider::EventSink;
use crate::response::{ModelResponse, StopReason};

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: u64,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u64,
        delta: Delta,
    },
    ContentBlockStop {},
    MessageDelta {
        #[serde(default)]
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<UsageJson>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct MessageStart {
    #[serde(default)]
    usage: Option<UsageJson>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct UsageJson {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

/// Reads one response from its stream events' data, delivering deltas to
/// a sink as they come. Sans-IO: the provider feeds it from HTTP, a test
/// or a benchmark from bytes it holds.
pub struct EventReader<'a> {
    provider: &'a str,
    builder: ResponseBuilder<'a>,
    done: bool,
}

impl<'a> EventReader<'a> {
    /// A reader for a response from `provider`, delivering deltas to `sink`.
    pub fn new(provider: &'a str, sink: &'a dyn EventSink) -> Self {
        Self { provider, builder: ResponseBuilder::new(provider, sink), done: false }
    }

    /// Whether `message_stop` was seen.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Reads one event's data (the `event:` name repeats the data's `type`).
    pub fn on_data(&mut self, data: &str) -> Result<(), ProviderError> {
        let event: Event = serde_json::from_str(data).map_err(|e| unreadable_event(self.provider, data, &e))?;
        match event {
            Event::Error { error } => {
                let body = read_error_value(&serde_json::json!({ "error": error }));
                let body = body.unwrap_or_else(|| ErrorBody {
                    message: format!("an error event without a message: {data}"),
                    ..ErrorBody::default()
                });
                return Err(classify(self.provider, None, &body, None));
            }
            Event::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.add_usage(&usage);
                }
            }
            Event::ContentBlockStart { index, content_block } => match content_block {
                Block::Text { text } => self.builder.text(&text),
                Block::Thinking { thinking, signature } => {
                    self.builder.thinking_start(index, None);
                    self.builder.thinking(index, &thinking);
                    if let Some(signature) = signature {
                        self.builder.thinking_signature(index, &signature);
                    }
                }
                Block::RedactedThinking { data } => self.builder.thinking_start(index, Some(&data)),
                Block::ToolUse { id, name, input } => {
                    // Streaming starts every call with `input: {}` and sends
                    // the arguments as deltas; a non-empty start is kept.
                    let initial = match input {
                        Some(Value::Object(map)) if map.is_empty() => String::new(),
                        Some(Value::Null) | None => String::new(),
                        Some(other) => other.to_string(),
                    };
                    self.builder.tool_call(index, Some(&id), Some(&name), &initial);
                }
                Block::Other => {}
            },
            Event::ContentBlockDelta { index, delta } => match delta {
                Delta::Text { text } => self.builder.text(&text),
                Delta::Thinking { thinking } => self.builder.thinking(index, &thinking),
                Delta::Signature { signature } => self.builder.thinking_signature(index, &signature),
                Delta::InputJson { partial_json } => self.builder.tool_call(index, None, None, &partial_json),
                Delta::Other => {}
            },
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.builder.stop(StopReason::from(reason));
                }
                if let Some(usage) = usage {
                    self.add_usage(&usage);
                }
            }
            Event::MessageStop {} => self.done = true,
            Event::ContentBlockStop {} | Event::Ping {} | Event::Unknown => {}
        }
        Ok(())
    }

    /// Usage counts are cumulative: a later event's figure replaces the earlier one.
    fn add_usage(&mut self, usage: &UsageJson) {
        let total = self.builder.usage_mut();
        if let Some(n) = usage.input_tokens {
            total.input = n;
        }
        if let Some(n) = usage.cache_read_input_tokens {
            total.cache_read = n;
        }
        if let Some(n) = usage.cache_creation_input_tokens {
            total.cache_write = n;
        }
        if let Some(n) = usage.output_tokens {
            total.output = n;
        }
    }

    /// The response, if the stream reached `message_stop`.
    pub fn finish(self) -> Result<ModelResponse, ProviderError> {
        if !self.done {
            return Err(ended_early(self.provider, "`message_stop`"));
        }
        self.builder.finish()
    }
}
