//! The OpenAI-compatible provider against local servers replaying OpenAI's,
//! OpenRouter's, Ollama's and vLLM's stream formats and error bodies.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use seri_core::Usage;
use seri_providers::openai::{OpenAiCompatible, OpenAiDialect, ProviderPin};
use seri_providers::retry::Retrying;
use seri_providers::{
    ErrorKind, HttpOptions, IgnoreEvents, ModelResponse, Provider, ProviderError, StopReason, StreamEvent,
};

use crate::server::{self, Reply, TestServer};
use crate::support::{
    channel, drain, fixture, hello_request, recording_sleeper, representative_request, test_policy, text_deltas,
};

fn provider(server: &TestServer, name: &str, dialect: OpenAiDialect) -> OpenAiCompatible {
    let base = format!("{}/v1", server.base);
    OpenAiCompatible::new(name, &base, Some("sk-test".into()), dialect, HttpOptions::default()).unwrap()
}

/// Serves `reply` once and returns the outcome of one call.
async fn call_once(reply: Reply) -> Result<ModelResponse, ProviderError> {
    let server = TestServer::start(vec![reply]).await;
    provider(&server, "openai", OpenAiDialect::openai()).stream(&hello_request("gpt-4.1"), &IgnoreEvents).await
}

#[tokio::test]
async fn text_streams_as_deltas_and_usage_comes_from_the_last_chunk() {
    let server = TestServer::start(vec![server::sse(&fixture("openai_text.sse"))]).await;
    let (sink, mut events) = channel();
    let response =
        provider(&server, "openai", OpenAiDialect::openai()).stream(&hello_request("gpt-4.1"), &sink).await.unwrap();
    assert_eq!(response.text, "Hello wörld!");
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    // 2006 prompt tokens of which 1920 were cached.
    assert_eq!(response.usage, Some(Usage { input: 86, cache_read: 1920, cache_write: 0, output: 300 }));
    assert_eq!(text_deltas(&drain(&mut events)), ["Hello", " wörld", "!"]);

    let request = &server.requests()[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.json()["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn interleaved_tool_calls_assemble_from_split_arguments_however_the_bytes_arrive() {
    for reply in
        [server::sse(&fixture("openai_tool_calls.sse")), server::sse_in_pieces(&fixture("openai_tool_calls.sse"), 7)]
    {
        let server = TestServer::start(vec![reply]).await;
        let (sink, mut events) = channel();
        let response = provider(&server, "openai", OpenAiDialect::openai())
            .stream(&hello_request("gpt-4.1"), &sink)
            .await
            .unwrap();
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        let calls: Vec<(String, String, serde_json::Value)> =
            response.tool_calls.iter().map(|c| (c.id.to_string(), c.name.clone(), c.arguments.clone())).collect();
        assert_eq!(
            calls,
            [
                ("call_DdmO9pD3xa9XTPNJ32zg2hcA".into(), "read".into(), json!({"path": "src/ü.rs"})),
                ("call_ABCDEF0123456789abcdefgh".into(), "plan".into(), json!({"steps": ["read", "fix"]})),
            ]
        );
        assert_eq!(response.usage, Some(Usage { input: 512, cache_read: 0, cache_write: 0, output: 41 }));
        let announced: Vec<StreamEvent> =
            drain(&mut events).into_iter().filter(|e| matches!(e, StreamEvent::ToolCallStarted { .. })).collect();
        assert_eq!(
            announced,
            [
                StreamEvent::ToolCallStarted { id: "call_DdmO9pD3xa9XTPNJ32zg2hcA".into(), name: "read".into() },
                StreamEvent::ToolCallStarted { id: "call_ABCDEF0123456789abcdefgh".into(), name: "plan".into() },
            ]
        );
    }
}

#[tokio::test]
async fn reasoning_deltas_from_vllm_openrouter_and_ollama() {
    let cases = [
        (
            "vllm_reasoning.sse",
            "The user wants a greeting.",
            "Hi there.",
            Usage { input: 31, output: 14, ..Usage::default() },
        ),
        (
            "openrouter_reasoning.sse",
            "Short answer.",
            "Done.",
            Usage { input: 176, cache_read: 1024, output: 9, ..Usage::default() },
        ),
        ("ollama_tool_call.sse", "I should read the file.", "", Usage { input: 220, output: 31, ..Usage::default() }),
    ];
    for (name, thinking, text, usage) in cases {
        let response = call_once(server::sse(&fixture(name))).await.unwrap();
        assert_eq!(response.thinking.len(), 1, "{name}");
        assert_eq!(response.thinking[0].text, thinking, "{name}");
        assert_eq!(response.thinking[0].signature, None, "{name}");
        assert_eq!(response.text, text, "{name}");
        assert_eq!(response.usage, Some(usage), "{name}");
    }
    let ollama = call_once(server::sse(&fixture("ollama_tool_call.sse"))).await.unwrap();
    assert_eq!(ollama.tool_calls[0].arguments, json!({"path": "a.rs"}));
}

#[tokio::test]
async fn a_server_that_omits_tool_call_indexes_still_separates_calls() {
    let response = call_once(server::sse(&fixture("no_index_tool_calls.sse"))).await.unwrap();
    let args: Vec<serde_json::Value> = response.tool_calls.iter().map(|c| c.arguments.clone()).collect();
    assert_eq!(args, [json!({"path": "a.rs"}), json!({"path": "b.rs"})]);
}

#[tokio::test]
async fn each_servers_overflow_body_is_a_context_overflow() {
    let bodies = [
        r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140213 tokens (132021 of text input, 8192 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}"#,
        r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5012 tokens (4012 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
        r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#,
    ];
    for body in bodies {
        let error = call_once(server::status(400, "Bad Request", &[], body)).await.unwrap_err();
        assert_eq!((error.kind, error.status), (ErrorKind::ContextOverflow, Some(400)), "{body}");
    }
}

#[tokio::test]
async fn auth_failure_names_the_provider_and_its_message() {
    let body = r#"{"error":{"message":"Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
    let error = call_once(server::status(401, "Unauthorized", &[], body)).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(
        error.to_string().starts_with("openai: authentication failed (HTTP 401): Incorrect API key provided"),
        "{error}"
    );
}

#[tokio::test]
async fn rate_limit_and_server_errors_carry_their_status_and_wait() {
    let body = r#"{"error":{"message":"Rate limit reached for gpt-4.1 in organization org-x on requests per min (RPM): Limit 500, Used 500, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
    let error = call_once(server::status(429, "Too Many Requests", &[("retry-after", "7")], body)).await.unwrap_err();
    assert_eq!((error.kind, error.retry_after), (ErrorKind::RateLimited, Some(Duration::from_secs(7))));
    let error =
        call_once(server::status(429, "Too Many Requests", &[("retry-after-ms", "250"), ("retry-after", "1")], body))
            .await
            .unwrap_err();
    assert_eq!(error.retry_after, Some(Duration::from_millis(250)), "retry-after-ms is the more precise of the two");
    let error = call_once(server::status(500, "Internal Server Error", &[], "upstream failed")).await.unwrap_err();
    assert_eq!((error.kind, error.status, error.message.as_str()), (ErrorKind::Server, Some(500), "upstream failed"));
}

#[tokio::test]
async fn a_connection_cut_mid_stream_is_a_network_error_after_partial_deltas() {
    let stream = fixture("openai_text.sse");
    let cut = stream.find(" wörld").unwrap() + 20;
    let server = TestServer::start(vec![server::sse_cut_at(&stream, cut)]).await;
    let (sink, mut events) = channel();
    let error = provider(&server, "openai", OpenAiDialect::openai())
        .stream(&hello_request("gpt-4.1"), &sink)
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Network, "{error}");
    assert!(error.message.starts_with("the stream was cut after"), "{error}");
    // The deltas that arrived were delivered, but no response was returned.
    assert_eq!(text_deltas(&drain(&mut events)), ["Hello"]);
}

#[tokio::test]
async fn a_stream_closed_before_done_is_a_network_error() {
    let stream = fixture("openai_text.sse");
    let early = &stream[..stream.find("data: [DONE]").unwrap()];
    let error = call_once(server::sse_until_close(early)).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Network);
    assert_eq!(error.message, "the stream ended before `data: [DONE]`: the connection dropped");
}

#[tokio::test]
async fn malformed_sse_and_wrong_content_types_are_malformed_responses() {
    let error = call_once(server::sse("data: {\"choices\": [{\"delta\": {\"content\": \"a\"}\n\n")).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::MalformedResponse);
    assert!(error.message.starts_with("unreadable stream event (EOF while parsing"), "{error}");

    let error = call_once(server::sse("data: {\"choices\": \"many\"}\n\n")).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::MalformedResponse, "{error}");

    let error = call_once(server::json_200(r#"{"choices":[]}"#)).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::MalformedResponse);
    assert!(error.message.contains("expected an event stream"), "{error}");
}

#[tokio::test]
async fn broken_tool_call_arguments_are_a_malformed_response_naming_the_call() {
    let stream = fixture("openai_tool_calls.sse").replace(r#"\"fix\"]}"#, r#"\"fix\""#);
    let error = call_once(server::sse(&stream)).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::MalformedResponse);
    assert!(
        error.message.starts_with("arguments of tool call call_ABCDEF0123456789abcdefgh (plan) are not valid JSON"),
        "{error}"
    );
}

#[tokio::test]
async fn an_error_chunk_mid_stream_fails_the_call_classified() {
    let error = call_once(server::sse(&fixture("openrouter_error_mid_stream.sse"))).await.unwrap_err();
    assert_eq!((error.kind, error.message.as_str()), (ErrorKind::Server, "Provider disconnected unexpectedly"));
}

#[tokio::test]
async fn retried_cut_streams_report_the_retry_and_return_only_the_complete_answer() {
    let stream = fixture("openai_text.sse");
    let cut = stream.find(" wörld").unwrap() + 20;
    let server = TestServer::start(vec![server::sse_cut_at(&stream, cut), server::sse(&stream)]).await;
    let (recorded, sleeper) = recording_sleeper();
    let retrying =
        Retrying::new(Arc::new(provider(&server, "openai", OpenAiDialect::openai())), test_policy(), sleeper);
    let (sink, mut events) = channel();
    let response = retrying.stream(&hello_request("gpt-4.1"), &sink).await.unwrap();
    assert_eq!(response.text, "Hello wörld!");
    let events = drain(&mut events);
    let retry_at = events.iter().position(|e| matches!(e, StreamEvent::Retrying(_))).unwrap();
    assert_eq!(text_deltas(&events[..retry_at]), ["Hello"], "the void attempt's deltas come before the notice");
    assert_eq!(text_deltas(&events[retry_at..]), ["Hello", " wörld", "!"]);
    assert_eq!(recorded.delays(), [Duration::from_secs(1)]);
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn wire_body_openai() {
    let server = TestServer::start(vec![server::sse(&fixture("openai_text.sse"))]).await;
    provider(&server, "openai", OpenAiDialect::openai())
        .stream(&representative_request("gpt-4.1"), &IgnoreEvents)
        .await
        .unwrap();
    let body = server.requests()[0].json();
    insta::assert_json_snapshot!("openai_wire_body", body);
}

#[tokio::test]
async fn wire_body_openrouter_with_provider_pin() {
    let server = TestServer::start(vec![server::sse(&fixture("openai_text.sse"))]).await;
    let pin = ProviderPin { order: vec!["anthropic".into(), "amazon-bedrock".into()], allow_fallbacks: false };
    let provider = provider(&server, "openrouter", OpenAiDialect::openrouter(Some(pin)));
    provider.stream(&representative_request("anthropic/claude-sonnet-4.5"), &IgnoreEvents).await.unwrap();
    let body = server.requests()[0].json();
    assert_eq!(body["provider"], json!({"order": ["anthropic", "amazon-bedrock"], "allow_fallbacks": false}));
    insta::assert_json_snapshot!("openrouter_wire_body", body);
}

#[tokio::test]
async fn wire_body_local_server() {
    let server = TestServer::start(vec![server::sse(&fixture("openai_text.sse"))]).await;
    let provider = provider(&server, "ollama", OpenAiDialect::local());
    provider.stream(&representative_request("qwen3:8b"), &IgnoreEvents).await.unwrap();
    let body = server.requests()[0].json();
    assert_eq!((body["max_tokens"].clone(), body["top_k"].clone()), (json!(16000), json!(40)));
    assert_eq!(body["reasoning_effort"], json!("medium"));
    insta::assert_json_snapshot!("local_server_wire_body", body);
}

fn with_limits(server: &TestServer, http: HttpOptions) -> OpenAiCompatible {
    let base = format!("{}/v1", server.base);
    OpenAiCompatible::new("openai", &base, Some("sk-test".into()), OpenAiDialect::openai(), http).unwrap()
}

#[tokio::test]
async fn a_stream_of_keep_alives_alone_is_a_stalled_stream_and_retryable() {
    // Bounded: 40 comments, 20 ms apart; the limit is 150 ms of no event.
    let pings = ": keep-alive\n\n".repeat(40);
    let server = TestServer::start(vec![server::sse(&pings).paced(Duration::from_millis(20))]).await;
    let http = HttpOptions { event_idle_timeout: Duration::from_millis(150), ..HttpOptions::default() };
    let err = with_limits(&server, http).stream(&hello_request("gpt-4.1"), &IgnoreEvents).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Network);
    assert!(err.kind.is_retryable());
    assert_eq!(err.message, "no event arrived for 150 ms (keep-alives do not count): the stream is stalled");
}

#[tokio::test]
async fn a_request_past_its_total_limit_is_stopped_however_lively_its_stream() {
    let chunk = r#"data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}"#;
    let stream = format!("{chunk}\n\n").repeat(60);
    let server = TestServer::start(vec![server::sse(&stream).paced(Duration::from_millis(20))]).await;
    let http = HttpOptions { request_timeout: Duration::from_millis(300), ..HttpOptions::default() };
    let err = with_limits(&server, http).stream(&hello_request("gpt-4.1"), &IgnoreEvents).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Network);
    assert!(
        err.message.starts_with("the request took longer than its limit of 300 ms; it was stopped after "),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn an_event_past_the_size_cap_is_a_retryable_error() {
    let big = format!("data: {}\n\n", "x".repeat(4096));
    let server = TestServer::start(vec![server::sse(&big)]).await;
    let http = HttpOptions { max_event_bytes: 1024, ..HttpOptions::default() };
    let err = with_limits(&server, http).stream(&hello_request("gpt-4.1"), &IgnoreEvents).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Network);
    assert_eq!(err.message, "one event of the stream grew past 1024 bytes without ending");
}
