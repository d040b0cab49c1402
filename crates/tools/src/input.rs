//! Reading a tool's JSON input field by field, so every error names the
//! exact path of the field that was wrong (`sources[2].toSeq`).
//!
//! `null` counts as absent everywhere: models write `"sources": null` to mean
//! "none", and refusing that would only cost a retry.

use serde_json::{Map, Value};

use crate::error::InputError;

/// The JSON type of a value, as an error message names it.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `parent.key`, or `key` at the top.
pub(crate) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() { key.to_owned() } else { format!("{parent}.{key}") }
}

/// `parent[index]`.
pub(crate) fn index(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

/// An object of the input, with its path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: &'a str,
}

impl<'a> Obj<'a> {
    /// The value at `path` as an object.
    pub(crate) fn new(value: &'a Value, path: &'a str) -> Result<Self, InputError> {
        match value {
            Value::Object(map) => Ok(Self { map, path }),
            other => Err(InputError::new(path, format!("expected an object, got {}", type_name(other)))),
        }
    }

    /// The path of one of its fields.
    pub(crate) fn path(&self, key: &str) -> String {
        join(self.path, key)
    }

    /// A field, unless absent or null.
    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Refuses any key not in `known`, naming the first (in key order).
    pub(crate) fn only(&self, known: &[&str], hint: &str) -> Result<(), InputError> {
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            Some(key) => Err(InputError::new(
                self.path(key),
                format!("not a field of this input (expected one of: {}){hint}", known.join(", ")),
            )),
            None => Ok(()),
        }
    }

    /// An optional string field.
    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<&'a str>, InputError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(InputError::new(self.path(key), format!("expected a string, got {}", type_name(other)))),
        }
    }

    /// A required string field.
    pub(crate) fn req_str(&self, key: &str) -> Result<&'a str, InputError> {
        self.opt_str(key)?.ok_or_else(|| InputError::new(self.path(key), "required"))
    }

    /// An optional boolean field.
    pub(crate) fn opt_bool(&self, key: &str) -> Result<Option<bool>, InputError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => {
                Err(InputError::new(self.path(key), format!("expected a boolean, got {}", type_name(other))))
            }
        }
    }

    /// An optional whole number of at least `min`.
    pub(crate) fn opt_u64(&self, key: &str, min: u64) -> Result<Option<u64>, InputError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if v >= min => Ok(Some(v)),
                _ => {
                    Err(InputError::new(self.path(key), format!("expected a whole number of at least {min}, got {n}")))
                }
            },
            Some(other) => Err(InputError::new(
                self.path(key),
                format!("expected a whole number of at least {min}, got {}", type_name(other)),
            )),
        }
    }

    /// A required whole number of at least `min`.
    pub(crate) fn req_u64(&self, key: &str, min: u64) -> Result<u64, InputError> {
        self.opt_u64(key, min)?.ok_or_else(|| InputError::new(self.path(key), "required"))
    }
}

/// A trimmed, non-blank, one-line text of at most `max_chars` characters.
pub(crate) fn one_line(text: &str, field: &str, max_chars: usize) -> Result<String, InputError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(InputError::new(field, "empty"));
    }
    if text.contains(['\n', '\r']) {
        return Err(InputError::new(field, "must be one line"));
    }
    let chars = text.chars().count();
    if chars > max_chars {
        return Err(InputError::new(field, format!("{chars} characters; at most {max_chars}")));
    }
    Ok(text.to_owned())
}

/// A trimmed, non-blank text of at most `max_chars` characters.
pub(crate) fn prose(text: &str, field: &str, max_chars: usize) -> Result<String, InputError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(InputError::new(field, "empty"));
    }
    let chars = text.chars().count();
    if chars > max_chars {
        return Err(InputError::new(field, format!("{chars} characters; at most {max_chars}")));
    }
    Ok(text.to_owned())
}
