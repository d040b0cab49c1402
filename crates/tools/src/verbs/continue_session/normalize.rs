//! Normalising `continue_session` input before it is parsed.
//!
//! Two rules, both total (they never fail) and idempotent (normalising twice
//! equals normalising once):
//!
//! 1. [`normalize_continue_session_input`] hoists `sources`, `transfer` and
//!    `description` that a model nested inside `handoff` to the top level,
//!    when the top level lacks them. In production roughly 40% of calls
//!    nested at least one of them; refusing those only bought a retry.
//! 2. [`normalize_extra_value`] turns the value of any handoff key beyond the
//!    seven named sections into a list of strings, so it renders as its own
//!    `## Section`.

use serde_json::Value;

/// The keys hoisted out of `handoff`, in the order they are checked.
pub const HOISTED_KEYS: [&str; 3] = ["sources", "transfer", "description"];

/// Moves each of [`HOISTED_KEYS`] from `handoff` to the top level when the
/// top level lacks it (absent or `null`).
///
/// A key present in both places is left in both: the top level wins, and the
/// nested copy stays in `handoff`, where it becomes an extra section, so
/// nothing the model wrote is dropped. A `null` nested value is removed, as
/// it says nothing. Input that is not an object, or whose `handoff` is not an
/// object, is returned unchanged for the parser to refuse with a clear error.
pub fn normalize_continue_session_input(input: Value) -> Value {
    let Value::Object(mut top) = input else { return input };
    let lacking: Vec<&str> = HOISTED_KEYS.into_iter().filter(|key| top.get(*key).is_none_or(Value::is_null)).collect();
    let Some(Value::Object(handoff)) = top.get_mut("handoff") else { return Value::Object(top) };
    let hoisted: Vec<(&str, Value)> =
        lacking.into_iter().filter_map(|key| handoff.remove(key).map(|value| (key, value))).collect();
    for (key, value) in hoisted {
        if !value.is_null() {
            top.insert(key.to_owned(), value);
        }
    }
    Value::Object(top)
}

/// The list of strings an extra handoff key's value becomes.
///
/// - a string: itself, trimmed; nothing if it is blank;
/// - a number or a boolean: its JSON text (`42`, `2.5`, `true`);
/// - `null`: nothing;
/// - an array: its items' lists, concatenated in order (nested arrays flatten);
/// - an object: for each entry in key order, its value's list with each
///   string prefixed by `key: `; nested objects join their keys with `.`
///   (`{"db": {"host": "x"}}` gives `db.host: x`).
///
/// A key whose list comes out empty is dropped from `handoff.extra`: it held
/// no text.
pub fn normalize_extra_value(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    flatten(value, None, &mut out);
    out
}

fn flatten(value: &Value, key_path: Option<&str>, out: &mut Vec<String>) {
    let mut push = |text: &str| match key_path {
        Some(path) => out.push(format!("{path}: {text}")),
        None => out.push(text.to_owned()),
    };
    match value {
        Value::Null => {}
        Value::Bool(b) => push(if *b { "true" } else { "false" }),
        Value::Number(n) => push(&n.to_string()),
        Value::String(s) => {
            let s = s.trim();
            if !s.is_empty() {
                push(s);
            }
        }
        Value::Array(items) => {
            for item in items {
                flatten(item, key_path, out);
            }
        }
        Value::Object(entries) => {
            for (key, item) in entries {
                let path = match key_path {
                    Some(parent) => format!("{parent}.{key}"),
                    None => key.clone(),
                };
                flatten(item, Some(&path), out);
            }
        }
    }
}
