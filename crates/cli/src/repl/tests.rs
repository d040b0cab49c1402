//! Tests of `repl`, beside it so the module itself stays short.

use super::commands::model::model_named;
use super::*;

#[test]
fn a_model_name_is_the_providers_unless_it_names_a_provider_first() {
    let named = |name: &str, provider: &str| {
        let m = model_named(name, provider);
        format!("{}/{}", m.provider, m.model)
    };
    assert_eq!(named("claude-opus-4-1", "anthropic"), "anthropic/claude-opus-4-1");
    assert_eq!(named("anthropic/claude-opus-4-1", "anthropic"), "anthropic/claude-opus-4-1");
    assert_eq!(named("openai/gpt-5", "anthropic"), "openai/gpt-5", "another provider: refused later, by name");
    assert_eq!(named("anthropic/claude-sonnet-4-5", "openrouter"), "openrouter/anthropic/claude-sonnet-4-5");
    assert_eq!(named("meta-llama/llama-4", "openrouter"), "openrouter/meta-llama/llama-4");
}

#[test]
fn a_typed_answer_is_yes_always_no_or_words_for_the_model() {
    for (line, decision) in [
        ("y\n", Decision::Allow),
        (" YES ", Decision::Allow),
        ("a", Decision::AllowForSession),
        ("always\n", Decision::AllowForSession),
        ("\n", Decision::Deny),
        ("N", Decision::Deny),
        ("use the staging bucket instead\n", Decision::Instead("use the staging bucket instead".into())),
    ] {
        assert_eq!(decision_of(line), decision, "{line:?}");
    }
}
