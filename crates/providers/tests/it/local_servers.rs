//! What local model servers (llama.cpp and llama-cpp-python, Ollama, vLLM,
//! LM Studio) need beyond OpenAI's own shapes, replayed from their
//! documented answers by a server on 127.0.0.1.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use seri_core::{ToolCall, ToolCallId};
use seri_providers::openai::{OpenAiCompatible, OpenAiDialect};
use seri_providers::retry::Retrying;
use seri_providers::{
    AssistantTurn, ErrorKind, HttpOptions, IgnoreEvents, ModelRequest, Provider, RequestMessage, ServerWindow,
    WindowSource, detect_window,
};

use crate::server::{self, Reply, TestServer};
use crate::support::{fixture, hello_request, recording_sleeper, test_policy};

fn local(server: &TestServer) -> OpenAiCompatible {
    let base = format!("{}/v1", server.base);
    OpenAiCompatible::new("openai-compatible", &base, None, OpenAiDialect::local(), HttpOptions::default()).unwrap()
}

/// A turn that only called a tool, then its result.
fn tool_call_only_request() -> ModelRequest {
    let mut request = ModelRequest::new("smollm2", "Be brief.");
    request.messages = vec![
        RequestMessage::user("What is in notes.txt?"),
        RequestMessage::Assistant(AssistantTurn {
            thinking: Vec::new(),
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: ToolCallId("call_1".into()),
                name: "read".into(),
                arguments: json!({"path": "notes.txt"}),
            }],
        }),
        RequestMessage::tool_result("call_1", "read", "buy milk", false),
    ];
    request
}

#[tokio::test]
async fn a_tool_call_only_turn_carries_empty_content_to_local_servers_and_null_to_openai() {
    // llama-cpp-python's server refuses `"content": null` with a 500
    // ("Input should be a valid string"); every local server takes "".
    let server = TestServer::start(vec![server::sse(&fixture("openai_text.sse"))]).await;
    local(&server).stream(&tool_call_only_request(), &IgnoreEvents).await.unwrap();
    let body = server.requests()[0].json();
    assert_eq!(body["messages"][2]["content"], json!(""));
    insta::assert_json_snapshot!("local_server_tool_call_turn_wire_body", body["messages"]);

    let server = TestServer::start(vec![server::sse(&fixture("openai_text.sse"))]).await;
    let base = format!("{}/v1", server.base);
    let openai = OpenAiCompatible::new("openai", &base, None, OpenAiDialect::openai(), HttpOptions::default()).unwrap();
    openai.stream(&tool_call_only_request(), &IgnoreEvents).await.unwrap();
    assert_eq!(server.requests()[0].json()["messages"][2]["content"], Value::Null);
}

/// An empty `200` event stream: headers, then the connection closes.
fn empty_stream() -> Reply {
    server::sse_until_close("")
}

#[tokio::test]
async fn an_empty_stream_after_a_request_over_the_window_is_an_overflow_and_not_retried() {
    // llama-cpp-python fails an oversized prompt after sending its headers.
    let server = TestServer::start(vec![empty_stream()]).await;
    let mut request = hello_request("smollm2");
    request.messages.push(RequestMessage::user("hello ".repeat(3000)));
    request.context_window = Some(2048);
    let (recorded, sleeper) = recording_sleeper();
    let retrying = Retrying::new(Arc::new(local(&server)), test_policy(), sleeper);
    let error = retrying.stream(&request, &IgnoreEvents).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::ContextOverflow);
    assert!(error.message.contains("more than its 2048-token context window"), "{}", error.message);
    assert!(recorded.delays().is_empty());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn an_empty_stream_after_a_request_that_fits_is_still_a_network_fault() {
    for window in [None, Some(2048)] {
        let server = TestServer::start(vec![empty_stream()]).await;
        let mut request = hello_request("smollm2");
        request.context_window = window;
        let error = local(&server).stream(&request, &IgnoreEvents).await.unwrap_err();
        assert_eq!(error.kind, ErrorKind::Network, "window {window:?}");
    }
}

/// Answers that say "not here" for the probes a server does not have.
fn not_found() -> Reply {
    server::status(404, "Not Found", &[], r#"{"error":"not found"}"#)
}

#[track_caller]
fn check_window(found: Option<ServerWindow>, tokens: u64, source: WindowSource) {
    assert_eq!(found, Some(ServerWindow { tokens, source }));
}

#[tokio::test]
async fn the_window_comes_from_ollama_vllm_and_lm_studio() {
    let timeout = Duration::from_secs(10);
    // Ollama: no /props, then /api/show with `num_ctx` in its parameters.
    let ollama = TestServer::start(vec![not_found(), server::json_200(&fixture("ollama_api_show.json"))]).await;
    let found = detect_window(&format!("{}/v1", ollama.base), "llama3.2", None, timeout).await;
    check_window(found, 8192, WindowSource::OllamaShow);
    let show = &ollama.requests()[1];
    assert_eq!((show.method.as_str(), show.path.as_str()), ("POST", "/api/show"));
    assert_eq!(show.json(), json!({"model": "llama3.2"}));

    // LM Studio: its own model endpoint, the loaded context length.
    let lm = TestServer::start(vec![not_found(), not_found(), server::json_200(&fixture("lmstudio_model.json"))]).await;
    let found = detect_window(&format!("{}/v1", lm.base), "qwen2.5-7b-instruct", None, timeout).await;
    check_window(found, 4096, WindowSource::LmStudioModel);
    assert_eq!(lm.requests()[2].path, "/api/v0/models/qwen2.5-7b-instruct");

    // vLLM: only the listing, `max_model_len`; its key is sent.
    let vllm =
        TestServer::start(vec![not_found(), not_found(), not_found(), server::json_200(&fixture("vllm_models.json"))])
            .await;
    let found = detect_window(&format!("{}/v1", vllm.base), "Qwen/Qwen2.5-7B-Instruct", Some("k"), timeout).await;
    check_window(found, 16384, WindowSource::ModelListing);
    assert_eq!(vllm.requests()[3].path, "/v1/models");
    assert_eq!(vllm.requests()[3].header("authorization"), Some("Bearer k"));

    // A server that answers none of them: no window, nothing guessed.
    let none = TestServer::start(vec![not_found(), not_found(), not_found(), not_found()]).await;
    assert_eq!(detect_window(&format!("{}/v1", none.base), "m", None, timeout).await, None);
}

#[tokio::test]
async fn a_stream_without_usage_reports_none_not_zero() {
    // llama-cpp-python ignores `stream_options.include_usage`.
    let server = TestServer::start(vec![server::sse(&fixture("llama_cpp_python_no_usage.sse"))]).await;
    let response = local(&server).stream(&hello_request("smollm2"), &IgnoreEvents).await.unwrap();
    assert_eq!((response.text.as_str(), response.usage), ("Hello", None));
    assert_eq!(server.requests()[0].json()["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn a_server_out_of_reach_has_no_window() {
    // A port nothing listens on: no window, and no error either.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let found = detect_window(&format!("http://127.0.0.1:{port}/v1"), "m", None, Duration::from_secs(10)).await;
    assert_eq!(found, None);
}
