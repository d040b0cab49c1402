//! `docs/src/reference/http-api.md` and `docs/src/reference/stream-json.md`,
//! rendered from the OpenAPI document `crates/server/openapi.json` (itself
//! generated from the server's wire types and checked fresh by the
//! server's tests): every route with its parameters, body and answers,
//! every WebSocket frame, every model, and every `stream-json` event.

use serde_json::Value;

use super::{cell, check_fresh, codes, header};

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// The OpenAPI document as committed.
fn document() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/openapi.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The names of a union's variants (`oneOf` of `$ref`s), in order.
fn variants(schema: &Value) -> Vec<String> {
    schema["oneOf"].as_array().into_iter().flatten().filter_map(|v| v["$ref"].as_str()).map(ref_name).collect()
}

fn ref_name(reference: &str) -> String {
    reference.rsplit('/').next().unwrap_or(reference).to_owned()
}

/// mdBook's id for a heading `` `Name` ``.
fn anchor(name: &str) -> String {
    name.to_lowercase()
}

/// Renders schemas for one page: names in `here` link within it, the rest
/// to `elsewhere`.
struct Renderer<'a> {
    here: &'a [String],
    elsewhere: &'a str,
}

impl Renderer<'_> {
    fn link(&self, name: &str) -> String {
        if self.here.iter().any(|h| h == name) {
            format!("[`{name}`](#{})", anchor(name))
        } else {
            format!("[`{name}`]({}#{})", self.elsewhere, anchor(name))
        }
    }

    /// A schema's type in a few words.
    fn kind(&self, schema: &Value) -> String {
        if let Some(reference) = schema["$ref"].as_str() {
            return self.link(&ref_name(reference));
        }
        for union in ["oneOf", "anyOf"] {
            if let Some(items) = schema[union].as_array() {
                return items.iter().map(|s| self.kind(s)).collect::<Vec<_>>().join(" or ");
            }
        }
        if let Some(all) = schema["allOf"].as_array() {
            return all.iter().map(|s| self.kind(s)).collect::<Vec<_>>().join(" and ");
        }
        if let Some(values) = schema["enum"].as_array() {
            return values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(" or ");
        }
        let types: Vec<String> = match &schema["type"] {
            Value::String(t) => vec![t.clone()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        let mut words: Vec<String> = types
            .iter()
            .map(|t| match t.as_str() {
                "array" => format!("array of {}", self.kind(&schema["items"])),
                "object" => match &schema["additionalProperties"] {
                    Value::Object(_) => format!("object of {}", self.kind(&schema["additionalProperties"])),
                    _ => "object".to_owned(),
                },
                other => other.to_owned(),
            })
            .collect();
        if words.is_empty() {
            words.push("any".to_owned());
        }
        let mut text = words.join(" or ");
        if let Some(format) = schema["format"].as_str() {
            text.push_str(&format!(" ({format})"));
        }
        let mut bounds = Vec::new();
        for (key, word) in [("minimum", "≥"), ("maximum", "≤"), ("minLength", "length ≥"), ("maxLength", "length ≤")]
        {
            if let Some(n) = schema[key].as_f64() {
                bounds.push(format!("{word} {n}"));
            }
        }
        if let Some(pattern) = schema["pattern"].as_str() {
            bounds.push(format!("matching `{pattern}`"));
        }
        if !bounds.is_empty() {
            text.push_str(&format!(", {}", bounds.join(", ")));
        }
        text
    }

    /// A schema as a section: its words, and its fields or its variants.
    fn section(&self, name: &str, schema: &Value, out: &mut String) {
        out.push_str(&format!("### `{name}`\n\n"));
        if let Some(description) = schema["description"].as_str() {
            out.push_str(&format!("{}\n\n", description.trim()));
        }
        let union = variants(schema);
        if !union.is_empty() {
            let by = schema["discriminator"]["propertyName"].as_str();
            out.push_str(&format!(
                "One of{}: {}.\n\n",
                by.map(|p| format!(", told apart by `{p}`")).unwrap_or_default(),
                union.iter().map(|v| self.link(v)).collect::<Vec<_>>().join(", ")
            ));
            return;
        }
        let Some(properties) = schema["properties"].as_object() else {
            out.push_str(&format!("{}.\n\n", upper_first(&self.kind(schema))));
            return;
        };
        let required: Vec<&str> =
            schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        out.push_str("| field | type | required | what it is |\n|---|---|---|---|\n");
        for (field, property) in properties {
            out.push_str(&format!(
                "| `{field}` | {} | {} | {} |\n",
                cell(&self.kind(property)),
                if required.contains(&field.as_str()) { "yes" } else { "" },
                cell(property["description"].as_str().unwrap_or(""))
            ));
        }
        out.push('\n');
    }
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().collect::<String>() + chars.as_str()).unwrap_or_default()
}

/// The stream events: `StreamEvent` and its variants.
fn stream_names(doc: &Value) -> Vec<String> {
    let mut names = vec!["StreamEvent".to_owned()];
    names.extend(variants(&doc["components"]["schemas"]["StreamEvent"]));
    names
}

fn http_page(doc: &Value) -> String {
    let schemas = doc["components"]["schemas"].as_object().cloned().unwrap_or_default();
    let stream = stream_names(doc);
    let here: Vec<String> = schemas.keys().filter(|k| !stream.contains(k)).cloned().collect();
    let r = Renderer { here: &here, elsewhere: "stream-json.md" };
    let mut out = header("HTTP API and WebSocket", "`crates/server/openapi.json`");
    out.push_str(&format!(
        "`seri serve`'s API ({}, OpenAPI {}), route by route, then the WebSocket's frames and every model. \
         The document itself is served at `/api/openapi.json` and committed as `crates/server/openapi.json`; \
         [Serving the API](../operator/serving-the-api.md) shows it in use. Every `/api` route but \
         `/api/health` and `/api/openapi.json` needs `Authorization: Bearer TOKEN` (or the web UI's \
         cookie); bad input is a 4xx with an [`ErrorResponse`](#errorresponse) and writes nothing.\n\n## Routes\n\n",
        doc["info"]["title"].as_str().unwrap_or("seri"),
        doc["openapi"].as_str().unwrap_or("3.1")
    ));
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for method in METHODS {
            let operation = &item[method];
            if operation.is_null() {
                continue;
            }
            out.push_str(&format!("### `{} {path}`\n\n", method.to_uppercase()));
            for key in ["summary", "description"] {
                if let Some(text) = operation[key].as_str() {
                    out.push_str(&format!("{}\n\n", text.trim()));
                }
            }
            let parameters: Vec<&Value> = operation["parameters"].as_array().into_iter().flatten().collect();
            if !parameters.is_empty() {
                out.push_str("| parameter | in | type | required | what it is |\n|---|---|---|---|---|\n");
                for p in parameters {
                    out.push_str(&format!(
                        "| `{}` | {} | {} | {} | {} |\n",
                        p["name"].as_str().unwrap_or(""),
                        p["in"].as_str().unwrap_or(""),
                        cell(&r.kind(&p["schema"])),
                        if p["required"].as_bool() == Some(true) { "yes" } else { "" },
                        cell(p["description"].as_str().unwrap_or(""))
                    ));
                }
                out.push('\n');
            }
            if let Some(content) = operation["requestBody"]["content"].as_object() {
                for (media, body) in content {
                    out.push_str(&format!("Body (`{media}`): {}.\n\n", r.kind(&body["schema"])));
                }
            }
            out.push_str("| status | body | when |\n|---|---|---|\n");
            for (status, response) in operation["responses"].as_object().into_iter().flatten() {
                let body = response["content"]
                    .as_object()
                    .map(|c| c.values().map(|m| r.kind(&m["schema"])).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "| {status} | {} | {} |\n",
                    cell(&body),
                    cell(response["description"].as_str().unwrap_or(""))
                ));
            }
            out.push('\n');
        }
    }
    out.push_str(
        "## WebSocket frames\n\n`GET /api/ws` upgrades to a WebSocket. A client sends \
         [`ClientFrame`](#clientframe)s and the server sends [`ServerFrame`](#serverframe)s, each a JSON object \
         whose `type` says which it is; a `run-event` frame's `event` is one \
         [`stream-json` event](stream-json.md).\n\n",
    );
    let mut frames = Vec::new();
    for union in ["ClientFrame", "ServerFrame"] {
        frames.push(union.to_owned());
        frames.extend(variants(&doc["components"]["schemas"][union]));
    }
    for name in &frames {
        r.section(name, &doc["components"]["schemas"][name], &mut out);
    }
    out.push_str("## Models\n\n");
    for (name, schema) in &schemas {
        if !frames.contains(name) && !stream.contains(name) {
            r.section(name, schema, &mut out);
        }
    }
    out
}

fn stream_page(doc: &Value) -> String {
    let stream = stream_names(doc);
    let r = Renderer { here: &stream, elsewhere: "http-api.md" };
    let mut out = header(
        "stream-json events",
        "`StreamEvent` in `crates/protocol/src/stream.rs`, through `crates/server/openapi.json`",
    );
    out.push_str(&format!(
        "`seri -p TEXT --output-format stream-json` prints one JSON object per line as the run proceeds, each \
         one of the events below ({}), and ends with the same object `--output-format json` prints, with \
         `\"type\": \"result\"`: `session_id`, `result`, `continued_to_session_id`, `status` (`succeeded`, \
         `max_turns` or `failed`, with `error` when it failed), `turns` and `usage`. The same events are the \
         `event` of the API's `run-event` WebSocket frames. Every key is snake_case. \
         [Using seri](../guide/using-seri.md) shows them in use.\n\n## Events\n\n",
        codes(stream.iter().skip(1).filter_map(|n| {
            doc["components"]["schemas"][n]["properties"]["type"]["enum"][0].as_str().map(str::to_owned)
        }))
    ));
    for name in &stream {
        r.section(name, &doc["components"]["schemas"][name], &mut out);
    }
    out
}

#[test]
fn the_api_and_stream_json_references_are_fresh() {
    let doc = document();
    assert!(variants(&doc["components"]["schemas"]["StreamEvent"]).len() > 5, "StreamEvent is a union of events");
    check_fresh("http-api.md", &http_page(&doc));
    check_fresh("stream-json.md", &stream_page(&doc));
}
