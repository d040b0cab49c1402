//! Elision: a trajectory keeps the shape of what happened, not every byte.
//!
//! A string longer than [`ELIDE_THRESHOLD_BYTES`] is stored as a marker
//! that records its original size, its SHA-256 (so two runs can still be
//! told to have read or written the same thing) and its first
//! [`ELIDED_HEAD_CHARS`] characters:
//!
//! ```json
//! {"elided": true, "originalBytes": 48213, "sha256": "9f86…", "head": "fn main() {"}
//! ```
//!
//! A record still over [`MAX_RECORD_BYTES`] after that (many medium strings
//! in one tool call's arguments) has each of its larger fields replaced the
//! same way, measured as JSON. Elision is applied by the store as it writes
//! a record, so no caller can store a large value whole.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Strings longer than this many bytes are stored elided.
pub const ELIDE_THRESHOLD_BYTES: usize = 4096;

/// How many characters of an elided value are kept, to recognise it.
pub const ELIDED_HEAD_CHARS: usize = 200;

/// A record whose JSON is longer than this after its strings were elided
/// has its larger fields elided whole.
pub const MAX_RECORD_BYTES: usize = 4 * ELIDE_THRESHOLD_BYTES;

/// The marker that stands for `text`, whose original size is `text.len()`.
pub fn elided_text(text: &str) -> Value {
    let mut marker = Map::new();
    marker.insert("elided".into(), Value::Bool(true));
    marker.insert("originalBytes".into(), Value::from(text.len() as u64));
    marker.insert("sha256".into(), Value::from(hex_sha256(text.as_bytes())));
    marker.insert("head".into(), Value::from(text.chars().take(ELIDED_HEAD_CHARS).collect::<String>()));
    Value::Object(marker)
}

/// If `value` is an elision marker, the original size it records.
pub fn elided_bytes(value: &Value) -> Option<u64> {
    let map = value.as_object()?;
    if map.get("elided") != Some(&Value::Bool(true)) {
        return None;
    }
    map.get("originalBytes")?.as_u64()
}

/// `value` with every string over [`ELIDE_THRESHOLD_BYTES`] replaced by its
/// marker, then, if its JSON is still over [`MAX_RECORD_BYTES`], every
/// field (of an object) or element (of an array) whose JSON is over the
/// threshold replaced by the marker of that JSON.
pub fn elide_record(value: Value) -> Value {
    let value = elide_strings(value);
    if value.to_string().len() <= MAX_RECORD_BYTES {
        return value;
    }
    let whole = |v: Value| {
        let json = v.to_string();
        if json.len() > ELIDE_THRESHOLD_BYTES { elided_text(&json) } else { v }
    };
    match value {
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, whole(v))).collect()),
        Value::Array(items) => Value::Array(items.into_iter().map(whole).collect()),
        other => whole(other),
    }
}

fn elide_strings(value: Value) -> Value {
    match value {
        Value::String(s) if s.len() > ELIDE_THRESHOLD_BYTES => elided_text(&s),
        Value::Array(items) => Value::Array(items.into_iter().map(elide_strings).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, elide_strings(v))).collect()),
        other => other,
    }
}

/// Lowercase hex SHA-256.
pub fn hex_sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn short_values_are_kept_whole() {
        let value = json!({"path": "src/a.rs", "content": "x".repeat(ELIDE_THRESHOLD_BYTES), "n": 3});
        assert_eq!(elide_record(value.clone()), value);
    }

    #[test]
    fn a_long_string_becomes_a_marker_with_its_size_hash_and_head() {
        let long = "é".repeat(ELIDE_THRESHOLD_BYTES); // two bytes each
        let value = elide_record(json!({"content": long}));
        let marker = &value["content"];
        assert_eq!(elided_bytes(marker), Some(2 * ELIDE_THRESHOLD_BYTES as u64));
        assert_eq!(marker["head"].as_str().unwrap().chars().count(), ELIDED_HEAD_CHARS);
        assert_eq!(marker["sha256"].as_str().unwrap().len(), 64);
        assert_eq!(elided_bytes(&json!("plain")), None);
    }

    #[test]
    fn many_medium_strings_are_elided_field_by_field() {
        let medium = "m".repeat(ELIDE_THRESHOLD_BYTES - 10);
        let items: Vec<Value> = (0..8).map(|_| Value::from(medium.clone())).collect();
        let value = elide_record(json!({"kind": "tool_call", "arguments": {"files": items}}));
        assert_eq!(value["kind"], "tool_call");
        let json_size = json!({"files": (0..8).map(|_| medium.clone()).collect::<Vec<_>>()}).to_string().len();
        assert_eq!(elided_bytes(&value["arguments"]), Some(json_size as u64));
        assert!(value.to_string().len() <= MAX_RECORD_BYTES);
    }

    #[test]
    fn hashes_are_lowercase_hex() {
        assert_eq!(hex_sha256(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
