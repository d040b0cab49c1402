//! The provider-neutral request: everything a model is asked, in one shape
//! that every provider translates to its own wire format.
//!
//! The run loop builds one [`ModelRequest`] per model call: the frozen system
//! prompt, the working context as [`RequestMessage`]s, and the per-turn blocks
//! as a final user message. The same value is what `SERI_REQUEST_LOG` records,
//! so its JSON form (camelCase, like every seri record) is part of the
//! contract and is snapshot-tested.

use serde::{Deserialize, Serialize};
use seri_core::{Thinking, ToolCall, ToolResult};

/// One model call, independent of the provider that will serve it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRequest {
    /// The provider's model id.
    pub model: String,
    /// The system prompt, frozen at session start. Empty means none.
    pub system: String,
    /// The conversation, oldest first; the per-turn blocks are the last user message.
    pub messages: Vec<RequestMessage>,
    /// The tools the model may call. Shared: the run loop gives every
    /// request of the same tool set one list, not a copy each (a thousand
    /// runs waiting on their models hold one).
    #[serde(default = "no_tools", skip_serializing_if = "is_empty")]
    pub tools: std::sync::Arc<[ToolSpec]>,
    /// A cap on output tokens (thinking included). `None` leaves it to the
    /// provider, except Anthropic, which requires one (see its module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Sampling knobs; unset ones are not sent.
    #[serde(default, skip_serializing_if = "Sampling::is_default")]
    pub sampling: Sampling,
    /// How hard the model should think, for models that can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningEffort>,
    /// The length of the stable prefix of `messages`: the messages before the
    /// per-turn blocks. Providers with explicit prompt caching (Anthropic)
    /// put a cache breakpoint on the last message of that prefix. Set it with
    /// [`ModelRequest::mark_cache_breakpoint`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_breakpoint: Option<usize>,
    /// The model's context window in tokens, as the caller knows it. Not
    /// part of the request (never sent, never logged): a provider uses it to
    /// read a server's wordless refusal of an oversized request (llama.cpp's
    /// Python server answers one with an empty `200` stream) as the context
    /// overflow it is, not as a network fault.
    #[serde(skip)]
    pub context_window: Option<u64>,
}

fn no_tools() -> std::sync::Arc<[ToolSpec]> {
    std::sync::Arc::from(Vec::new())
}

fn is_empty(tools: &std::sync::Arc<[ToolSpec]>) -> bool {
    tools.is_empty()
}

impl ModelRequest {
    /// A request with no messages, tools or knobs yet.
    pub fn new(model: impl Into<String>, system: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            system: system.into(),
            messages: Vec::new(),
            tools: no_tools(),
            max_output_tokens: None,
            sampling: Sampling::default(),
            reasoning: None,
            cache_breakpoint: None,
            context_window: None,
        }
    }

    /// Marks everything pushed so far as the stable prefix that the next
    /// request will repeat. Call it after the working context and before
    /// pushing the per-turn blocks.
    pub fn mark_cache_breakpoint(&mut self) {
        self.cache_breakpoint = Some(self.messages.len());
    }

    /// The index of the message that carries the cache breakpoint, if the
    /// marked prefix is non-empty and within `messages`.
    pub fn cache_breakpoint_index(&self) -> Option<usize> {
        match self.cache_breakpoint {
            Some(len) if len > 0 && len <= self.messages.len() => Some(len - 1),
            _ => None,
        }
    }
}

/// One message of the conversation, in the neutral format.
///
/// Tool results are messages of their own, one per call, right after the
/// assistant turn that made the calls; providers that want them inside a
/// user message (Anthropic) merge them there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum RequestMessage {
    /// Text sent to the model: a person's message, a projection, a recap, the per-turn blocks.
    User {
        /// The text.
        text: String,
        /// Pictures sent with the text (a person's attached screenshot).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageInput>,
    },
    /// A turn the model wrote earlier.
    Assistant(AssistantTurn),
    /// The answer to one tool call.
    Tool(ToolResult),
}

impl RequestMessage {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        RequestMessage::User { text: text.into(), images: Vec::new() }
    }

    /// An assistant turn with text only.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        RequestMessage::Assistant(AssistantTurn { text: text.into(), ..AssistantTurn::default() })
    }

    /// The answer to a tool call.
    pub fn tool_result(
        call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        RequestMessage::Tool(ToolResult {
            tool_call_id: seri_core::ToolCallId(call_id.into()),
            name: name.into(),
            content: content.into(),
            is_error,
            facts: None,
        })
    }
}

/// A picture sent to the model inside a user message. Its bytes are sent
/// but never logged: the request log names the attachment and its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageInput {
    /// The attachment it is, as the message's `[attachment:ID …]` line names it.
    pub attachment_id: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// The picture itself.
    #[serde(skip)]
    pub data: Vec<u8>,
}

impl ImageInput {
    /// The bytes as standard base64, the form every wire format takes.
    pub fn base64(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&self.data)
    }
}

/// What the model wrote in one turn, in the order providers expect it back:
/// its reasoning, its text, then its tool calls.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantTurn {
    /// Reasoning blocks, each with the provider's signature when it gave one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<Thinking>,
    /// The visible answer.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The tools the model asked to run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does and when to use it, for the model.
    pub description: String,
    /// The JSON schema of its arguments (an object schema).
    pub input_schema: serde_json::Value,
}

/// Sampling knobs. Each is sent only when set, and only to providers that
/// accept it (`top_k` and `seed` are not part of every API).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sampling {
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Sample from the k likeliest tokens (Anthropic and local servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// A seed for servers that support reproducible sampling (OpenAI-compatible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Sampling {
    /// Whether no knob is set.
    pub fn is_default(&self) -> bool {
        *self == Sampling::default()
    }
}

/// How much the model should reason before answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// As little as the model allows.
    Minimal,
    /// A little.
    Low,
    /// The usual amount.
    Medium,
    /// As much as is useful.
    High,
}

impl ReasoningEffort {
    /// The lowercase name, as OpenAI-style APIs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_breakpoint_names_the_last_message_of_the_marked_prefix() {
        let mut request = ModelRequest::new("m", "s");
        assert_eq!(request.cache_breakpoint_index(), None);
        request.mark_cache_breakpoint();
        assert_eq!(request.cache_breakpoint_index(), None, "an empty prefix has nothing to cache");
        request.messages.push(RequestMessage::user("a"));
        request.messages.push(RequestMessage::assistant_text("b"));
        request.mark_cache_breakpoint();
        request.messages.push(RequestMessage::user("<context_usage/>"));
        assert_eq!(request.cache_breakpoint_index(), Some(1));
    }

    #[test]
    fn messages_serialize_with_their_role() {
        let json = serde_json::to_value([
            RequestMessage::user("hi"),
            RequestMessage::assistant_text("hello"),
            RequestMessage::tool_result("call_1", "read", "x", true),
        ])
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"role": "user", "text": "hi"},
                {"role": "assistant", "text": "hello"},
                {"role": "tool", "toolCallId": "call_1", "name": "read", "content": "x", "isError": true},
            ])
        );
    }
}
