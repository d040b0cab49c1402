//! `/context`: what fills a session's next request, part by part. The
//! request is built exactly as the next turn would build it (working
//! context from the newest recap on, the frozen system prompt and tools,
//! the per-turn blocks), then each part is measured with the runtime's own
//! estimate: characters over the model's learned characters per token
//! (4 until a provider billed a request; see `seri_core::tokens`), rounded up.

use seri_core::tokens::CharsPerToken;
use seri_core::{RunId, SessionId};
use seri_providers::ModelRequest;
use seri_providers::request_size::request_parts;
use seri_tools::{RunContext, RunKind, RunRef};

use super::Runtime;
use crate::error::RunError;

/// One part of a request and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextPart {
    /// What it is: `system prompt`, `tools`, `messages`, …
    pub name: &'static str,
    /// How many items it holds (tools, messages, calls).
    pub items: u64,
    /// Its estimated size in tokens.
    pub tokens: u64,
}

/// What fills a session's next request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextReport {
    /// The parts, in the order the request holds them.
    pub parts: Vec<ContextPart>,
    /// Their estimated total.
    pub estimated: u64,
    /// The characters per token they were estimated at: the model's
    /// learned ratio, or the default four.
    pub chars_per_token: CharsPerToken,
    /// The prompt size the provider billed for the newest answer, if any.
    pub measured: Option<u64>,
    /// The context window.
    pub window: u64,
}

/// The parts of `request`, measured at `ratio` characters per token.
pub fn measure(request: &ModelRequest, ratio: CharsPerToken) -> Vec<ContextPart> {
    request_parts(request)
        .into_iter()
        .map(|p| ContextPart { name: p.name, items: p.items, tokens: ratio.tokens(p.chars) })
        .collect()
}

impl Runtime {
    /// What the next request of `session` would hold, by part.
    pub fn context_report(&self, session: SessionId) -> Result<ContextReport, RunError> {
        let run_ctx = RunContext {
            session_id: session,
            agent_id: self.inner.agent.clone(),
            strategy: self.inner.settings.strategy,
            // The next turn a person's message starts: an interactive run.
            run: Some(RunRef { id: RunId::from_bytes([0; 16]), kind: RunKind::Interactive, parked_children: 0 }),
        };
        let info = self.inner.store.agent(&self.inner.agent).info(session)?;
        let context = self.working_context(session)?;
        let ratio = context.ratio(&self.session_model(&info));
        let request = self.build_request(&run_ctx, &info, context)?;
        let parts = measure(&request, ratio);
        let estimated = parts.iter().map(|p| p.tokens).sum();
        Ok(ContextReport {
            parts,
            estimated,
            chars_per_token: ratio,
            measured: info.last_usage.map(|u| u.prompt_tokens()),
            window: self.session_context_window(&info),
        })
    }
}

#[cfg(test)]
mod tests {
    use seri_providers::{AssistantTurn, RequestMessage, ToolSpec};

    use super::*;

    #[test]
    fn each_part_is_counted_where_the_request_holds_it() {
        let mut request = ModelRequest::new("m", "You are seri.".repeat(10));
        request.tools =
            vec![ToolSpec { name: "read".into(), description: "Reads.".into(), input_schema: serde_json::json!({}) }]
                .into();
        request.messages = vec![
            RequestMessage::user("Fix the build."),
            RequestMessage::Assistant(AssistantTurn {
                text: "Looking.".into(),
                tool_calls: vec![seri_core::ToolCall {
                    id: seri_core::ToolCallId("c1".into()),
                    name: "read".into(),
                    arguments: serde_json::json!({"target": "Cargo.toml"}),
                }],
                ..AssistantTurn::default()
            }),
            RequestMessage::tool_result("c1", "read", "[package]\nname = \"x\"", false),
            RequestMessage::user("<session_status>…</session_status>"),
        ];
        let parts: Vec<String> = measure(&request, CharsPerToken::DEFAULT)
            .iter()
            .map(|p| format!("{} ×{}: {}", p.name, p.items, p.tokens))
            .collect();
        insta::assert_snapshot!(parts.join("\n"), @r"
        system prompt ×1: 33
        tools ×1: 15
        messages (yours, recaps, projections) ×1: 10
        the model's answers ×1: 2
        tool calls ×1: 16
        tool results ×1: 18
        per-turn blocks ×1: 9
        ");
    }
}
