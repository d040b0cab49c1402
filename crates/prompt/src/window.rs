//! The context window in force: the user's override if there is one, else the
//! model table in `seri-core`, else its documented fallback.

use std::num::NonZeroU64;

use seri_core::model::{FALLBACK_CONTEXT_WINDOW, model_context_window};

/// Where the window figure came from, so the CLI can say why it shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowSource {
    /// `--context-window N` or `{"context": {"window": N}}`.
    Override,
    /// The model table knew the model.
    ModelTable,
    /// The table did not know the model: [`FALLBACK_CONTEXT_WINDOW`].
    Fallback,
}

/// The window used for the context meter, `<context_usage>` and the
/// compaction trigger. Never zero, so percentages are always defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EffectiveWindow {
    /// Tokens of prompt the model accepts.
    pub tokens: NonZeroU64,
    /// Where the figure came from.
    pub source: WindowSource,
}

const FALLBACK: NonZeroU64 = match NonZeroU64::new(FALLBACK_CONTEXT_WINDOW) {
    Some(n) => n,
    None => NonZeroU64::MIN,
};

/// The window for a provider type and model id, with the user's override
/// taking precedence. A zero override cannot be expressed: the config layer
/// refuses it when it parses the number.
pub fn effective_context_window(provider: &str, model: &str, user_override: Option<NonZeroU64>) -> EffectiveWindow {
    if let Some(tokens) = user_override {
        return EffectiveWindow { tokens, source: WindowSource::Override };
    }
    let table = model_context_window(provider, model);
    match (table.known, NonZeroU64::new(table.tokens)) {
        (true, Some(tokens)) => EffectiveWindow { tokens, source: WindowSource::ModelTable },
        (false, Some(tokens)) => EffectiveWindow { tokens, source: WindowSource::Fallback },
        (_, None) => EffectiveWindow { tokens: FALLBACK, source: WindowSource::Fallback },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(provider: &str, model: &str, user_override: Option<u64>, expected: (u64, WindowSource)) {
        let window = effective_context_window(provider, model, user_override.and_then(NonZeroU64::new));
        assert_eq!((window.tokens.get(), window.source), expected, "{provider}/{model} {user_override:?}");
    }

    #[test]
    fn override_then_table_then_fallback() {
        check("anthropic", "claude-sonnet-4-5", None, (200_000, WindowSource::ModelTable));
        check("anthropic", "claude-sonnet-4-5", Some(50_000), (50_000, WindowSource::Override));
        check("ollama", "llama3.1:8b", Some(8_192), (8_192, WindowSource::Override));
        check("ollama", "my-finetune", None, (FALLBACK_CONTEXT_WINDOW, WindowSource::Fallback));
        check("script", "scripted", Some(1_000), (1_000, WindowSource::Override));
    }
}
