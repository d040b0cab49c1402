//! Model context windows: how many tokens of prompt each model accepts.
//!
//! Used for the context meter, the continuation guidance, the compaction
//! trigger and the successor-fits check. Unknown models get
//! [`FALLBACK_CONTEXT_WINDOW`]; local servers often run with a smaller window
//! than the model supports (Ollama's `num_ctx`), so users override the table
//! with `--context-window N` or `{"context": {"window": N}}`.

/// The window assumed for a model the table does not know: small enough that
/// the meter and the compaction trigger err on the early side for most
/// current models.
pub const FALLBACK_CONTEXT_WINDOW: u64 = 128_000;

/// A model's window and where the figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    /// Tokens of prompt the model accepts.
    pub tokens: u64,
    /// Whether the table knew the model (otherwise the fallback).
    pub known: bool,
}

/// Model id prefixes and their windows, most specific first within a family.
/// Matching is by prefix on the lowercase id with any `vendor/` part removed,
/// so `anthropic/claude-sonnet-4.5` (OpenRouter) and `claude-sonnet-4-5`
/// (Anthropic) both match `claude-sonnet-4`.
const WINDOWS: &[(&str, u64)] = &[
    // Anthropic
    ("claude-opus-4", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-haiku-4", 200_000),
    ("claude-3-7-sonnet", 200_000),
    ("claude-3-5", 200_000),
    ("claude-3", 200_000),
    // OpenAI
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o4-mini", 200_000),
    ("o3", 200_000),
    ("o1", 200_000),
    // Google and others seen through OpenRouter
    ("gemini-2.5", 1_048_576),
    ("gemini-2.0", 1_048_576),
    ("deepseek-chat", 128_000),
    ("deepseek-r1", 128_000),
    ("deepseek-v3", 128_000),
    ("grok-4", 256_000),
    ("kimi-k2", 131_072),
    // Common local models (Ollama names; the model's own limit)
    ("llama3.3", 131_072),
    ("llama3.2", 131_072),
    ("llama3.1", 131_072),
    ("llama3", 8_192),
    ("qwen3-coder", 262_144),
    ("qwen3", 40_960),
    ("qwen2.5-coder", 32_768),
    ("qwen2.5", 32_768),
    ("mistral-nemo", 131_072),
    ("mistral", 32_768),
    ("gemma3", 131_072),
    ("gemma2", 8_192),
    ("phi4", 16_384),
    ("gpt-oss", 131_072),
    ("deepseek-coder-v2", 163_840),
];

/// The context window of a model, from its provider type and id.
///
/// The provider type is accepted for symmetry with the model registry and
/// for providers whose ids collide; today every id is unique across them.
pub fn model_context_window(_provider: &str, model: &str) -> ContextWindow {
    let lower = model.to_ascii_lowercase();
    let id = lower.rsplit('/').next().unwrap_or(&lower);
    // Ollama tags (`llama3.1:8b`) and dated snapshots share their family's window.
    let id = id.split(':').next().unwrap_or(id);
    // Anthropic writes versions with dots through OpenRouter (`claude-sonnet-4.5`).
    let id = id
        .replace('.', "-")
        .replace("gpt-4-1", "gpt-4.1")
        .replace("llama3-", "llama3.")
        .replace("qwen2-5", "qwen2.5")
        .replace("gemini-2-", "gemini-2.");
    WINDOWS
        .iter()
        .find(|(prefix, _)| id.starts_with(prefix))
        .map(|&(_, tokens)| ContextWindow { tokens, known: true })
        .unwrap_or(ContextWindow { tokens: FALLBACK_CONTEXT_WINDOW, known: false })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(provider: &str, model: &str, expected: Option<u64>) {
        let w = model_context_window(provider, model);
        match expected {
            Some(tokens) => assert_eq!((w.tokens, w.known), (tokens, true), "{provider}/{model}"),
            None => assert_eq!((w.tokens, w.known), (FALLBACK_CONTEXT_WINDOW, false), "{provider}/{model}"),
        }
    }

    #[test]
    fn table() {
        check("anthropic", "claude-sonnet-4-5-20250929", Some(200_000));
        check("openrouter", "anthropic/claude-sonnet-4.5", Some(200_000));
        check("openai", "gpt-4.1-mini", Some(1_047_576));
        check("openai", "gpt-4o-mini", Some(128_000));
        check("openai", "gpt-4", Some(8_192));
        check("openai", "gpt-5-mini", Some(400_000));
        check("openrouter", "google/gemini-2.5-pro", Some(1_048_576));
        check("ollama", "llama3.1:8b", Some(131_072));
        check("ollama", "qwen2.5-coder:7b", Some(32_768));
        check("ollama", "qwen2.5:14b", Some(32_768));
        check("script", "scripted", None);
        check("openai", "", None);
    }
}
