//! `SERI_REQUEST_LOG`: one JSON line per request sent, the same shape for
//! every provider.

use std::path::Path;

use serde_json::Value;
use seri_providers::{ErrorKind, IgnoreEvents, ProviderConfig, ProviderKind, Settings, build_provider};

use crate::server::{self, TestServer};
use crate::support::{fixture, hello_request, recording_sleeper, representative_request, test_policy};

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn logged_settings(dir: &Path) -> Settings {
    let script = dir.join("script.json");
    std::fs::write(
        &script,
        r#"{"turns": [{"error": {"kind": "server"}}, {"text": "a"}, {"error": {"kind": "auth"}}]}"#,
    )
    .unwrap();
    let (_, sleeper) = recording_sleeper();
    Settings {
        script: Some(script),
        request_log: Some(dir.join("requests.jsonl")),
        retry: test_policy(),
        sleeper,
        ..Settings::default()
    }
}

#[tokio::test]
async fn every_request_sent_is_one_line_retries_and_failures_included() {
    let dir = tempfile::tempdir().unwrap();
    let settings = logged_settings(dir.path());
    let configured = build_provider(ProviderKind::Script, "", &settings, &|_| None).unwrap();
    // Attempt 1 fails (server), attempt 2 answers: two requests sent.
    configured.provider.stream(&representative_request("scripted"), &IgnoreEvents).await.unwrap();
    // Fails with auth, not retried: one more request sent.
    configured.provider.stream(&hello_request("scripted"), &IgnoreEvents).await.unwrap_err();

    let lines = read_lines(&dir.path().join("requests.jsonl"));
    assert_eq!(lines.len(), 3);
    for line in &lines {
        let mut keys: Vec<&str> = line.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["messages", "model", "provider", "system", "tools"]);
    }
    assert_eq!(lines[0], lines[1], "a retry sends, and logs, the same request");
    insta::assert_json_snapshot!("request_log_line", lines[0]);
}

#[tokio::test]
async fn an_http_provider_logs_the_same_shape() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(vec![server::sse(&fixture("openai_text.sse"))]).await;
    let settings = Settings {
        config: ProviderConfig { base_url: Some(server.base.clone()), ..ProviderConfig::default() },
        request_log: Some(dir.path().join("requests.jsonl")),
        ..Settings::default()
    };
    let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-test".to_owned());
    let configured = build_provider(ProviderKind::OpenAi, "gpt-4.1", &settings, &env).unwrap();
    let request = representative_request("gpt-4.1");
    configured.provider.stream(&request, &IgnoreEvents).await.unwrap();

    let lines = read_lines(&dir.path().join("requests.jsonl"));
    let expected: Value = serde_json::from_str(&seri_providers::RequestLog::line("openai", &request)).unwrap();
    assert_eq!(lines, [expected]);
    assert_eq!(lines[0]["provider"], "openai");
}

#[tokio::test]
async fn an_unwritable_log_fails_the_request_clearly_without_retrying() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings { request_log: Some(dir.path().to_owned()), ..logged_settings(dir.path()) };
    let configured = build_provider(ProviderKind::Script, "", &settings, &|_| None).unwrap();
    let error = configured.provider.stream(&hello_request("scripted"), &IgnoreEvents).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::RequestLog);
    assert!(
        error
            .message
            .starts_with(&format!("could not append to the request log {} (SERI_REQUEST_LOG): ", dir.path().display())),
        "{error}"
    );
}
