//! Token usage as billed by a provider, and the model that billed it.

use serde::{Deserialize, Serialize};

/// Tokens billed for one model request.
///
/// `input` counts only uncached input; the prompt's full size is
/// [`Usage::prompt_tokens`], which is what the context meter shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Uncached input tokens.
    #[serde(default)]
    pub input: u64,
    /// Input tokens served from the provider's prompt cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write: u64,
    /// Output tokens, thinking included.
    #[serde(default)]
    pub output: u64,
}

impl Usage {
    /// The size of the prompt that was sent: `input + cacheRead + cacheWrite`.
    pub const fn prompt_tokens(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }

    /// The sum of two reported usages, either of which may be unknown:
    /// unknown plus unknown stays unknown (never zero); otherwise the sum
    /// of what was reported.
    pub const fn add_reported(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
        match (a, b) {
            (None, None) => None,
            (Some(u), None) | (None, Some(u)) => Some(u),
            (Some(a), Some(b)) => Some(Usage {
                input: a.input + b.input,
                cache_read: a.cache_read + b.cache_read,
                cache_write: a.cache_write + b.cache_write,
                output: a.output + b.output,
            }),
        }
    }
}

/// Which model answered: the provider type and the model id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    /// Provider type: `anthropic`, `openai`, `openrouter`, `ollama`, `script`, …
    pub provider: String,
    /// The provider's model id.
    pub model: String,
}

impl ModelRef {
    /// A model reference from its two parts.
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> Self {
        Self { provider: provider.into(), model: model.into() }
    }
}
