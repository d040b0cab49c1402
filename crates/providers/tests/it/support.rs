//! Shared helpers: a representative request, a sink that collects events,
//! a sleeper that records delays instead of sleeping, and fixture loading.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use seri_core::{Thinking, ToolCall, ToolCallId};
use seri_providers::{
    AssistantTurn, ImageInput, ModelRequest, ReasoningEffort, RequestMessage, RetryPolicy, Sleeper, StreamEvent,
    ToolSpec,
};
use tokio::sync::mpsc;

/// The bytes of a fixture stream in `tests/it/fixtures/`.
pub(crate) fn fixture(name: &str) -> String {
    let path = format!("{}/tests/it/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A request with everything a provider must translate: a system prompt,
/// tools, an assistant turn with signed thinking, text and two tool calls,
/// both results (one an error), a cache breakpoint, and per-turn blocks.
pub(crate) fn representative_request(model: &str) -> ModelRequest {
    let mut request = ModelRequest::new(model, "You are seri, a careful coding agent.");
    request.tools = vec![
        ToolSpec {
            name: "read".into(),
            description: "Read a file.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        },
        ToolSpec {
            name: "status".into(),
            description: "Name the session.".into(),
            input_schema: json!({"type": "object", "properties": {}}),
        },
    ]
    .into();
    request.messages = vec![
        RequestMessage::User {
            text: "Fix the bug in a.rs; the panic is in this screenshot.\n[attachment:a1 \"panic.png\"]".into(),
            images: vec![ImageInput {
                attachment_id: "a1".into(),
                media_type: "image/png".into(),
                bytes: 8,
                data: b"\x89PNG\r\n\x1a\n".to_vec(),
            }],
        },
        RequestMessage::Assistant(AssistantTurn {
            thinking: vec![Thinking {
                text: "Read both files first.".into(),
                signature: Some("sig-1".into()),
                encrypted_content: None,
            }],
            text: "Reading the files.".into(),
            tool_calls: vec![
                ToolCall { id: ToolCallId("call_1".into()), name: "read".into(), arguments: json!({"path": "a.rs"}) },
                ToolCall { id: ToolCallId("call_2".into()), name: "read".into(), arguments: json!({"path": "b.rs"}) },
            ],
        }),
        RequestMessage::tool_result("call_1", "read", "fn main() {}", false),
        RequestMessage::tool_result("call_2", "read", "no such file: b.rs", true),
    ];
    request.mark_cache_breakpoint();
    request.messages.push(RequestMessage::user("<context_usage tokens=\"1200\" window=\"200000\" percent=\"1\"/>"));
    request.max_output_tokens = Some(16_000);
    request.reasoning = Some(ReasoningEffort::Medium);
    request.sampling.top_k = Some(40);
    request.sampling.seed = Some(7);
    request
}

/// A plain one-message request.
pub(crate) fn hello_request(model: &str) -> ModelRequest {
    let mut request = ModelRequest::new(model, "Be brief.");
    request.messages.push(RequestMessage::user("Say hello."));
    request
}

/// A channel sink and its receiving end.
pub(crate) fn channel() -> (mpsc::UnboundedSender<StreamEvent>, mpsc::UnboundedReceiver<StreamEvent>) {
    mpsc::unbounded_channel()
}

/// Everything the sink received so far.
pub(crate) fn drain(receiver: &mut mpsc::UnboundedReceiver<StreamEvent>) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    while let Ok(event) = receiver.try_recv() {
        events.push(event);
    }
    events
}

/// The text deltas among `events`.
pub(crate) fn text_deltas(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

/// Records each requested delay and returns at once.
#[derive(Default)]
pub(crate) struct RecordingSleeper {
    delays: Mutex<Vec<Duration>>,
}

impl RecordingSleeper {
    pub(crate) fn delays(&self) -> Vec<Duration> {
        self.delays.lock().unwrap().clone()
    }
}

#[async_trait]
impl Sleeper for RecordingSleeper {
    async fn sleep(&self, delay: Duration) {
        self.delays.lock().unwrap().push(delay);
    }
}

/// A sleeper to hand to a provider and the handle to read it back.
pub(crate) fn recording_sleeper() -> (Arc<RecordingSleeper>, Arc<dyn Sleeper>) {
    let sleeper = Arc::new(RecordingSleeper::default());
    (sleeper.clone(), sleeper)
}

/// Three attempts, 1 s then 2 s, waits capped at 30 s.
pub(crate) fn test_policy() -> RetryPolicy {
    RetryPolicy { max_attempts: 3, initial_delay: Duration::from_secs(1), max_delay: Duration::from_secs(30) }
}
