//! Streams one turn from the scripted provider and one from an
//! OpenAI-compatible server, through `seri-providers`' public API only.
//!
//! ```sh
//! cargo run -p seri-providers --example stream_turn
//! cargo run -p seri-providers --example stream_turn -- http://127.0.0.1:11434/v1 llama3.1:8b
//! ```
//!
//! With a base URL (and optionally a model id; `OPENAI_API_KEY` is sent as
//! the bearer token when set), the second half talks to that server: Ollama,
//! vLLM, llama.cpp, OpenRouter or OpenAI itself. Without one it stays
//! offline: it starts a tiny HTTP server on 127.0.0.1 that answers one
//! request in the OpenAI chat-completions SSE wire format, and prints what
//! the provider sent it.

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use std::io;

use seri_core::{ToolCall, Usage};
use seri_providers::openai::{OpenAiCompatible, OpenAiDialect};
use seri_providers::script::{Script, ScriptReply, ScriptTurn, ScriptedProvider};
use seri_providers::{HttpOptions, ModelRequest, ModelResponse, Provider, RequestMessage, StreamEvent, ToolSpec};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let base_url = args.next();
    let model = args.next().unwrap_or_else(|| "local-model".to_owned());

    // 1. The scripted provider: replays its turns whatever the request says.
    let script = Script::from_turns(
        "tour-script.json",
        vec![ScriptTurn::Reply(ScriptReply {
            text: "I will read the README first.".into(),
            thinking: Some("The user wants a summary; the README is the place to start.".into()),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: serde_json::json!({ "path": "README.md" }),
            }],
            usage: Some(Usage { input: 1_200, output: 40, ..Usage::default() }),
            ..ScriptReply::default()
        })],
    );
    let scripted = ScriptedProvider::new(script);
    println!("== scripted provider");
    let response = stream(&scripted, &request("scripted")).await?;
    summarize(&response);

    // 2. An OpenAI-compatible server: the one given, or our own on 127.0.0.1.
    let (provider, server) = match &base_url {
        Some(url) => {
            let key = seri_providers::process_env("OPENAI_API_KEY");
            (
                OpenAiCompatible::new("openai-compatible", url, key, OpenAiDialect::local(), HttpOptions::default())?,
                None,
            )
        }
        None => {
            let server = LocalServer::start().await?;
            let provider = OpenAiCompatible::new(
                "openai-compatible",
                &server.base,
                None,
                OpenAiDialect::local(),
                HttpOptions::default(),
            )?;
            (provider, Some(server))
        }
    };
    println!();
    println!("== OpenAI-compatible provider at {}", provider.endpoint());
    let response = stream(&provider, &request(&model)).await?;
    summarize(&response);
    if let Some(server) = server {
        let (path, body) = server.task.await??;
        let messages = body["messages"].as_array().map_or(0, Vec::len);
        println!(
            "the local server got POST {path}: model {}, stream {}, {messages} messages, {} tools",
            body["model"],
            body["stream"],
            body["tools"].as_array().map_or(0, Vec::len)
        );
    }
    Ok(())
}

/// A request the way the run loop builds one: system prompt, conversation,
/// cache breakpoint, per-turn blocks last.
fn request(model: &str) -> ModelRequest {
    let mut request = ModelRequest::new(model, "You are a concise coding assistant.");
    request.tools = vec![ToolSpec {
        name: "read_file".into(),
        description: "Reads a file of the working tree.".into(),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": { "path": { "type": "string" } },
            "required": ["path"],
        }),
    }]
    .into();
    request.messages.push(RequestMessage::user("Summarise README.md in one sentence."));
    request.mark_cache_breakpoint();
    request
        .messages
        .push(RequestMessage::user("<context_usage tokens=\"0\" window=\"32768\" percent=\"0\">…</context_usage>"));
    request.max_output_tokens = Some(256);
    request
}

/// Streams a request, printing each event as it arrives, and returns the
/// assembled response.
async fn stream(provider: &dyn Provider, request: &ModelRequest) -> Result<ModelResponse, Box<dyn std::error::Error>> {
    let (sink, mut events) = tokio::sync::mpsc::unbounded_channel();
    let printer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            match event {
                StreamEvent::TextDelta(text) => println!("  text delta      {text:?}"),
                StreamEvent::ThinkingDelta(text) => println!("  thinking delta  {text:?}"),
                StreamEvent::ToolCallStarted { id, name } => println!("  tool started    {name} ({id})"),
                StreamEvent::ToolCallReady(call) => println!("  tool ready      {} {}", call.name, call.arguments),
                StreamEvent::Retrying(notice) => println!("  retrying        {}", notice.error),
            }
        }
    });
    let response = provider.stream(request, &sink).await;
    drop(sink);
    printer.await?;
    Ok(response?)
}

fn summarize(response: &ModelResponse) {
    let calls: Vec<String> = response.tool_calls.iter().map(|c| format!("{}({})", c.name, c.arguments)).collect();
    println!(
        "response: {:?}, stop {}, calls [{}], usage {}",
        response.text,
        response.stop_reason.as_str(),
        calls.join(", "),
        match response.usage {
            Some(usage) => format!("prompt {} tokens, output {}", usage.prompt_tokens(), usage.output),
            None => "not reported".to_owned(),
        }
    );
}

/// A one-request HTTP/1.1 server on 127.0.0.1 that answers in the OpenAI
/// chat-completions stream format, and hands back the request it got.
struct LocalServer {
    base: String,
    task: JoinHandle<io::Result<(String, serde_json::Value)>>,
}

impl LocalServer {
    async fn start() -> io::Result<LocalServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}/v1", listener.local_addr()?);
        let task = tokio::spawn(async move {
            let (socket, _) = listener.accept().await?;
            serve_once(socket).await
        });
        Ok(LocalServer { base, task })
    }
}

async fn serve_once(mut socket: TcpStream) -> io::Result<(String, serde_json::Value)> {
    // The request: a head up to the blank line, then `content-length` bytes of JSON.
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the client closed before its request ended"));
        }
        received.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&received[..head_end]).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("?").to_owned();
    let length = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = received[head_end..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the client closed in the middle of its body"));
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let request: serde_json::Value = serde_json::from_slice(&body).map_err(io::Error::other)?;

    // The answer: `data:` events, each a chat.completion.chunk, then `[DONE]`.
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        serde_json::json!({
            "object": "chat.completion.chunk",
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        })
    };
    let call = |fields: serde_json::Value| serde_json::json!({ "tool_calls": [fields] });
    let events = [
        chunk(serde_json::json!({ "role": "assistant", "content": "" }), None),
        chunk(serde_json::json!({ "content": "Let me " }), None),
        chunk(serde_json::json!({ "content": "read it." }), None),
        chunk(
            call(serde_json::json!({ "index": 0, "id": "call_7", "type": "function",
                                      "function": { "name": "read_file", "arguments": "" } })),
            None,
        ),
        chunk(call(serde_json::json!({ "index": 0, "function": { "arguments": "{\"path\": " } })), None),
        chunk(call(serde_json::json!({ "index": 0, "function": { "arguments": "\"README.md\"}" } })), None),
        chunk(serde_json::json!({}), Some("tool_calls")),
        serde_json::json!({
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": { "prompt_tokens": 180, "completion_tokens": 21, "total_tokens": 201 },
        }),
    ];
    let mut stream: String = events.iter().map(|event| format!("data: {event}\n\n")).collect();
    stream.push_str("data: [DONE]\n\n");
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{stream}",
        stream.len()
    );
    socket.write_all(response.as_bytes()).await?;
    socket.shutdown().await?;
    Ok((path, request))
}
