//! Result schemas: the small part of JSON Schema a typed child's result is
//! checked against, and the check.
//!
//! A schema may use `type` (one name or a list of `object`, `array`,
//! `string`, `number`, `integer`, `boolean`, `null`), `properties`,
//! `required`, `items` (one schema for every item), `enum`,
//! `additionalProperties` (`true` or `false`), `description` and `title`.
//! That covers the shapes a delegating agent asks for (a list of findings, a
//! verdict with reasons) and each rule is checked the way JSON Schema
//! defines it. Any other keyword is refused when the schema is given, naming
//! where it is, so a schema is never silently checked less strictly than
//! its author meant. (The `jsonschema` crate would check every keyword, but
//! models are sent the schema inside `return_result`'s input schema, where a
//! small, predictable subset is what they follow reliably; and it would add
//! a regex engine and a resolver to a crate that needs neither.)

use serde_json::{Map, Value};

use crate::error::InputError;
use crate::input::{index, join, type_name};

/// The keywords a result schema may use.
pub const KEYWORDS: [&str; 8] =
    ["type", "properties", "required", "items", "enum", "additionalProperties", "description", "title"];

/// The type names `type` accepts.
pub const TYPES: [&str; 7] = ["object", "array", "string", "number", "integer", "boolean", "null"];

/// How deeply schemas may nest (`properties` and `items` each count one).
pub const MAX_SCHEMA_DEPTH: usize = 32;

/// At most this many problems are listed for one value; the rest are counted.
pub const MAX_VIOLATIONS: usize = 20;

/// A schema that uses only [`KEYWORDS`], each well formed.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultSchema(Value);

/// One way a value fails its schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{path}`: {problem}")]
pub struct Violation {
    /// Where in the value: `value`, `value.findings[2].severity`.
    pub path: String,
    /// What is wrong there.
    pub problem: String,
}

/// Every way a value fails its schema, the first [`MAX_VIOLATIONS`] listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violations {
    /// The problems, in the order the value was walked.
    pub listed: Vec<Violation>,
    /// How many more there were.
    pub more: usize,
}

impl std::fmt::Display for Violations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (n, violation) in self.listed.iter().enumerate() {
            if n > 0 {
                writeln!(f)?;
            }
            write!(f, "- {violation}")?;
        }
        if self.more > 0 {
            write!(f, "\n- and {} more", self.more)?;
        }
        Ok(())
    }
}

impl ResultSchema {
    /// Checks `schema`, the input at `field`: only known keywords, each
    /// well formed, nested no deeper than [`MAX_SCHEMA_DEPTH`].
    pub fn parse(schema: &Value, field: &str) -> Result<Self, InputError> {
        check_schema(schema, field, 0)?;
        Ok(Self(schema.clone()))
    }

    /// The schema as given.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// Checks `value` against the schema; paths start at `root`.
    pub fn check(&self, value: &Value, root: &str) -> Result<(), Violations> {
        let mut found = Found { listed: Vec::new(), more: 0 };
        walk(&self.0, value, &Path::Root(root), &mut found);
        if found.listed.is_empty() { Ok(()) } else { Err(Violations { listed: found.listed, more: found.more }) }
    }
}

fn check_schema(schema: &Value, path: &str, depth: usize) -> Result<(), InputError> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(InputError::new(path, format!("nested more than {MAX_SCHEMA_DEPTH} levels deep")));
    }
    let Value::Object(map) = schema else {
        return Err(InputError::new(path, format!("expected a schema object, got {}", type_name(schema))));
    };
    for (key, value) in map {
        let at = join(path, key);
        match key.as_str() {
            "type" => check_type(value, &at)?,
            "properties" => {
                let Value::Object(properties) = value else {
                    return Err(expected(&at, "an object of property schemas", value));
                };
                for (name, property) in properties {
                    check_schema(property, &join(&at, name), depth + 1)?;
                }
            }
            "required" => {
                let Value::Array(names) = value else { return Err(expected(&at, "an array of property names", value)) };
                for (n, name) in names.iter().enumerate() {
                    if !name.is_string() {
                        return Err(expected(&index(&at, n), "a property name", name));
                    }
                }
            }
            "items" => check_schema(value, &at, depth + 1)?,
            "enum" => match value {
                Value::Array(values) if !values.is_empty() => {}
                Value::Array(_) => return Err(InputError::new(at, "empty: list at least one allowed value")),
                other => return Err(expected(&at, "an array of allowed values", other)),
            },
            "additionalProperties" if !value.is_boolean() => {
                return Err(expected(&at, "true or false (a schema here is not supported)", value));
            }
            "description" | "title" if !value.is_string() => return Err(expected(&at, "a string", value)),
            "additionalProperties" | "description" | "title" => {}
            other => {
                return Err(InputError::new(
                    at,
                    format!("`{other}` is not supported in a result schema; use only {}", KEYWORDS.join(", ")),
                ));
            }
        }
    }
    Ok(())
}

fn check_type(value: &Value, at: &str) -> Result<(), InputError> {
    let known = |name: &str| TYPES.contains(&name);
    match value {
        Value::String(name) if known(name) => Ok(()),
        Value::Array(names) if !names.is_empty() => {
            for (n, name) in names.iter().enumerate() {
                match name {
                    Value::String(name) if known(name) => {}
                    other => return Err(unknown_type(&index(at, n), other)),
                }
            }
            Ok(())
        }
        other => Err(unknown_type(at, other)),
    }
}

fn unknown_type(at: &str, value: &Value) -> InputError {
    InputError::new(at, format!("expected one of {} (or a list of them), got {}", TYPES.join(", "), brief(value)))
}

fn expected(at: &str, what: &str, got: &Value) -> InputError {
    InputError::new(at, format!("expected {what}, got {}", type_name(got)))
}

struct Found {
    listed: Vec<Violation>,
    more: usize,
}

impl Found {
    fn push(&mut self, path: &Path<'_>, problem: impl FnOnce() -> String) {
        if self.listed.len() < MAX_VIOLATIONS {
            self.listed.push(Violation { path: path.render(), problem: problem() });
        } else {
            self.more += 1;
        }
    }
}

/// Where the walk is, rendered only when a problem is found there: most
/// values pass, and building a path string for each would cost more than
/// the check.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root(&'a str),
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    fn render(&self) -> String {
        match self {
            Path::Root(root) => (*root).to_owned(),
            Path::Key(parent, key) => join(&parent.render(), key),
            Path::Index(parent, n) => index(&parent.render(), *n),
        }
    }
}

/// JSON Schema's rules for the supported keywords: `type` first (a value of
/// the wrong type is not looked into), then `enum`, then the object and
/// array keywords, which apply only to values of their type.
fn walk(schema: &Value, value: &Value, path: &Path<'_>, found: &mut Found) {
    let Value::Object(schema) = schema else { return };
    if let Some(types) = schema.get("type") {
        let matches = match types {
            Value::String(name) => has_type(value, name),
            Value::Array(names) => names.iter().filter_map(Value::as_str).any(|name| has_type(value, name)),
            _ => true,
        };
        if !matches {
            found.push(path, || {
                let wanted: Vec<&str> = match types {
                    Value::String(name) => vec![article(name)],
                    Value::Array(names) => names.iter().filter_map(Value::as_str).map(article).collect(),
                    _ => Vec::new(),
                };
                format!("expected {}, got {}", wanted.join(" or "), type_name(value))
            });
            return;
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        found.push(path, || {
            let listed: Vec<String> = allowed.iter().map(brief).collect();
            format!("expected one of {}, got {}", listed.join(", "), brief(value))
        });
    }
    match value {
        Value::Object(object) => walk_object(schema, object, path, found),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (n, item) in items.iter().enumerate() {
                    walk(item_schema, item, &Path::Index(path, n), found);
                }
            }
        }
        _ => {}
    }
}

fn walk_object(schema: &Map<String, Value>, object: &Map<String, Value>, path: &Path<'_>, found: &mut Found) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                found.push(&Path::Key(path, name), || "required".to_owned());
            }
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (key, item) in object {
        match properties.and_then(|p| p.get(key)) {
            Some(property) => walk(property, item, &Path::Key(path, key), found),
            None if closed => found.push(&Path::Key(path, key), || {
                let known: Vec<&str> = properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                if known.is_empty() {
                    "not allowed: this object has no properties".to_owned()
                } else {
                    format!("not a property of this object (expected one of: {})", known.join(", "))
                }
            }),
            None => {}
        }
    }
}

fn has_type(value: &Value, name: &str) -> bool {
    match (name, value) {
        ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("string", Value::String(_))
        | ("number", Value::Number(_))
        | ("boolean", Value::Bool(_))
        | ("null", Value::Null) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        _ => false,
    }
}

fn article(name: &str) -> &str {
    match name {
        "object" => "an object",
        "array" => "an array",
        "string" => "a string",
        "number" => "a number",
        "integer" => "an integer",
        "boolean" => "a boolean",
        other => other,
    }
}

/// A value as compact JSON, cut to 60 characters: enough to recognise it.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 { text } else { format!("{}…", text.chars().take(59).collect::<String>()) }
}
