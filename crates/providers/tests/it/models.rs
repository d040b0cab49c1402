//! Model lists, as `/model NAME` checks a name against them: Anthropic's
//! `GET /v1/models` page by page, an OpenAI-compatible server's
//! `GET {baseUrl}/models`, errors classified, and none for the scripted
//! provider. And which providers are sent pictures.

use seri_providers::{ErrorKind, ProviderConfig, ProviderKind, Settings, build_provider};

use crate::server::{self, TestServer};

fn settings(base_url: &str) -> Settings {
    Settings {
        config: ProviderConfig { base_url: Some(base_url.to_owned()), ..ProviderConfig::default() },
        ..Settings::default()
    }
}

fn key(name: &str) -> Option<String> {
    matches!(name, "ANTHROPIC_API_KEY" | "OPENAI_API_KEY").then(|| "sk-test".to_owned())
}

#[tokio::test]
async fn anthropic_lists_every_page_of_its_models() {
    // Anthropic's documented shape: `data`, `has_more`, `first_id`, `last_id`.
    let first = r#"{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"},{"type":"model","id":"claude-opus-4-1","display_name":"Claude Opus 4.1","created_at":"2025-08-05T00:00:00Z"}],"has_more":true,"first_id":"claude-sonnet-4-5","last_id":"claude-opus-4-1"}"#;
    let second = r#"{"data":[{"type":"model","id":"claude-haiku-4-5","display_name":"Claude Haiku 4.5","created_at":"2025-10-01T00:00:00Z"}],"has_more":false,"first_id":"claude-haiku-4-5","last_id":"claude-haiku-4-5"}"#;
    let server = TestServer::start(vec![server::json_200(first), server::json_200(second)]).await;
    let configured =
        build_provider(ProviderKind::Anthropic, "claude-sonnet-4-5", &settings(&server.base), &key).unwrap();
    let models = configured.provider.models().await.unwrap().unwrap();
    assert_eq!(models, ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"]);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!((requests[0].method.as_str(), requests[0].path.as_str()), ("GET", "/v1/models?limit=1000"));
    assert_eq!(requests[1].path, "/v1/models?limit=1000&after_id=claude-opus-4-1");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-test"));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    assert!(configured.provider.takes_images());
}

#[tokio::test]
async fn an_openai_compatible_server_lists_its_models_with_the_key() {
    let listing = r#"{"object":"list","data":[{"id":"gpt-4.1","object":"model","created":1744316542,"owned_by":"system"},{"id":"gpt-4.1-mini","object":"model","created":1744318173,"owned_by":"system"}]}"#;
    let server = TestServer::start(vec![server::json_200(listing)]).await;
    let base = format!("{}/v1", server.base);
    let configured = build_provider(ProviderKind::OpenAi, "gpt-4.1", &settings(&base), &key).unwrap();
    assert_eq!(configured.provider.models().await.unwrap().unwrap(), ["gpt-4.1", "gpt-4.1-mini"]);
    let request = &server.requests()[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("GET", "/v1/models"));
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert!(configured.provider.takes_images());
}

#[tokio::test]
async fn a_refused_listing_is_a_classified_error_and_the_script_has_no_list() {
    let refused = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let server = TestServer::start(vec![server::status(401, "Unauthorized", &[], refused)]).await;
    let configured =
        build_provider(ProviderKind::Anthropic, "claude-sonnet-4-5", &settings(&server.base), &key).unwrap();
    let error = configured.provider.models().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth, "{error}");
    assert!(error.to_string().contains("invalid x-api-key"), "{error}");
    // A listing without a `data` list is said to be one.
    let server = TestServer::start(vec![server::json_200(r#"{"models":[]}"#)]).await;
    let local = build_provider(ProviderKind::OpenAiCompatible, "m", &settings(&server.base), &key).unwrap();
    let error = local.provider.models().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::MalformedResponse, "{error}");

    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), r#"{"turns": []}"#).unwrap();
    let scripted = Settings { script: Some(script.path().to_owned()), ..Settings::default() };
    let configured = build_provider(ProviderKind::Script, "", &scripted, &key).unwrap();
    assert_eq!(configured.provider.models().await.unwrap(), None);
}

#[test]
fn local_servers_are_sent_no_pictures_unless_their_configuration_says_so() {
    let taking = |kind: ProviderKind, images: Option<bool>| {
        let settings = Settings {
            config: ProviderConfig { images, ..settings("http://127.0.0.1:1/v1").config },
            ..Settings::default()
        };
        build_provider(kind, "m", &settings, &key).unwrap().provider.takes_images()
    };
    assert!(taking(ProviderKind::OpenAi, None));
    assert!(taking(ProviderKind::Anthropic, None));
    assert!(!taking(ProviderKind::Ollama, None));
    assert!(!taking(ProviderKind::OpenAiCompatible, None));
    assert!(taking(ProviderKind::OpenAiCompatible, Some(true)));
    assert!(!taking(ProviderKind::OpenAi, Some(false)));
}
