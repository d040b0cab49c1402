//! The OpenAI-compatible provider against a real llama.cpp `llama-server`
//! running SmolLM2-135M-Instruct with a 2048-token window, started by each
//! test on 127.0.0.1.
//!
//! `cargo xtask llama` builds the server and fetches the model (`cargo
//! xtask ci` does it first and sets the paths): `SERI_TEST_LLAMA_SERVER` and
//! `SERI_TEST_LLAMA_MODEL`. Without them a test says so and passes, unless
//! `SERI_REQUIRE_LLAMA=1`, which makes a missing one a failure.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use seri_core::{ToolCall, ToolCallId};
use seri_providers::openai::{OpenAiCompatible, OpenAiDialect};
use seri_providers::retry::Retrying;
use seri_providers::{
    AssistantTurn, ErrorKind, HttpOptions, IgnoreEvents, ModelRequest, Provider, RequestMessage, ToolSpec,
    WindowSource, detect_window,
};

use seri_core::tokens::CharsPerToken;
use seri_providers::request_size::request_chars;

use crate::support::{recording_sleeper, test_policy};

/// The window every test starts the server with.
const WINDOW: u64 = 2048;

/// A `llama-server` child process, killed when dropped.
struct LlamaServer {
    child: Child,
    base: String,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LlamaServer {
    /// A server on a free loopback port, once it answers `/health`; `None`
    /// (the test then passes, saying why) when no server was set up.
    #[allow(clippy::print_stderr, reason = "the note says why the test did nothing")]
    async fn start() -> Option<LlamaServer> {
        let server = std::env::var_os("SERI_TEST_LLAMA_SERVER").filter(|v| !v.is_empty());
        let model = std::env::var_os("SERI_TEST_LLAMA_MODEL").filter(|v| !v.is_empty());
        let (Some(server), Some(model)) = (server, model) else {
            let required = std::env::var_os("SERI_REQUIRE_LLAMA").is_some_and(|v| v == "1");
            assert!(
                !required,
                "SERI_REQUIRE_LLAMA=1 but SERI_TEST_LLAMA_SERVER or SERI_TEST_LLAMA_MODEL is not set: run `cargo xtask llama`"
            );
            eprintln!("skipped: no llama-server (run `cargo xtask llama` and set SERI_TEST_LLAMA_SERVER/_MODEL)");
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(server)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-c", &WINDOW.to_string()])
            // One slot: the whole window is one conversation's, and two
            // threads leave the other core to the test.
            .args(["--parallel", "1", "--threads", "2", "--no-webui"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let running = LlamaServer { child, base: format!("http://127.0.0.1:{port}") };
        // reqwest is built without a crypto provider of its own: a client
        // made before any provider installed ring would panic, so whether
        // this test passed hung on which test of the binary ran first.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        // Loading a 98 MB model takes a second or two; the bound only stops
        // a server that never comes up from hanging the suite.
        for _ in 0..600 {
            if let Ok(response) = client.get(format!("{}/health", running.base)).send().await
                && response.status().is_success()
            {
                return Some(running);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("llama-server did not answer /health within a minute");
    }

    fn provider(&self) -> OpenAiCompatible {
        let base = format!("{}/v1", self.base);
        OpenAiCompatible::new("openai-compatible", &base, None, OpenAiDialect::local(), HttpOptions::default()).unwrap()
    }
}

/// A short answer, so a test costs a few tokens of generation.
fn short(mut request: ModelRequest) -> ModelRequest {
    request.max_output_tokens = Some(8);
    request.sampling.temperature = Some(0.0);
    request.sampling.seed = Some(1);
    request.context_window = Some(WINDOW);
    request
}

/// A history as the scripted provider records it: a turn that only called
/// a tool (no text), its result, and the person's next message.
fn history_with_tool_calls() -> ModelRequest {
    let mut request = ModelRequest::new("smollm2", "You are a helpful assistant.");
    request.tools = vec![ToolSpec {
        name: "read".into(),
        description: "Read a file.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }]
    .into();
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
        RequestMessage::user("Thanks. Say it in one word."),
    ];
    short(request)
}

#[tokio::test]
async fn a_history_with_tool_calls_is_answered() {
    let Some(server) = LlamaServer::start().await else { return };
    let response = server.provider().stream(&history_with_tool_calls(), &IgnoreEvents).await.unwrap();
    assert!(!response.text.is_empty() || !response.tool_calls.is_empty(), "an empty answer: {response:?}");
    // llama-server reports usage in the last chunk.
    assert!(response.usage.is_some_and(|u| u.input > 0), "{:?}", response.usage);
}

#[tokio::test]
async fn a_request_over_the_window_is_an_overflow_and_not_retried() {
    let Some(server) = LlamaServer::start().await else { return };
    let mut request = ModelRequest::new("smollm2", "Be brief.");
    // About 3000 tokens: well past the 2048 window.
    request.messages.push(RequestMessage::user("hello ".repeat(3000)));
    let (recorded, sleeper) = recording_sleeper();
    let retrying = Retrying::new(Arc::new(server.provider()), test_policy(), sleeper);
    let error = retrying.stream(&short(request), &IgnoreEvents).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::ContextOverflow, "{error}");
    assert!(error.message.contains("2048"), "the message names the window: {}", error.message);
    assert!(recorded.delays().is_empty(), "an overflow is never retried");
}

#[tokio::test]
async fn the_window_is_read_from_props() {
    let Some(server) = LlamaServer::start().await else { return };
    let base = format!("{}/v1", server.base);
    let window = detect_window(&base, "smollm2", None, Duration::from_secs(10)).await.unwrap();
    assert_eq!((window.tokens, window.source), (WINDOW, WindowSource::LlamaCppProps));
}

/// The first `n` characters of `text`.
fn prefix(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

/// A first turn as seri sends it (a long system prompt of prose and code,
/// tool schemas, a question), and the second that follows it (a call, a
/// result of JSON, the next question): the estimate learns the model's
/// characters per token from the first bill and estimates the second
/// request within 10% of what llama-server bills for it, where the fixed
/// four characters per token runs more than 10% low.
#[tokio::test]
async fn the_estimate_learned_from_the_first_bill_is_within_ten_percent_of_the_next() {
    let Some(server) = LlamaServer::start().await else { return };
    let provider = server.provider();
    // Prose, code and JSON, as seri's system prompt and tools hold them.
    let system = [
        prefix(include_str!("../../../../ARCHITECTURE.md"), 900),
        prefix(include_str!("../../src/sse.rs"), 900),
        prefix(include_str!("fixtures/vllm_reasoning.sse"), 700),
    ]
    .join("\n\n");
    let mut request = ModelRequest::new("smollm2", system);
    request.tools = vec![
        ToolSpec {
            name: "read".into(),
            description: "Read a file of the workspace.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        },
        ToolSpec {
            name: "bash".into(),
            description: "Run a shell command in the workspace.".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        },
    ].into();
    request.messages.push(RequestMessage::user("What does assemble.rs do?"));
    let request = short(request);
    let first = provider.stream(&request, &IgnoreEvents).await.unwrap();
    let billed = first.usage.expect("llama-server reports usage").prompt_tokens();
    let ratio = CharsPerToken::from_billed(request_chars(&request), billed).unwrap();

    let mut next = request.clone();
    next.messages.push(RequestMessage::Assistant(AssistantTurn {
        thinking: Vec::new(),
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: ToolCallId("call_1".into()),
            name: "read".into(),
            arguments: json!({"path": "crates/providers/src/assemble.rs"}),
        }],
    }));
    next.messages.push(RequestMessage::tool_result(
        "call_1",
        "read",
        // A file of code and JSON, a third the size of the first request.
        prefix(include_str!("../../src/assemble.rs"), 500)
            + &prefix(include_str!("fixtures/openai_tool_calls.sse"), 500),
        false,
    ));
    next.messages.push(RequestMessage::user("Thanks. In one sentence: what is it for?"));
    let estimate = ratio.tokens(request_chars(&next));
    let fixed = CharsPerToken::DEFAULT.tokens(request_chars(&next));
    let billed_next = provider.stream(&next, &IgnoreEvents).await.unwrap().usage.unwrap().prompt_tokens();
    let off = estimate.abs_diff(billed_next) * 100 / billed_next;
    assert!(
        off <= 10,
        "learned {} chars/token from {billed} billed tokens; estimated {estimate} for {billed_next} billed ({off}% off; \
         at 4 chars/token: {fixed})",
        ratio.milli() as f64 / 1000.0
    );
    assert!(fixed * 100 < billed_next * 90, "the fixed ratio runs more than 10% low here: {fixed} for {billed_next}");
}
