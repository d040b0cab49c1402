//! Error classification: an HTTP status and an error body (or an error event
//! inside a stream) become one [`ProviderError`] of the right kind.
//!
//! Pure: every provider's real error bodies are checked in the table test
//! below, so a new overflow wording is one line here and one line there.

use std::time::Duration;

use serde_json::Value;

use crate::error::{ErrorKind, ProviderError};

/// The useful parts of an error body, whatever shape the provider uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ErrorBody {
    /// The human-readable message (or the raw body when it is not JSON).
    pub(crate) message: String,
    /// `error.type` (Anthropic, OpenAI, llama.cpp) or the top-level `type` (vLLM).
    pub(crate) kind: Option<String>,
    /// `error.code`, as text whether it was a string or a number.
    pub(crate) code: Option<String>,
    /// Upstream text a router passed along (OpenRouter's `error.metadata.raw`).
    pub(crate) upstream: Option<String>,
}

/// The longest error body kept in a message; longer ones are cut with a note.
const MAX_MESSAGE_CHARS: usize = 2000;

/// Reads an error body in any of the shapes providers send:
/// `{"type":"error","error":{"type","message"}}` (Anthropic),
/// `{"error":{"message","type","code"}}` (OpenAI, OpenRouter, llama.cpp),
/// `{"error":"text"}` (Ollama), `{"object":"error","message","type","code"}`
/// (vLLM), or plain text.
pub(crate) fn read_error_body(body: &str) -> ErrorBody {
    if body.trim().is_empty() {
        return ErrorBody { message: "the error response had an empty body".to_owned(), ..ErrorBody::default() };
    }
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return ErrorBody { message: shorten(body.trim()), ..ErrorBody::default() };
    };
    read_error_value(&value).unwrap_or_else(|| ErrorBody { message: shorten(body.trim()), ..ErrorBody::default() })
}

/// Reads an error object already parsed from JSON; `None` when it has no message.
pub(crate) fn read_error_value(value: &Value) -> Option<ErrorBody> {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    match value.get("error") {
        Some(Value::String(message)) => Some(ErrorBody { message: shorten(message), ..ErrorBody::default() }),
        Some(error @ Value::Object(_)) => Some(ErrorBody {
            message: shorten(&error.get("message").and_then(text).unwrap_or_else(|| error.to_string())),
            kind: error.get("type").and_then(text),
            code: error.get("code").and_then(text),
            upstream: error.pointer("/metadata/raw").map(|raw| match raw {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
        }),
        _ => value.get("message").and_then(text).map(|message| ErrorBody {
            message: shorten(&message),
            kind: value.get("type").and_then(text),
            code: value.get("code").and_then(text),
            upstream: None,
        }),
    }
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}… ({} bytes in all)", &text[..cut], text.len()),
        None => text.to_owned(),
    }
}

/// Error codes and types that mean the prompt does not fit.
const OVERFLOW_CODES: &[&str] = &["context_length_exceeded", "exceed_context_size_error"];

/// Phrases (lowercase) providers use when the prompt does not fit, with who says them.
const OVERFLOW_PHRASES: &[&str] = &[
    "prompt is too long",         // Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
    "exceed context limit",       // Anthropic: "input length and `max_tokens` exceed context limit"
    "maximum context length",     // OpenAI, OpenRouter, vLLM, Groq, DeepSeek
    "exceeds the context window", // OpenAI: "Your input exceeds the context window of this model"
    "context length exceeded",    // generic routers
    "exceeds the available context size", // llama.cpp server
    "exceeds the maximum number of tokens", // Gemini through OpenAI-compatible endpoints
    "too large for model with",   // Mistral: "… too large for model with 32768 maximum context length"
    "input is too long for requested model", // Bedrock-backed routes
    "prompt too long",            // Ollama: "prompt too long; exceeded max context length"
    "exceeds the context length", // Ollama: "input length exceeds the context length"
    "exceeds the context",        // generic: "… exceeds the context (n_ctx = 2048)"
    "exceed context window",      // llama-cpp-python: "Requested tokens (3031) exceed context window of 2048"
    "n_ctx",                      // llama.cpp and its wrappers name the context size by its flag
    "loaded with context length", // LM Studio: "… the model is loaded with context length of only 4096 tokens"
];

/// Whether an error body says the prompt does not fit the context window.
pub(crate) fn is_context_overflow(body: &ErrorBody) -> bool {
    let coded = [&body.code, &body.kind].into_iter().flatten().any(|c| OVERFLOW_CODES.contains(&c.as_str()));
    let said = [Some(&body.message), body.upstream.as_ref()].into_iter().flatten().any(|text| {
        let lower = text.to_lowercase();
        OVERFLOW_PHRASES.iter().any(|phrase| lower.contains(phrase))
    });
    coded || said
}

/// Classifies a failed call from its HTTP status (absent for an error event
/// inside a stream) and its error body.
pub(crate) fn classify(
    provider: &str,
    status: Option<u16>,
    body: &ErrorBody,
    retry_after: Option<Duration>,
) -> ProviderError {
    let kind = body.kind.as_deref().unwrap_or("");
    let code = body.code.as_deref().unwrap_or("");
    // Routers put the upstream status in `error.code` of an in-stream error.
    let status = status.or_else(|| code.parse::<u16>().ok());
    // Providers name the error in `type` (Anthropic, OpenAI) or in `code` (OpenRouter's in-stream errors).
    let named = |names: &[&str]| names.contains(&kind) || names.contains(&code);
    let class = if matches!(status, Some(401 | 403)) || named(&["authentication_error", "permission_error"]) {
        ErrorKind::Auth
    } else if code == "insufficient_quota" {
        // OpenAI says 429 for an unpaid bill; waiting does not pay it.
        ErrorKind::Rejected
    } else if status == Some(429) || named(&["rate_limit_error", "rate_limit_exceeded"]) {
        ErrorKind::RateLimited
    } else if status == Some(413) || is_context_overflow(body) {
        ErrorKind::ContextOverflow
    } else if status == Some(408) {
        ErrorKind::Network
    } else if status.is_some_and(|s| s >= 500) || named(&["overloaded_error", "api_error", "server_error"]) {
        ErrorKind::Server
    } else if status.is_none() {
        // An error event in the middle of a stream, with nothing more specific:
        // the provider failed while answering.
        ErrorKind::Server
    } else {
        ErrorKind::Rejected
    };
    let message = match (&body.upstream, class) {
        (Some(upstream), ErrorKind::ContextOverflow) if !body.message.contains(upstream.as_str()) => {
            format!("{} (upstream: {})", body.message, shorten(upstream))
        }
        _ => body.message.clone(),
    };
    let error = ProviderError::new(class, provider, message);
    let error = match status {
        Some(status) => error.with_status(status),
        None => error,
    };
    error.with_retry_after(retry_after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(status: u16, body: &str, expected: ErrorKind) {
        let error = classify("p", Some(status), &read_error_body(body), None);
        assert_eq!(error.kind, expected, "{status} {body}");
        assert!(!error.message.is_empty());
    }

    #[test]
    fn each_providers_overflow_body() {
        let overflow = ErrorKind::ContextOverflow;
        check(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011CT"}"#,
            overflow,
        );
        check(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again"}}"#,
            overflow,
        );
        check(
            400,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            overflow,
        );
        check(
            400,
            r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
            overflow,
        );
        check(
            400,
            r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140213 tokens (132021 of text input, 8192 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}"#,
            overflow,
        );
        check(
            400,
            r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5012 tokens (4012 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
            overflow,
        );
        check(
            400,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#,
            overflow,
        );
        check(
            400,
            r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"message\":\"Prompt contains 40213 tokens and 0 draft tokens, too large for model with 32768 maximum context length\"}","provider_name":"Mistral"}}}"#,
            overflow,
        );
        check(400, r#"{"error":"prompt too long; exceeded max context length by 1024 tokens"}"#, overflow);
        // llama-cpp-python's server, when its own formatter misses the error.
        check(
            500,
            r#"{"error":{"message":"Requested tokens (3031) exceed context window of 2048","type":"internal_server_error"}}"#,
            overflow,
        );
        check(500, "llama_decode: prompt of 3031 tokens exceeds the context (n_ctx = 2048)", overflow);
        check(
            400,
            r#"{"error":"Trying to keep the first 5234 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#,
            overflow,
        );
        check(
            413,
            r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#,
            overflow,
        );
    }

    #[test]
    fn statuses_and_types() {
        check(
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
            ErrorKind::Auth,
        );
        check(
            403,
            r#"{"error":{"message":"Project does not have access to model gpt-5","type":"invalid_request_error","code":"model_not_found"}}"#,
            ErrorKind::Auth,
        );
        check(
            429,
            r#"{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}}"#,
            ErrorKind::RateLimited,
        );
        check(
            429,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
            ErrorKind::Rejected,
        );
        check(529, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#, ErrorKind::Server);
        check(500, "Internal Server Error", ErrorKind::Server);
        check(503, "", ErrorKind::Server);
        check(408, "timeout", ErrorKind::Network);
        check(
            404,
            r#"{"error":{"message":"The model `gpt-9` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
            ErrorKind::Rejected,
        );
        check(
            400,
            r#"{"error":{"message":"Invalid schema for function 'read'","type":"invalid_request_error"}}"#,
            ErrorKind::Rejected,
        );
    }

    #[test]
    fn in_stream_errors_classify_by_type_or_code() {
        let by_type = |body: &str| classify("p", None, &read_error_body(body), None).kind;
        assert_eq!(
            by_type(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
            ErrorKind::Server
        );
        assert_eq!(
            by_type(r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}"#),
            ErrorKind::RateLimited
        );
        assert_eq!(by_type(r#"{"error":{"message":"Upstream idle","code":502}}"#), ErrorKind::Server);
        assert_eq!(by_type(r#"{"error":{"message":"odd"}}"#), ErrorKind::Server);
    }

    #[test]
    fn long_bodies_are_cut_with_their_size() {
        let body = "x".repeat(MAX_MESSAGE_CHARS + 10);
        let read = read_error_body(&body);
        assert!(read.message.ends_with(&format!("… ({} bytes in all)", body.len())), "{}", read.message);
    }
}
