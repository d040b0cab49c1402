//! The Anthropic provider against a local server replaying the Messages
//! API's stream events and error bodies.

use std::time::Duration;

use serde_json::json;
use seri_core::{Thinking, Usage};
use seri_providers::anthropic::{ANTHROPIC_VERSION, Anthropic};
use seri_providers::{
    ErrorKind, HttpOptions, IgnoreEvents, ModelResponse, Provider, ProviderError, StopReason, StreamEvent,
};

use crate::server::{self, Reply, TestServer};
use crate::support::{channel, drain, fixture, hello_request, representative_request, text_deltas};

fn provider(server: &TestServer) -> Anthropic {
    Anthropic::new(&server.base, "sk-ant-test".into(), HttpOptions::default()).unwrap()
}

async fn call_once(reply: Reply) -> Result<ModelResponse, ProviderError> {
    let server = TestServer::start(vec![reply]).await;
    provider(&server).stream(&hello_request("claude-sonnet-4-5"), &IgnoreEvents).await
}

#[tokio::test]
async fn thinking_text_and_tool_use_stream_and_assemble() {
    let server = TestServer::start(vec![server::sse(&fixture("anthropic_thinking_tool_use.sse"))]).await;
    let (sink, mut events) = channel();
    let response = provider(&server).stream(&hello_request("claude-sonnet-4-5"), &sink).await.unwrap();
    assert_eq!(
        response.thinking,
        [Thinking {
            text: "The user wants a.rs fixed; read it first.".into(),
            signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into()),
            encrypted_content: None,
        }]
    );
    assert_eq!(response.text, "Let me read the file.");
    let calls: Vec<(&str, &str, serde_json::Value)> =
        response.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone())).collect();
    assert_eq!(
        calls,
        [
            ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "read", json!({"path": "src/a.rs"})),
            ("toolu_01CGrWwqpSQbkb8Dv4DrGqLt", "status", json!({})),
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.usage, Some(Usage { input: 472, cache_read: 12000, cache_write: 1803, output: 89 }));

    let events = drain(&mut events);
    let thinking: Vec<&StreamEvent> = events.iter().filter(|e| matches!(e, StreamEvent::ThinkingDelta(_))).collect();
    assert_eq!(thinking.len(), 2);
    assert_eq!(text_deltas(&events), ["Let me read ", "the file."]);
    assert!(matches!(events.last(), Some(StreamEvent::ToolCallReady(call)) if call.name == "status"));

    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.header("anthropic-version"), Some(ANTHROPIC_VERSION));
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test]
async fn the_stream_reads_the_same_in_small_pieces() {
    let whole = call_once(server::sse(&fixture("anthropic_thinking_tool_use.sse"))).await.unwrap();
    let pieces = call_once(server::sse_in_pieces(&fixture("anthropic_thinking_tool_use.sse"), 5)).await.unwrap();
    assert_eq!(whole, pieces);
}

#[tokio::test]
async fn text_only_usage_without_cache_fields() {
    let response = call_once(server::sse(&fixture("anthropic_text.sse"))).await.unwrap();
    assert_eq!((response.text.as_str(), response.stop_reason), ("Hello!", StopReason::EndTurn));
    assert_eq!(response.usage, Some(Usage { input: 25, cache_read: 0, cache_write: 0, output: 15 }));
}

#[tokio::test]
async fn prompt_too_long_is_a_context_overflow() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}"#;
    let error = call_once(server::status(400, "Bad Request", &[("request-id", "req_011CSHoEeqs5C35K2UUqR7Fy")], body))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::ContextOverflow);
    assert_eq!(
        error.to_string(),
        "anthropic: context overflow (HTTP 400): prompt is too long: 208310 tokens > 200000 maximum"
    );
}

#[tokio::test]
async fn overloaded_rate_limited_and_unauthorized() {
    let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":null}"#;
    let error = call_once(server::status(529, "Overloaded", &[], overloaded)).await.unwrap_err();
    assert_eq!((error.kind, error.status), (ErrorKind::Server, Some(529)));

    let limited = r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 requests per minute."}}"#;
    let error =
        call_once(server::status(429, "Too Many Requests", &[("retry-after", "12")], limited)).await.unwrap_err();
    assert_eq!((error.kind, error.retry_after), (ErrorKind::RateLimited, Some(Duration::from_secs(12))));

    let auth = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let error = call_once(server::status(401, "Unauthorized", &[], auth)).await.unwrap_err();
    assert_eq!((error.kind, error.message.as_str()), (ErrorKind::Auth, "invalid x-api-key"));
}

#[tokio::test]
async fn an_error_event_mid_stream_is_classified() {
    let error = call_once(server::sse(&fixture("anthropic_overloaded_mid_stream.sse"))).await.unwrap_err();
    assert_eq!((error.kind, error.message.as_str()), (ErrorKind::Server, "Overloaded"));
}

#[tokio::test]
async fn a_cut_stream_or_one_without_message_stop_returns_no_response() {
    let stream = fixture("anthropic_thinking_tool_use.sse");
    let cut = stream.find("input_json_delta").unwrap();
    let error = call_once(server::sse_cut_at(&stream, cut)).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Network, "{error}");

    let early = &stream[..stream.find("event: message_stop").unwrap()];
    let error = call_once(server::sse_until_close(early)).await.unwrap_err();
    assert_eq!(error.message, "the stream ended before `message_stop`: the connection dropped");
}

#[tokio::test]
async fn malformed_events_are_malformed_responses() {
    let error =
        call_once(server::sse("event: message_start\ndata: {\"type\": \"message_start\"\n\n")).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::MalformedResponse);
    let error =
        call_once(server::sse("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{}}\n\n"))
            .await
            .unwrap_err();
    assert_eq!(error.kind, ErrorKind::MalformedResponse, "{error}");
}

#[tokio::test]
async fn unknown_event_types_are_skipped() {
    let stream = fixture("anthropic_text.sse").replacen(
        "event: ping",
        "event: future_event\ndata: {\"type\":\"future_event\",\"x\":1}\n\nevent: ping",
        1,
    );
    let response = call_once(server::sse(&stream)).await.unwrap();
    assert_eq!(response.text, "Hello!");
}

#[tokio::test]
async fn wire_body_anthropic() {
    let server = TestServer::start(vec![server::sse(&fixture("anthropic_text.sse"))]).await;
    provider(&server).stream(&representative_request("claude-sonnet-4-5"), &IgnoreEvents).await.unwrap();
    let body = server.requests()[0].json();
    // Roles alternate: the two tool results and the per-turn blocks are one user message.
    let roles: Vec<&str> = body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    insta::assert_json_snapshot!("anthropic_wire_body", body);
}
