//! What a provider gives back: [`StreamEvent`]s while the answer streams,
//! then one assembled [`ModelResponse`] once it is complete.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use seri_core::{Thinking, ToolCall, Usage};

use crate::error::ProviderError;
use crate::request::AssistantTurn;

/// Something that happened while a response streamed, in arrival order.
///
/// Deltas are provisional: a [`StreamEvent::Retrying`] means the attempt
/// that produced the deltas before it failed and everything it streamed is
/// void; the next attempt streams from the start. Only the
/// [`ModelResponse`] that `Provider::stream` returns is the answer.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of the visible answer.
    TextDelta(String),
    /// A piece of the model's reasoning.
    ThinkingDelta(String),
    /// The model started a tool call; its arguments are still streaming.
    ToolCallStarted {
        /// The provider's id for the call.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A tool call whose arguments are complete and valid JSON.
    ToolCallReady(ToolCall),
    /// The attempt failed with a retryable error; another follows after `delay`.
    Retrying(RetryNotice),
}

/// A failed attempt that will be retried. The run loop records these in the
/// trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// The attempt that failed, counting from 1.
    pub attempt: u32,
    /// The most attempts the policy allows.
    pub max_attempts: u32,
    /// How long the policy waits before the next attempt.
    pub delay: Duration,
    /// Why the attempt failed.
    pub error: ProviderError,
}

/// A complete answer: returned only when the provider's stream ended
/// properly, never for a stream that was cut.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelResponse {
    /// Reasoning blocks, in order, with their signatures.
    pub thinking: Vec<Thinking>,
    /// The visible answer.
    pub text: String,
    /// The tools the model asked to run, in order, arguments parsed.
    pub tool_calls: Vec<ToolCall>,
    /// What the request cost, as the provider reported it; `None` when it
    /// reported nothing (llama-cpp-python, servers that ignore
    /// `stream_options.include_usage`, a script turn without `usage`):
    /// unknown is not zero.
    pub usage: Option<Usage>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
}

impl ModelResponse {
    /// The answer as the assistant turn the next request will repeat.
    pub fn to_assistant_turn(&self) -> AssistantTurn {
        AssistantTurn { thinking: self.thinking.clone(), text: self.text.clone(), tool_calls: self.tool_calls.clone() }
    }
}

/// Why the model stopped, in Anthropic's vocabulary (which is also what
/// `MessageMeta::stop_reason` stores).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum StopReason {
    /// The model finished its answer.
    #[default]
    EndTurn,
    /// The model wants tools to run.
    ToolUse,
    /// The output hit the token cap.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// The provider refused or filtered the output.
    Refusal,
    /// A reason seri has no name for, kept verbatim.
    Other(String),
}

impl StopReason {
    /// The stored name: `end_turn`, `tool_use`, `max_tokens`, …
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::Refusal => "refusal",
            StopReason::Other(other) => other,
        }
    }
}

impl From<String> for StopReason {
    fn from(name: String) -> Self {
        match name.as_str() {
            "end_turn" => StopReason::EndTurn,
            "tool_use" => StopReason::ToolUse,
            "max_tokens" => StopReason::MaxTokens,
            "stop_sequence" => StopReason::StopSequence,
            "refusal" => StopReason::Refusal,
            _ => StopReason::Other(name),
        }
    }
}

impl From<StopReason> for String {
    fn from(reason: StopReason) -> Self {
        reason.as_str().to_owned()
    }
}
