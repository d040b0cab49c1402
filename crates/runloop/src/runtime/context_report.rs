//! `/context`: what fills a session's next request, part by part. The
//! request is built exactly as the next turn would build it (working
//! context from the newest recap on, the frozen system prompt and tools,
//! the per-turn blocks), then each part is measured with the runtime's own
//! estimate: characters / 4, rounded up.

use seri_core::tokens::tokens_from_chars;
use seri_core::{RunId, SessionId};
use seri_providers::{ModelRequest, RequestMessage};
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
    /// The prompt size the provider billed for the newest answer, if any.
    pub measured: Option<u64>,
    /// The context window.
    pub window: u64,
}

fn chars(value: &impl serde::Serialize) -> u64 {
    serde_json::to_string(value).map(|s| s.chars().count() as u64).unwrap_or(0)
}

/// The parts of `request`, measured.
pub fn measure(request: &ModelRequest) -> Vec<ContextPart> {
    let mut system = ContextPart { name: "system prompt", items: 1, tokens: 0 };
    system.tokens = tokens_from_chars(request.system.chars().count() as u64);
    let tools = ContextPart {
        name: "tools",
        items: request.tools.len() as u64,
        tokens: tokens_from_chars(chars(&request.tools)),
    };
    let (mut messages, mut answers, mut calls, mut results, mut blocks) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut n_messages, mut n_answers, mut n_calls, mut n_results) = (0u64, 0u64, 0u64, 0u64);
    let last = request.messages.len().saturating_sub(1);
    for (i, message) in request.messages.iter().enumerate() {
        match message {
            RequestMessage::User { text, images } if i == last && images.is_empty() => {
                blocks += text.chars().count() as u64;
            }
            RequestMessage::User { .. } => {
                messages += chars(message);
                n_messages += 1;
            }
            RequestMessage::Assistant(turn) => {
                let said = turn.text.chars().count() as u64 + turn.thinking.iter().map(chars).sum::<u64>();
                if said > 0 {
                    answers += said;
                    n_answers += 1;
                }
                calls += turn.tool_calls.iter().map(chars).sum::<u64>();
                n_calls += turn.tool_calls.len() as u64;
            }
            RequestMessage::Tool(result) => {
                results += chars(result);
                n_results += 1;
            }
        }
    }
    let part = |name, items, chars| ContextPart { name, items, tokens: tokens_from_chars(chars) };
    vec![
        system,
        tools,
        part("messages (yours, recaps, projections)", n_messages, messages),
        part("the model's answers", n_answers, answers),
        part("tool calls", n_calls, calls),
        part("tool results", n_results, results),
        part("per-turn blocks", 1, blocks),
    ]
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
        let request = self.build_request(&run_ctx, &info, context)?;
        let parts = measure(&request);
        let estimated = parts.iter().map(|p| p.tokens).sum();
        Ok(ContextReport {
            parts,
            estimated,
            measured: info.last_usage.map(|u| u.prompt_tokens()),
            window: self.session_context_window(&info),
        })
    }
}

#[cfg(test)]
mod tests {
    use seri_providers::{AssistantTurn, ToolSpec};

    use super::*;

    #[test]
    fn each_part_is_counted_where_the_request_holds_it() {
        let mut request = ModelRequest::new("m", "You are seri.".repeat(10));
        request.tools =
            vec![ToolSpec { name: "read".into(), description: "Reads.".into(), input_schema: serde_json::json!({}) }];
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
        let parts: Vec<String> =
            measure(&request).iter().map(|p| format!("{} ×{}: {}", p.name, p.items, p.tokens)).collect();
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
