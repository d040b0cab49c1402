//! Elision: oversized tool payloads are replaced with a marker before the
//! summarizer reads them.
//!
//! The summarizer is asked to recap what happened, not to reread file
//! bodies: a `read_file` result or a `write_file` argument of a few hundred
//! lines costs as much as the rest of the conversation and adds nothing the
//! recap should quote. A payload over [`ELIDE_PAYLOAD_BYTES`] becomes
//!
//! ```json
//! {"elided":true,"originalBytes":N}
//! ```
//!
//! with `N` the payload's size in bytes (a result's text, or the arguments as
//! compact JSON), and the summarizer is told not to invent what it held. An
//! elided call keeps its short scalar arguments beside the marker (a path, a
//! line number, a flag: strings up to [`ELIDE_KEEP_SCALAR_BYTES`], numbers,
//! booleans), so the recap can still name the file that was written:
//! `{"elided":true,"originalBytes":48213,"path":"src/parser.rs"}`.
//!
//! Elision shapes the summarizer's request only. The events in the store and
//! the working context the model reads are never changed.

use serde_json::{Map, Value};
use seri_core::{EventBody, ToolCall, ToolResult};

/// Tool payloads larger than this many bytes are elided in the summarizer's
/// input: 4 KiB, about 1,000 tokens.
///
/// Large enough for what a recap should quote from a payload: an error
/// message, a failing test's output, a short diff, a command line.
/// Small enough to drop what it should not: file bodies (a source file is
/// typically 5 to 50 KiB) and long logs. With the keep budget at 20,000
/// tokens, a summarizer input of a few dozen elided payloads stays a small
/// fraction of any window.
pub const ELIDE_PAYLOAD_BYTES: usize = 4 * 1024;

/// The longest string argument an elided tool call keeps beside its
/// marker: room for a path or a short pattern, not for file contents.
pub const ELIDE_KEEP_SCALAR_BYTES: usize = 256;

/// The marker that replaces a payload of `original_bytes` bytes.
pub fn elided_marker(original_bytes: usize) -> Value {
    let mut marker = Map::new();
    marker.insert("elided".to_owned(), Value::Bool(true));
    marker.insert("originalBytes".to_owned(), Value::from(original_bytes));
    Value::Object(marker)
}

/// A tool result's text with its content elided when it is larger than
/// `threshold` bytes; `None` when it is not.
pub fn elide_result(result: &ToolResult, threshold: usize) -> Option<ToolResult> {
    (result.content.len() > threshold)
        .then(|| ToolResult { content: elided_marker(result.content.len()).to_string(), ..result.clone() })
}

/// A tool call with its arguments elided when their compact JSON is larger
/// than `threshold` bytes; `None` when it is not. Short scalar arguments
/// stay beside the marker (keys that would collide with the marker's own
/// are dropped).
pub fn elide_call(call: &ToolCall, threshold: usize) -> Option<ToolCall> {
    let original = call.arguments.to_string().len();
    if original <= threshold {
        return None;
    }
    let mut arguments = match elided_marker(original) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Some(args) = call.arguments.as_object() {
        for (key, value) in args {
            let short = match value {
                Value::String(s) => s.len() <= ELIDE_KEEP_SCALAR_BYTES,
                Value::Number(_) | Value::Bool(_) | Value::Null => true,
                Value::Array(_) | Value::Object(_) => false,
            };
            if short && !arguments.contains_key(key) {
                arguments.insert(key.clone(), value.clone());
            }
        }
    }
    Some(ToolCall { arguments: Value::Object(arguments), ..call.clone() })
}

/// `body` with its tool payload elided when it is larger than `threshold`
/// bytes; `None` when nothing changed.
pub fn elide_payload(body: &EventBody, threshold: usize) -> Option<EventBody> {
    match body {
        EventBody::ToolCall(call) => elide_call(call, threshold).map(EventBody::ToolCall),
        EventBody::ToolResult(result) => elide_result(result, threshold).map(EventBody::ToolResult),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(arguments: Value) -> ToolCall {
        ToolCall { id: "c".into(), name: "write_file".into(), arguments }
    }

    #[test]
    fn results_over_the_threshold_become_a_marker_with_their_exact_size() {
        let result = |content: &str| ToolResult {
            tool_call_id: "c".into(),
            name: "read_file".into(),
            content: content.into(),
            is_error: false,
            facts: None,
        };
        assert_eq!(elide_result(&result("abcd"), 4), None);
        let elided = elide_result(&result("abcdé"), 4).unwrap();
        assert_eq!(elided.content, r#"{"elided":true,"originalBytes":6}"#);
        assert_eq!((elided.name.as_str(), elided.tool_call_id.as_str()), ("read_file", "c"));
    }

    #[test]
    fn calls_keep_short_scalars_beside_the_marker() {
        let args = json!({"path": "src/a.rs", "content": "x".repeat(300), "mode": 7, "opts": {"a": 1}, "elided": "no"});
        let original = args.to_string().len();
        assert_eq!(elide_call(&call(args.clone()), original), None);
        let elided = elide_call(&call(args), 64).unwrap();
        assert_eq!(elided.arguments, json!({"elided": true, "originalBytes": original, "path": "src/a.rs", "mode": 7}));
        let long_path = "p".repeat(ELIDE_KEEP_SCALAR_BYTES + 1);
        let elided = elide_call(&call(json!({ "path": long_path })), 8).unwrap();
        assert_eq!(elided.arguments, json!({"elided": true, "originalBytes": ELIDE_KEEP_SCALAR_BYTES + 12}));
    }
}
