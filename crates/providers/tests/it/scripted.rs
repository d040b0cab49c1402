//! The scripted provider's contract (`seri --provider script --script FILE`),
//! through the factory exactly as the CLI builds it.

use std::path::{Path, PathBuf};

use serde_json::json;
use seri_core::Usage;
use seri_providers::{
    ErrorKind, IgnoreEvents, ProviderKind, Settings, SettingsError, StopReason, StreamEvent, build_provider,
};

use crate::support::{channel, drain, hello_request, recording_sleeper, test_policy, text_deltas};

fn write_script(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("script.json");
    std::fs::write(&path, text).unwrap();
    path
}

fn settings(script: PathBuf) -> Settings {
    let (_, sleeper) = recording_sleeper();
    Settings { script: Some(script), retry: test_policy(), sleeper, ..Settings::default() }
}

fn no_env(_: &str) -> Option<String> {
    None
}

#[tokio::test]
async fn turns_replay_in_order_streaming_text_in_several_deltas() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(
        dir.path(),
        r#"{"turns": [
            {"thinking": "Look first.", "text": "I will read the file now.",
             "tool_calls": [{"id": "call_1", "name": "read", "arguments": {"path": "a.rs"}}],
             "usage": {"input": 100, "cache_read": 900, "cache_write": 50, "output": 20}},
            {"text": "Done."}
        ]}"#,
    );
    let configured = build_provider(ProviderKind::Script, "", &settings(path), &no_env).unwrap();
    assert_eq!((configured.model.provider.as_str(), configured.model.model.as_str()), ("script", "scripted"));

    let (sink, mut events) = channel();
    let first = configured.provider.stream(&hello_request("scripted"), &sink).await.unwrap();
    assert_eq!(first.text, "I will read the file now.");
    assert_eq!(first.thinking[0].text, "Look first.");
    assert_eq!(first.tool_calls[0].arguments, json!({"path": "a.rs"}));
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(first.usage, Some(Usage { input: 100, cache_read: 900, cache_write: 50, output: 20 }));
    let events = drain(&mut events);
    let deltas = text_deltas(&events);
    assert!(deltas.len() > 1, "streamed in several deltas: {deltas:?}");
    assert_eq!(deltas.concat(), "I will read the file now.");
    assert!(matches!(events.last(), Some(StreamEvent::ToolCallReady(call)) if call.id.as_str() == "call_1"));

    let second = configured.provider.stream(&hello_request("scripted"), &IgnoreEvents).await.unwrap();
    assert_eq!(
        (second.text.as_str(), second.stop_reason, second.usage),
        // A turn without `usage` reports none: unknown, not zero.
        ("Done.", StopReason::EndTurn, None)
    );
}

#[tokio::test]
async fn every_error_kind_replays_as_its_provider_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(
        dir.path(),
        r#"{"turns": [
            {"error": {"kind": "context_overflow", "message": "prompt is too long: 9 tokens > 8 maximum"}},
            {"error": {"kind": "auth"}}
        ]}"#,
    );
    let configured = build_provider(ProviderKind::Script, "", &settings(path.clone()), &no_env).unwrap();
    let error = configured.provider.stream(&hello_request("s"), &IgnoreEvents).await.unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ErrorKind::ContextOverflow, "prompt is too long: 9 tokens > 8 maximum")
    );
    let error = configured.provider.stream(&hello_request("s"), &IgnoreEvents).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert_eq!(error.message, format!("scripted authentication failed (turn 2 of {})", path.display()));
}

#[tokio::test]
async fn retried_kinds_consume_the_next_turn_and_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(
        dir.path(),
        r#"{"turns": [{"error": {"kind": "rate_limit"}}, {"error": {"kind": "server"}}, {"text": "ok"}]}"#,
    );
    let (sleeper_log, sleeper) = recording_sleeper();
    let settings = Settings { sleeper, ..settings(path) };
    let configured = build_provider(ProviderKind::Script, "", &settings, &no_env).unwrap();
    let (sink, mut events) = channel();
    let response = configured.provider.stream(&hello_request("s"), &sink).await.unwrap();
    assert_eq!(response.text, "ok");
    let retried: Vec<ErrorKind> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying(notice) => Some(notice.error.kind),
            _ => None,
        })
        .collect();
    assert_eq!(retried, [ErrorKind::RateLimited, ErrorKind::Server]);
    // Replayed errors are retried without waiting.
    assert!(sleeper_log.delays().iter().all(|d| d.is_zero()));
}

#[tokio::test]
async fn a_script_that_runs_out_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(dir.path(), r#"{"turns": [{"text": "only one"}]}"#);
    let configured = build_provider(ProviderKind::Script, "", &settings(path.clone()), &no_env).unwrap();
    configured.provider.stream(&hello_request("s"), &IgnoreEvents).await.unwrap();
    let error = configured.provider.stream(&hello_request("s"), &IgnoreEvents).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::ScriptExhausted);
    assert_eq!(
        error.to_string(),
        format!(
            "script: script exhausted: script {} has no turn left for request 2: all 1 turns were used",
            path.display()
        )
    );
}

#[test]
fn a_malformed_script_fails_the_build_naming_file_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(dir.path(), r#"{"turns": [{"text": "a"}, {"usage": {"input": "many"}}]}"#);
    let error = build_provider(ProviderKind::Script, "", &settings(path.clone()), &no_env).err().unwrap();
    assert!(matches!(error, SettingsError::Script(_)));
    assert_eq!(
        error.to_string(),
        format!(
            "script {} is malformed at turns[1].usage.input: invalid type: string \"many\", expected u64 at line 1 column 52",
            path.display()
        )
    );

    let missing = dir.path().join("missing.json");
    let error = build_provider(ProviderKind::Script, "", &settings(missing.clone()), &no_env).err().unwrap();
    assert!(error.to_string().starts_with(&format!("cannot read script {}: ", missing.display())), "{error}");

    let error = build_provider(ProviderKind::Script, "", &Settings::default(), &no_env).err().unwrap();
    assert_eq!(error.to_string(), "the `script` provider needs a script file: pass --script FILE");
}

#[tokio::test]
async fn children_take_the_child_scripts_in_the_order_they_are_started_and_log_and_retry_alike() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(
        dir.path(),
        r#"{"turns": [{"text": "parent"}], "children": [
            {"turns": [{"error": {"kind": "server"}}, {"text": "first child"}]},
            {"turns": [{"text": "second child"}]}
        ]}"#,
    );
    let log = dir.path().join("requests.jsonl");
    let settings = Settings { request_log: Some(log.clone()), ..settings(path.clone()) };
    let configured = build_provider(ProviderKind::Script, "", &settings, &no_env).unwrap();
    let first = configured.provider.child_provider().unwrap();
    let second = configured.provider.child_provider().unwrap();
    let third = configured.provider.child_provider().unwrap();
    // Whatever order they ask in, each child replays its own script.
    assert_eq!(second.stream(&hello_request("s"), &IgnoreEvents).await.unwrap().text, "second child");
    assert_eq!(first.stream(&hello_request("s"), &IgnoreEvents).await.unwrap().text, "first child", "retried");
    assert_eq!(configured.provider.stream(&hello_request("s"), &IgnoreEvents).await.unwrap().text, "parent");
    let error = third.stream(&hello_request("s"), &IgnoreEvents).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::ScriptExhausted);
    assert_eq!(
        error.message,
        format!("script {} has no script for child run 3: its `children` list has 2", path.display())
    );
    let exhausted = first.stream(&hello_request("s"), &IgnoreEvents).await.unwrap_err();
    assert_eq!(
        exhausted.message,
        format!("script {} (children[0]) has no turn left for request 3: all 2 turns were used", path.display())
    );
    let logged = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(logged, 6, "every request, the children's and the retry's included, is logged");
}

#[tokio::test]
async fn without_a_children_list_children_share_the_turns() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(dir.path(), r#"{"turns": [{"text": "one"}, {"text": "two"}]}"#);
    let configured = build_provider(ProviderKind::Script, "", &settings(path), &no_env).unwrap();
    assert!(configured.provider.child_provider().is_none());
}
