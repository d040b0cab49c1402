//! What differs between OpenAI-compatible servers, as data.

use serde::{Deserialize, Serialize};

/// How one OpenAI-compatible server wants a request spelt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiDialect {
    /// The name of the output-token cap.
    pub max_tokens_field: MaxTokensField,
    /// How reasoning effort is asked for.
    pub reasoning: ReasoningField,
    /// Whether the server accepts `top_k` (OpenAI's own API refuses it).
    pub accepts_top_k: bool,
    /// OpenRouter only: which upstream providers may serve the request.
    pub provider_pin: Option<ProviderPin>,
    /// What `content` an assistant message that only called tools carries.
    pub tool_call_content: ToolCallContent,
}

/// The `content` of an assistant message that has tool calls and no text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallContent {
    /// `null`: OpenAI's own documented form.
    Null,
    /// `""`: what every server accepts. llama-cpp-python's server refuses
    /// `null` with a 500 (`'content' … Input should be a valid string`),
    /// and llama.cpp, Ollama, vLLM and LM Studio all take an empty string.
    Empty,
}

/// The name of the output-token cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_completion_tokens`: OpenAI, whose reasoning models refuse `max_tokens`.
    MaxCompletionTokens,
    /// `max_tokens`: OpenRouter and local servers.
    MaxTokens,
}

/// How reasoning effort is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningField {
    /// `"reasoning_effort": "high"`: OpenAI, Ollama, vLLM.
    Effort,
    /// `"reasoning": {"effort": "high"}`: OpenRouter's unified field.
    OpenRouter,
}

/// OpenRouter's provider routing pin: serve only from these upstream
/// providers, in this order. Sent as `provider: {order, allow_fallbacks}`;
/// in configuration it is `{"order": [...], "allowFallbacks": false}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderPin {
    /// Upstream provider names (`"anthropic"`, `"deepinfra/fp8"`, …), preferred first.
    pub order: Vec<String>,
    /// Whether OpenRouter may fall back to providers not in `order`.
    /// Off by default: a pin that silently falls back pins nothing.
    #[serde(default)]
    pub allow_fallbacks: bool,
}

impl OpenAiDialect {
    /// OpenAI's own API.
    pub fn openai() -> Self {
        Self {
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            reasoning: ReasoningField::Effort,
            accepts_top_k: false,
            provider_pin: None,
            tool_call_content: ToolCallContent::Null,
        }
    }

    /// OpenRouter, optionally pinned to upstream providers.
    pub fn openrouter(provider_pin: Option<ProviderPin>) -> Self {
        Self {
            max_tokens_field: MaxTokensField::MaxTokens,
            reasoning: ReasoningField::OpenRouter,
            accepts_top_k: true,
            provider_pin,
            tool_call_content: ToolCallContent::Empty,
        }
    }

    /// Local and self-hosted servers: llama.cpp's `llama-server` and
    /// llama-cpp-python's server, Ollama, vLLM, LM Studio. Every choice here
    /// is one all of them accept, so no server has to be guessed from a
    /// model name.
    pub fn local() -> Self {
        Self {
            max_tokens_field: MaxTokensField::MaxTokens,
            reasoning: ReasoningField::Effort,
            accepts_top_k: true,
            provider_pin: None,
            tool_call_content: ToolCallContent::Empty,
        }
    }
}
