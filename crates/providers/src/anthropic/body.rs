//! The neutral request as an Anthropic `/v1/messages` body. Pure.
//!
//! - Roles must alternate, so adjacent same-role messages are merged into
//!   one message of several content blocks: tool results and the per-turn
//!   blocks that follow them become one user message, tool results first
//!   (as the API requires).
//! - Prompt caching: `cache_control: {"type": "ephemeral"}` goes on the
//!   system prompt, on the last tool, and on the last block of the message
//!   that [`ModelRequest::cache_breakpoint_index`] names: three of the four
//!   breakpoints the API allows, so the whole stable prefix is cached and
//!   only the per-turn blocks after it are new.
//! - Thinking blocks go back with their signatures; a block with a
//!   signature and no text is a redacted block (`redacted_thinking`). A
//!   block without a signature (reasoning from another provider, OpenAI's
//!   encrypted reasoning included) cannot be verified by the API and is left out.
//! - Empty text blocks are left out (the API refuses them), and so is a
//!   message left with no block; a tool result with empty content is sent
//!   without `content`.
//! - `max_tokens` is required: the request's cap, else 8192 (plus the
//!   thinking budget when reasoning is on).
//! - Reasoning effort becomes `thinking: {"type": "enabled", "budget_tokens"}`:
//!   1024, 4096, 10000 or 32000 tokens from minimal to high, kept below `max_tokens`.

use serde_json::{Map, Value, json};

use crate::request::{ModelRequest, ReasoningEffort, RequestMessage};

/// The output cap used when the request sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The smallest thinking budget the API accepts.
const MIN_THINKING_BUDGET: u32 = 1024;

/// The thinking budget for a reasoning effort.
pub fn thinking_budget(effort: ReasoningEffort) -> u32 {
    match effort {
        ReasoningEffort::Minimal => MIN_THINKING_BUDGET,
        ReasoningEffort::Low => 4096,
        ReasoningEffort::Medium => 10_000,
        ReasoningEffort::High => 32_000,
    }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The JSON body for `request`.
pub fn request_body(request: &ModelRequest) -> Value {
    let budget = request.reasoning.map(thinking_budget);
    let max_tokens = request.max_output_tokens.unwrap_or_else(|| DEFAULT_MAX_TOKENS + budget.unwrap_or(0));

    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if !request.system.is_empty() {
        body.insert("system".into(), json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}]));
    }
    body.insert("messages".into(), Value::Array(messages(request)));
    if !request.tools.is_empty() {
        let last = request.tools.len() - 1;
        let tools = request.tools.iter().enumerate().map(|(n, tool)| {
            let mut spec =
                json!({"name": tool.name, "description": tool.description, "input_schema": tool.input_schema});
            if n == last {
                spec["cache_control"] = ephemeral();
            }
            spec
        });
        body.insert("tools".into(), Value::Array(tools.collect()));
    }
    if let Some(budget) = budget {
        // The budget must stay below max_tokens; the API says so clearly if
        // even the minimum does not fit.
        let budget = budget.min(max_tokens.saturating_sub(1)).max(MIN_THINKING_BUDGET);
        body.insert("thinking".into(), json!({"type": "enabled", "budget_tokens": budget}));
    }
    let sampling = &request.sampling;
    if let Some(t) = sampling.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = sampling.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(k) = sampling.top_k {
        body.insert("top_k".into(), json!(k));
    }
    Value::Object(body)
}

/// The messages with blocks built, the breakpoint placed, empties dropped
/// and same-role neighbours merged.
fn messages(request: &ModelRequest) -> Vec<Value> {
    let breakpoint = request.cache_breakpoint_index();
    let mut merged: Vec<(&str, Vec<Value>)> = Vec::new();
    for (n, message) in request.messages.iter().enumerate() {
        let (role, mut blocks) = blocks(message);
        if breakpoint == Some(n)
            && let Some(last) = blocks.last_mut()
        {
            last["cache_control"] = ephemeral();
        }
        if blocks.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => merged.push((role, blocks)),
        }
    }
    merged.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect()
}

fn blocks(message: &RequestMessage) -> (&'static str, Vec<Value>) {
    match message {
        RequestMessage::User { text, images } => {
            // Pictures first, then the text that asks about them (Anthropic's advice).
            let mut blocks: Vec<Value> = images
                .iter()
                .map(|image| {
                    json!({"type": "image", "source": {
                        "type": "base64", "media_type": image.media_type, "data": image.base64(),
                    }})
                })
                .collect();
            if !text.is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
            ("user", blocks)
        }
        RequestMessage::Assistant(turn) => {
            let mut blocks = Vec::new();
            for thinking in &turn.thinking {
                match (&thinking.signature, thinking.text.is_empty()) {
                    (Some(signature), false) => {
                        blocks.push(json!({"type": "thinking", "thinking": thinking.text, "signature": signature}))
                    }
                    (Some(data), true) => blocks.push(json!({"type": "redacted_thinking", "data": data})),
                    (None, _) => {}
                }
            }
            if !turn.text.is_empty() {
                blocks.push(json!({"type": "text", "text": turn.text}));
            }
            for call in &turn.tool_calls {
                blocks.push(
                    json!({"type": "tool_use", "id": call.id.as_str(), "name": call.name, "input": call.arguments}),
                );
            }
            ("assistant", blocks)
        }
        RequestMessage::Tool(result) => {
            let mut block = json!({"type": "tool_result", "tool_use_id": result.tool_call_id.as_str()});
            // The API refuses an empty content string; an absent one means "no output".
            if !result.content.is_empty() {
                block["content"] = json!(result.content);
            }
            if result.is_error {
                block["is_error"] = json!(true);
            }
            ("user", vec![block])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::AssistantTurn;
    use seri_core::Thinking;

    #[test]
    fn empties_are_dropped_and_neighbours_merged() {
        let mut request = ModelRequest::new("m", "");
        request.messages = vec![
            RequestMessage::user("a"),
            RequestMessage::user(""),
            RequestMessage::assistant_text(""),
            RequestMessage::user("b"),
        ];
        let body = request_body(&request);
        assert_eq!(body.get("system"), None, "an empty system prompt is not sent");
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}])
        );
    }

    #[test]
    fn pictures_go_first_as_base64_image_blocks() {
        let mut request = ModelRequest::new("m", "");
        let image = crate::ImageInput {
            attachment_id: "a1".into(),
            media_type: "image/png".into(),
            bytes: 3,
            data: b"png".to_vec(),
        };
        request.messages = vec![RequestMessage::User { text: "what is this?".into(), images: vec![image] }];
        assert_eq!(
            request_body(&request)["messages"],
            json!([{"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "cG5n"}},
                {"type": "text", "text": "what is this?"},
            ]}])
        );
    }

    #[test]
    fn thinking_goes_back_signed_redacted_or_not_at_all() {
        let mut request = ModelRequest::new("m", "s");
        request.messages = vec![RequestMessage::Assistant(AssistantTurn {
            thinking: vec![
                Thinking { text: "signed".into(), signature: Some("sig".into()), encrypted_content: None },
                Thinking { text: String::new(), signature: Some("opaque".into()), encrypted_content: None },
                Thinking { text: "from another provider".into(), signature: None, encrypted_content: None },
                Thinking {
                    text: "OpenAI's, encrypted for OpenAI".into(),
                    signature: None,
                    encrypted_content: Some("gAAAAABo".into()),
                },
            ],
            text: "ok".into(),
            tool_calls: vec![],
        })];
        assert_eq!(
            request_body(&request)["messages"][0]["content"],
            json!([
                {"type": "thinking", "thinking": "signed", "signature": "sig"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "ok"},
            ])
        );
    }

    #[test]
    fn the_thinking_budget_stays_below_max_tokens() {
        let mut request = ModelRequest::new("m", "s");
        request.reasoning = Some(ReasoningEffort::High);
        let body = request_body(&request);
        assert_eq!(
            (body["max_tokens"].clone(), body["thinking"]["budget_tokens"].clone()),
            (json!(40_192), json!(32_000))
        );
        request.max_output_tokens = Some(4096);
        assert_eq!(request_body(&request)["thinking"]["budget_tokens"], json!(4095));
        request.reasoning = None;
        let body = request_body(&request);
        assert_eq!((body["max_tokens"].clone(), body.get("thinking")), (json!(4096), None));
    }
}
