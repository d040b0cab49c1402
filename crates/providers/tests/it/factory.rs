//! The factory: keys and URLs from the environment (through a lookup
//! function) or configuration, and a clear error for each setting that
//! cannot work.

use seri_providers::openai::ProviderPin;
use seri_providers::{IgnoreEvents, ProviderConfig, ProviderKind, Settings, SettingsError, build_provider};

use crate::server::{self, TestServer};
use crate::support::{fixture, hello_request};

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
}

fn config(config: ProviderConfig) -> Settings {
    Settings { config, ..Settings::default() }
}

#[track_caller]
fn check_error(
    kind: ProviderKind,
    model: &str,
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
    expected: &str,
) {
    let error = build_provider(kind, model, settings, env).err().unwrap();
    assert_eq!(error.to_string(), expected);
}

#[test]
fn a_missing_key_names_the_variable_to_set() {
    let none = env_of(&[]);
    let settings = Settings::default();
    check_error(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        &settings,
        &none,
        "the `anthropic` provider needs an API key: set ANTHROPIC_API_KEY (or `apiKey` in the provider's configuration)",
    );
    check_error(
        ProviderKind::OpenAi,
        "gpt-4.1",
        &settings,
        &none,
        "the `openai` provider needs an API key: set OPENAI_API_KEY (or `apiKey` in the provider's configuration)",
    );
    check_error(
        ProviderKind::OpenRouter,
        "x/y",
        &settings,
        &none,
        "the `openrouter` provider needs an API key: set OPENROUTER_API_KEY (or `apiKey` in the provider's configuration)",
    );
    let custom = config(ProviderConfig {
        base_url: Some("http://127.0.0.1:8000/v1".into()),
        api_key_env: Some("VLLM_API_KEY".into()),
        ..ProviderConfig::default()
    });
    // A local server usually needs no key: an unset `apiKeyEnv` sends none
    // rather than refusing to start (a server that wanted one answers 401).
    assert!(build_provider(ProviderKind::OpenAiCompatible, "qwen", &custom, &none).is_ok());
    assert!(build_provider(ProviderKind::Ollama, "llama3.1", &custom, &none).is_ok());
}

#[test]
fn other_settings_that_cannot_work() {
    let none = env_of(&[]);
    check_error(
        ProviderKind::OpenAiCompatible,
        "qwen",
        &Settings::default(),
        &none,
        "the `openai-compatible` provider needs a base URL: set `baseUrl` in the provider's configuration",
    );
    check_error(
        ProviderKind::Ollama,
        " ",
        &Settings::default(),
        &none,
        "the `ollama` provider needs a model: pass --model or set `model` in config.json",
    );
    check_error(
        ProviderKind::Ollama,
        "llama3.1",
        &config(ProviderConfig { base_url: Some("localhost:11434".into()), ..ProviderConfig::default() }),
        &none,
        "the base URL `localhost:11434` of the `ollama` provider is not a URL: the scheme must be http or https, not `localhost`",
    );
    let pin = ProviderPin { order: vec!["anthropic".into()], allow_fallbacks: false };
    check_error(
        ProviderKind::OpenAi,
        "gpt-4.1",
        &config(ProviderConfig { pin: Some(pin), ..ProviderConfig::default() }),
        &env_of(&[("OPENAI_API_KEY", "k")]),
        "a provider pin (`pin`) only applies to `openrouter`, not to `openai`",
    );
    let unknown = "gemini".parse::<ProviderKind>().unwrap_err();
    assert!(matches!(unknown, SettingsError::UnknownProvider { .. }));
    assert_eq!(
        unknown.to_string(),
        "unknown provider `gemini`: expected one of script, openai, openrouter, anthropic, ollama, openai-compatible"
    );
    for kind in ProviderKind::ALL {
        assert_eq!(kind.as_str().parse::<ProviderKind>().unwrap(), kind);
    }
}

#[tokio::test]
async fn the_environment_wins_over_configuration() {
    let server = TestServer::start(vec![server::sse(&fixture("openai_text.sse"))]).await;
    let base = server.base.clone();
    let env = move |name: &str| match name {
        "OPENAI_API_KEY" => Some("sk-from-env".to_owned()),
        "OPENAI_BASE_URL" => Some(base.clone()),
        _ => None,
    };
    let settings = config(ProviderConfig {
        base_url: Some("http://127.0.0.1:9/unused".into()),
        api_key: Some("sk-from-config".into()),
        ..ProviderConfig::default()
    });
    let configured = build_provider(ProviderKind::OpenAi, "gpt-4.1", &settings, &env).unwrap();
    assert_eq!((configured.model.provider.as_str(), configured.model.model.as_str()), ("openai", "gpt-4.1"));
    configured.provider.stream(&hello_request("gpt-4.1"), &IgnoreEvents).await.unwrap();
    assert_eq!(server.requests()[0].header("authorization"), Some("Bearer sk-from-env"));
}

#[tokio::test]
async fn ollama_needs_no_key_and_sends_none() {
    let server = TestServer::start(vec![server::sse(&fixture("ollama_tool_call.sse"))]).await;
    let settings =
        config(ProviderConfig { base_url: Some(format!("{}/v1", server.base)), ..ProviderConfig::default() });
    let configured =
        build_provider(ProviderKind::Ollama, "qwen3:8b", &settings, &env_of(&[("OPENAI_API_KEY", "sk-x")])).unwrap();
    configured.provider.stream(&hello_request("qwen3:8b"), &IgnoreEvents).await.unwrap();
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), None, "an OpenAI key must not leak to a local server");
}

#[tokio::test]
async fn openrouter_sends_the_configured_pin_and_key() {
    let server = TestServer::start(vec![server::sse(&fixture("openrouter_reasoning.sse"))]).await;
    let pin = ProviderPin { order: vec!["deepinfra/fp8".into()], allow_fallbacks: false };
    let settings =
        config(ProviderConfig { base_url: Some(server.base.clone()), pin: Some(pin), ..ProviderConfig::default() });
    let configured = build_provider(
        ProviderKind::OpenRouter,
        "qwen/qwen3-coder",
        &settings,
        &env_of(&[("OPENROUTER_API_KEY", "sk-or")]),
    )
    .unwrap();
    configured.provider.stream(&hello_request("qwen/qwen3-coder"), &IgnoreEvents).await.unwrap();
    let request = &server.requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer sk-or"));
    assert_eq!(request.json()["provider"], serde_json::json!({"order": ["deepinfra/fp8"], "allow_fallbacks": false}));
}

#[test]
fn provider_config_reads_camel_case_and_refuses_unknown_keys() {
    let config: ProviderConfig = serde_json::from_str(
        r#"{"baseUrl": "http://127.0.0.1:8000/v1", "apiKeyEnv": "VLLM_API_KEY", "pin": {"order": ["a"]}}"#,
    )
    .unwrap();
    assert_eq!(config.api_key_env.as_deref(), Some("VLLM_API_KEY"));
    assert_eq!(config.pin, Some(ProviderPin { order: vec!["a".into()], allow_fallbacks: false }));
    let error = serde_json::from_str::<ProviderConfig>(r#"{"base_url": "x"}"#).unwrap_err();
    assert!(error.to_string().starts_with("unknown field `base_url`"), "{error}");
}
