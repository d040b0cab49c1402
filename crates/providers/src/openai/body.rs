//! The neutral request as an OpenAI `/chat/completions` body. Pure.
//!
//! - The system prompt is the first message, role `system`.
//! - An assistant turn is one message: its text as `content` (when it only
//!   called tools, `null` or `""` as the dialect says) and its calls as `tool_calls`, arguments as a JSON
//!   string. Its reasoning is not sent back: chat completions has no field
//!   for it, and some servers (DeepSeek) refuse a request that carries it.
//! - Each tool result is a `tool` message. Chat completions has no error
//!   flag, so `is_error` reaches the model only through the result's text.
//! - Consecutive user messages stay separate: this format does not need
//!   alternating roles.
//! - `stream_options.include_usage` asks for usage in the last chunk.

use serde_json::{Map, Value, json};

use crate::openai::dialect::{MaxTokensField, OpenAiDialect, ReasoningField, ToolCallContent};
use crate::request::{ModelRequest, RequestMessage};

/// The JSON body for `request` in `dialect`.
pub fn request_body(request: &ModelRequest, dialect: &OpenAiDialect) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    messages.extend(request.messages.iter().map(|m| message(m, dialect)));

    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(|tool| {
            json!({
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
            })
        });
        body.insert("tools".into(), Value::Array(tools.collect()));
    }
    if let Some(max) = request.max_output_tokens {
        let field = match dialect.max_tokens_field {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        };
        body.insert(field.into(), json!(max));
    }
    let sampling = &request.sampling;
    if let Some(t) = sampling.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = sampling.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(k) = sampling.top_k.filter(|_| dialect.accepts_top_k) {
        body.insert("top_k".into(), json!(k));
    }
    if let Some(seed) = sampling.seed {
        body.insert("seed".into(), json!(seed));
    }
    if let Some(effort) = request.reasoning {
        match dialect.reasoning {
            ReasoningField::Effort => body.insert("reasoning_effort".into(), json!(effort.as_str())),
            ReasoningField::OpenRouter => body.insert("reasoning".into(), json!({"effort": effort.as_str()})),
        };
    }
    if let Some(pin) = &dialect.provider_pin {
        body.insert("provider".into(), json!({"order": pin.order, "allow_fallbacks": pin.allow_fallbacks}));
    }
    Value::Object(body)
}

fn message(message: &RequestMessage, dialect: &OpenAiDialect) -> Value {
    match message {
        RequestMessage::User { text, images } if images.is_empty() => json!({"role": "user", "content": text}),
        RequestMessage::User { text, images } => {
            // With pictures the content is a list of parts: the text, then
            // each image as a data URL (OpenAI's and OpenRouter's form).
            let mut parts = vec![json!({"type": "text", "text": text})];
            parts.extend(images.iter().map(|image| {
                json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", image.media_type, image.base64())}})
            }));
            json!({"role": "user", "content": parts})
        }
        RequestMessage::Assistant(turn) => {
            let mut out = Map::new();
            out.insert("role".into(), json!("assistant"));
            let content = match dialect.tool_call_content {
                ToolCallContent::Null if turn.text.is_empty() && !turn.tool_calls.is_empty() => Value::Null,
                ToolCallContent::Null | ToolCallContent::Empty => json!(turn.text),
            };
            out.insert("content".into(), content);
            if !turn.tool_calls.is_empty() {
                let calls = turn.tool_calls.iter().map(|call| {
                    json!({
                        "id": call.id.as_str(),
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments.to_string()},
                    })
                });
                out.insert("tool_calls".into(), Value::Array(calls.collect()));
            }
            Value::Object(out)
        }
        RequestMessage::Tool(result) => json!({
            "role": "tool",
            "tool_call_id": result.tool_call_id.as_str(),
            "content": result.content,
        }),
    }
}
