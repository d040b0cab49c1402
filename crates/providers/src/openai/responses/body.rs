//! The neutral request as an OpenAI `/responses` body. Pure.
//!
//! - The system prompt is `instructions`; the conversation is `input`, a
//!   list of items.
//! - A user message is a `message` item of `input_text` (and `input_image`)
//!   parts.
//! - An assistant turn becomes, in this order, its reasoning items, a
//!   `message` item of `output_text` when it has text, and one
//!   `function_call` item (`call_id`, `name`, `arguments` as a JSON string)
//!   per call: the reasoning goes back before the calls it led to, as the
//!   API requires of a reasoning model in the middle of its tool calls.
//! - A reasoning item goes back only when it carries OpenAI's
//!   `encrypted_content`, with its summary, and without its `id`: with
//!   `store: false` the server keeps no items, so an id would name one it
//!   cannot find. Reasoning from other providers (an Anthropic signature,
//!   chat-completions `reasoning_content`) is left out; the API could not
//!   read it.
//! - Each tool result is a `function_call_output` item. The format has no
//!   error flag, so `is_error` reaches the model through the text only.
//! - `store: false` always: seri keeps the history, the server keeps
//!   nothing. Reasoning effort asks for `reasoning.summary: "auto"` and
//!   `include: ["reasoning.encrypted_content"]`, so the reasoning can be
//!   shown and carried to the next request; without an effort neither is
//!   sent (models that do not reason refuse the `include`).
//! - `max_output_tokens`, `temperature` and `top_p` when set; the format
//!   has no `top_k` and no `seed`.

use serde_json::{Map, Value, json};

use crate::openai::dialect::OpenAiDialect;
use crate::request::{ModelRequest, RequestMessage};

/// The JSON body for `request` (OpenRouter's provider pin from `dialect`).
pub fn request_body(request: &ModelRequest, dialect: &OpenAiDialect) -> Value {
    let mut input = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        push_items(&mut input, message);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    if !request.system.is_empty() {
        body.insert("instructions".into(), json!(request.system));
    }
    body.insert("input".into(), Value::Array(input));
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(|tool| {
            json!({
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
                // seri's schemas are not written for strict mode (every
                // property required, no additional ones).
                "strict": false,
            })
        });
        body.insert("tools".into(), Value::Array(tools.collect()));
        body.insert("tool_choice".into(), json!("auto"));
    }
    if let Some(effort) = request.reasoning {
        body.insert("reasoning".into(), json!({"effort": effort.as_str(), "summary": "auto"}));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if let Some(max) = request.max_output_tokens {
        body.insert("max_output_tokens".into(), json!(max));
    }
    if let Some(t) = request.sampling.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.sampling.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(pin) = &dialect.provider_pin {
        body.insert("provider".into(), json!({"order": pin.order, "allow_fallbacks": pin.allow_fallbacks}));
    }
    Value::Object(body)
}

fn push_items(input: &mut Vec<Value>, message: &RequestMessage) {
    match message {
        RequestMessage::User { text, images } => {
            let mut content = vec![json!({"type": "input_text", "text": text})];
            content.extend(images.iter().map(|image| {
                json!({"type": "input_image", "image_url": format!("data:{};base64,{}", image.media_type, image.base64())})
            }));
            input.push(json!({"type": "message", "role": "user", "content": content}));
        }
        RequestMessage::Assistant(turn) => {
            for thinking in &turn.thinking {
                let Some(encrypted) = &thinking.encrypted_content else { continue };
                let summary: Vec<Value> = if thinking.text.is_empty() {
                    Vec::new()
                } else {
                    vec![json!({"type": "summary_text", "text": thinking.text})]
                };
                input.push(json!({"type": "reasoning", "summary": summary, "encrypted_content": encrypted}));
            }
            if !turn.text.is_empty() {
                input.push(json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": turn.text}],
                }));
            }
            for call in &turn.tool_calls {
                input.push(json!({
                    "type": "function_call",
                    "call_id": call.id.as_str(),
                    "name": call.name,
                    "arguments": call.arguments.to_string(),
                }));
            }
        }
        RequestMessage::Tool(result) => input.push(json!({
            "type": "function_call_output",
            "call_id": result.tool_call_id.as_str(),
            "output": result.content,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{AssistantTurn, ReasoningEffort};
    use seri_core::{Thinking, ToolCall, ToolCallId};

    #[test]
    fn reasoning_goes_back_encrypted_before_the_calls_it_led_to_and_nothing_else_does() {
        let mut request = ModelRequest::new("gpt-5", "Be careful.");
        request.reasoning = Some(ReasoningEffort::High);
        request.messages = vec![
            RequestMessage::user("Fix a.rs"),
            RequestMessage::Assistant(AssistantTurn {
                thinking: vec![
                    Thinking {
                        text: "**Reading first**".into(),
                        signature: None,
                        encrypted_content: Some("gAAAA1".into()),
                    },
                    Thinking { text: String::new(), signature: None, encrypted_content: Some("gAAAA2".into()) },
                    Thinking { text: "Anthropic's".into(), signature: Some("EqQB".into()), encrypted_content: None },
                    Thinking { text: "vLLM's reasoning_content".into(), signature: None, encrypted_content: None },
                ],
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: ToolCallId("call_1".into()),
                    name: "read".into(),
                    arguments: json!({"path": "a.rs"}),
                }],
            }),
            RequestMessage::tool_result("call_1", "read", "fn main() {}", false),
        ];
        let body = request_body(&request, &OpenAiDialect::openai());
        assert_eq!(
            body["input"],
            json!([
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix a.rs"}]},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Reading first**"}], "encrypted_content": "gAAAA1"},
                {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA2"},
                {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a.rs\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "fn main() {}"},
            ])
        );
        assert_eq!(body["store"], json!(false));
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(body["reasoning"], json!({"effort": "high", "summary": "auto"}));
        assert_eq!(body["instructions"], json!("Be careful."));
    }

    #[test]
    fn without_an_effort_no_reasoning_is_asked_for() {
        let mut request = ModelRequest::new("gpt-4.1", "");
        request.messages.push(RequestMessage::user("hi"));
        request.sampling.top_k = Some(40);
        request.sampling.seed = Some(7);
        let body = request_body(&request, &OpenAiDialect::openai());
        let mut keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["input", "model", "store", "stream"]);
    }
}
