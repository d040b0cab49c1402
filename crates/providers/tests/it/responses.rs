//! OpenAI's Responses API against local servers replaying its documented
//! stream shapes: text, a tool call round trip whose encrypted reasoning is
//! carried to the next request, usage, overflow, rate limits and failures.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use seri_core::{Thinking, Usage};
use seri_providers::openai::{OpenAiDialect, OpenAiResponses};
use seri_providers::retry::Retrying;
use seri_providers::{
    ErrorKind, HttpOptions, IgnoreEvents, ModelRequest, ModelResponse, OpenAiApi, Provider, ProviderConfig,
    ProviderError, ProviderKind, ReasoningEffort, RequestMessage, Settings, StopReason, StreamEvent, ToolSpec,
    build_provider,
};

use crate::server::{self, Reply, TestServer};
use crate::support::{
    channel, drain, fixture, hello_request, recording_sleeper, representative_request, test_policy, text_deltas,
};

fn provider(server: &TestServer) -> OpenAiResponses {
    let base = format!("{}/v1", server.base);
    OpenAiResponses::new("openai", &base, Some("sk-test".into()), OpenAiDialect::openai(), HttpOptions::default())
        .unwrap()
}

async fn call_once(reply: Reply) -> Result<ModelResponse, ProviderError> {
    let server = TestServer::start(vec![reply]).await;
    provider(&server).stream(&hello_request("gpt-4.1"), &IgnoreEvents).await
}

/// A request that offers `read` and asks a reasoning model to fix a file.
fn fix_request() -> ModelRequest {
    let mut request = ModelRequest::new("gpt-5", "You are seri.");
    request.tools = vec![ToolSpec {
        name: "read".into(),
        description: "Read a file.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }]
    .into();
    request.reasoning = Some(ReasoningEffort::Medium);
    request.messages.push(RequestMessage::user("Fix src/ü.rs"));
    request
}

#[tokio::test]
async fn text_streams_as_deltas_and_usage_comes_from_response_completed() {
    let server = TestServer::start(vec![server::sse(&fixture("responses_text.sse"))]).await;
    let (sink, mut events) = channel();
    let response = provider(&server).stream(&hello_request("gpt-4.1"), &sink).await.unwrap();
    assert_eq!(response.text, "Hello wörld!");
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    // 2006 input tokens of which 1920 were cached.
    assert_eq!(response.usage, Some(Usage { input: 86, cache_read: 1920, cache_write: 0, output: 300 }));
    assert_eq!(text_deltas(&drain(&mut events)), ["Hello", " wörld", "!"]);

    let request = &server.requests()[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/responses"));
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    let body = request.json();
    assert_eq!((body["store"].clone(), body["stream"].clone()), (json!(false), json!(true)));
    assert_eq!(body["instructions"], json!("Be brief."));
    assert_eq!(
        body["input"],
        json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Say hello."}]}])
    );
}

#[tokio::test]
async fn a_tool_call_round_trip_carries_the_encrypted_reasoning_to_the_next_request() {
    let server = TestServer::start(vec![
        server::sse(&fixture("responses_reasoning_tool_call.sse")),
        server::sse(&fixture("responses_text.sse")),
    ])
    .await;
    let provider = provider(&server);
    let mut request = fix_request();
    let (sink, mut events) = channel();
    let first = provider.stream(&request, &sink).await.unwrap();

    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(
        first.thinking,
        [Thinking {
            text: "**Reading the file**\n\nI need a.rs before I can fix it.\n\n**Calling read**".into(),
            signature: None,
            encrypted_content: Some("gAAAAABor0AzQ3xkAbVrKnXx2a8mLh0J5Qh1o8sSg6vFkV9mZk2c8n3hR1w==".into()),
        }]
    );
    let calls: Vec<(&str, &str, serde_json::Value)> =
        first.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone())).collect();
    assert_eq!(calls, [("call_Zj5tjtwDBLqZ8Gm6gO2mkY2W", "read", json!({"path": "src/ü.rs"}))]);
    assert_eq!(first.usage, Some(Usage { input: 512, cache_read: 0, cache_write: 0, output: 141 }));
    let streamed = drain(&mut events);
    assert!(
        streamed.contains(&StreamEvent::ToolCallStarted {
            id: "call_Zj5tjtwDBLqZ8Gm6gO2mkY2W".into(),
            name: "read".into()
        })
    );
    assert!(streamed.contains(&StreamEvent::ThinkingDelta("**Calling read**".into())));

    let body = server.requests()[0].json();
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["reasoning"], json!({"effort": "medium", "summary": "auto"}));
    assert_eq!(
        body["tools"],
        json!([{
            "type": "function", "name": "read", "description": "Read a file.", "strict": false,
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        }])
    );

    // The next request repeats the turn as the run loop builds it: the
    // reasoning item (encrypted, without its id) before the call it led to.
    request.messages.push(RequestMessage::Assistant(first.to_assistant_turn()));
    request.messages.push(RequestMessage::tool_result("call_Zj5tjtwDBLqZ8Gm6gO2mkY2W", "read", "fn main() {}", false));
    let second = provider.stream(&request, &IgnoreEvents).await.unwrap();
    assert_eq!(second.text, "Hello wörld!");

    let body = server.requests()[1].json();
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix src/ü.rs"}]},
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "**Reading the file**\n\nI need a.rs before I can fix it.\n\n**Calling read**"}],
                "encrypted_content": "gAAAAABor0AzQ3xkAbVrKnXx2a8mLh0J5Qh1o8sSg6vFkV9mZk2c8n3hR1w==",
            },
            {"type": "function_call", "call_id": "call_Zj5tjtwDBLqZ8Gm6gO2mkY2W", "name": "read", "arguments": "{\"path\":\"src/ü.rs\"}"},
            {"type": "function_call_output", "call_id": "call_Zj5tjtwDBLqZ8Gm6gO2mkY2W", "output": "fn main() {}"},
        ])
    );
    assert_eq!(body["store"], json!(false));
}

#[tokio::test]
async fn the_same_answer_comes_out_however_the_bytes_arrive() {
    let whole = call_once(server::sse(&fixture("responses_reasoning_tool_call.sse"))).await.unwrap();
    let pieces = call_once(server::sse_in_pieces(&fixture("responses_reasoning_tool_call.sse"), 7)).await.unwrap();
    assert_eq!(whole, pieces);
}

#[tokio::test]
async fn items_that_never_streamed_are_read_from_their_done_event() {
    let stream = [
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}]}}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a.rs\"}"}}),
        json!({"type": "response.completed", "response": {"status": "completed", "usage": null}}),
    ]
    .iter()
    .map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap()))
    .collect::<String>();
    let response = call_once(server::sse(&stream)).await.unwrap();
    assert_eq!(response.text, "Reading it.");
    assert_eq!(response.tool_calls[0].arguments, json!({"path": "a.rs"}));
    assert_eq!(response.usage, None, "no usage reported is unknown, not zero");
}

#[tokio::test]
async fn overflow_in_the_stream_and_in_the_status_is_a_context_overflow() {
    let error = call_once(server::sse(&fixture("responses_failed_overflow.sse"))).await.unwrap_err();
    assert_eq!((error.kind, error.status), (ErrorKind::ContextOverflow, None), "{error}");
    assert_eq!(
        error.message,
        "Your input exceeds the context window of this model. Please adjust your input and try again."
    );

    let body = r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#;
    let error = call_once(server::status(400, "Bad Request", &[], body)).await.unwrap_err();
    assert_eq!((error.kind, error.status), (ErrorKind::ContextOverflow, Some(400)));
}

#[tokio::test]
async fn a_rate_limit_waits_as_long_as_the_server_says() {
    let body = r#"{"error":{"message":"Rate limit reached for gpt-5 in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 512.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#;
    let server = TestServer::start(vec![
        server::status(429, "Too Many Requests", &[("retry-after", "7")], body),
        server::sse(&fixture("responses_text.sse")),
    ])
    .await;
    let (recorded, sleeper) = recording_sleeper();
    let retrying = Retrying::new(Arc::new(provider(&server)), test_policy(), sleeper);
    let response = retrying.stream(&hello_request("gpt-5"), &IgnoreEvents).await.unwrap();
    assert_eq!(response.text, "Hello wörld!");
    assert_eq!(recorded.delays(), [Duration::from_secs(7)]);

    // In the stream, the wait is only in the message's words.
    let failed = r#"{"type":"response.failed","sequence_number":3,"response":{"id":"resp_689bcf18d7f08194bf3440ba62fe05d803fee0cdac429894","object":"response","created_at":1755041560,"status":"failed","background":false,"error":{"code":"rate_limit_exceeded","message":"Rate limit reached for gpt-5.1 in organization org-AAA on tokens per min (TPM): Limit 30000, Used 22999, Requested 12528. Please try again in 11.054s. Visit https://platform.openai.com/account/rate-limits to learn more."},"usage":null,"user":null,"metadata":{}}}"#;
    let error = call_once(server::sse(&format!("event: response.failed\ndata: {failed}\n\n"))).await.unwrap_err();
    assert_eq!((error.kind, error.retry_after), (ErrorKind::RateLimited, Some(Duration::from_millis(11_054))));
}

#[tokio::test]
async fn error_events_in_either_shape_fail_the_call() {
    // As documented: the fields at the top level.
    let documented =
        r#"{"type":"error","code":"ERR_SOMETHING","message":"Something went wrong","param":null,"sequence_number":1}"#;
    // As sent: the fields in an `error` object.
    let sent = r#"{"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":null,"message":"There was an issue with your request. Please check your inputs and try again","param":null}}"#;
    for (data, message) in [
        (documented, "Something went wrong"),
        (sent, "There was an issue with your request. Please check your inputs and try again"),
    ] {
        let error = call_once(server::sse(&format!("event: error\ndata: {data}\n\n"))).await.unwrap_err();
        assert_eq!((error.kind, error.message.as_str()), (ErrorKind::Server, message));
    }
}

#[tokio::test]
async fn a_stream_that_ends_before_response_completed_is_a_network_error() {
    let stream = fixture("responses_text.sse");
    let early = &stream[..stream.find("event: response.completed").unwrap()];
    let error = call_once(server::sse_until_close(early)).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Network);
    assert_eq!(error.message, "the stream ended before `response.completed`: the connection dropped");
}

#[tokio::test]
async fn an_incomplete_response_stops_for_its_reason() {
    let stream = fixture("responses_text.sse").replace(
        r#""type":"response.completed","sequence_number":10,"response":{"id":"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654","object":"response","created_at":1741290958,"status":"completed","error":null,"incomplete_details":null"#,
        r#""type":"response.incomplete","sequence_number":10,"response":{"id":"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654","object":"response","created_at":1741290958,"status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens"}"#,
    );
    assert!(stream.contains("response.incomplete"));
    let response = call_once(server::sse(&stream)).await.unwrap();
    assert_eq!((response.text.as_str(), response.stop_reason), ("Hello wörld!", StopReason::MaxTokens));
}

#[tokio::test]
async fn wire_body_responses() {
    let server = TestServer::start(vec![server::sse(&fixture("responses_text.sse"))]).await;
    let mut request = representative_request("gpt-5");
    // Reasoning this API can carry: the representative turn's is Anthropic's.
    if let RequestMessage::Assistant(turn) = &mut request.messages[1] {
        turn.thinking.push(Thinking {
            text: "**Both files**".into(),
            signature: None,
            encrypted_content: Some("gAAAAB-encrypted".into()),
        });
    }
    provider(&server).stream(&request, &IgnoreEvents).await.unwrap();
    insta::assert_json_snapshot!("responses_wire_body", server.requests()[0].json());
}

#[tokio::test]
async fn the_configuration_chooses_the_responses_api_per_provider() {
    let server = TestServer::start(vec![server::sse(&fixture("responses_text.sse"))]).await;
    let settings = Settings {
        config: ProviderConfig {
            base_url: Some(format!("{}/v1", server.base)),
            api: Some(OpenAiApi::Responses),
            ..ProviderConfig::default()
        },
        ..Settings::default()
    };
    let no_env = |_: &str| None;
    let configured = build_provider(ProviderKind::OpenAiCompatible, "gpt-oss-20b", &settings, &no_env).unwrap();
    let response = configured.provider.stream(&hello_request("gpt-oss-20b"), &IgnoreEvents).await.unwrap();
    assert_eq!(response.text, "Hello wörld!");
    assert_eq!(server.requests()[0].path, "/v1/responses");

    let config: ProviderConfig = serde_json::from_value(json!({"api": "responses"})).unwrap();
    assert_eq!(config.api, Some(OpenAiApi::Responses));
    let config: ProviderConfig = serde_json::from_value(json!({"api": "chat-completions"})).unwrap();
    assert_eq!(config.api, Some(OpenAiApi::ChatCompletions));
    let wrong = serde_json::from_value::<ProviderConfig>(json!({"api": "assistants"})).unwrap_err();
    assert!(wrong.to_string().contains("expected `chat-completions` or `responses`"), "{wrong}");

    let anthropic = Settings {
        config: ProviderConfig { api: Some(OpenAiApi::Responses), ..ProviderConfig::default() },
        ..Settings::default()
    };
    let error = build_provider(ProviderKind::Anthropic, "claude-sonnet-4-5", &anthropic, &no_env).err().unwrap();
    assert_eq!(
        error.to_string(),
        "`api: \"responses\"` only applies to OpenAI-compatible providers, not to `anthropic`"
    );
}
