//! opencode's sessions, as `opencode export <id>` writes them: one JSON
//! document `{info, messages: [{info, parts}]}`. opencode 1.18 keeps them in
//! a SQLite database (`~/.local/share/opencode/opencode.db`, whose `message`
//! and `part` rows hold the same `info` and part objects as JSON), which
//! [`super::opencode_db`] reads into this same document, session by session.
//! A fork copies its source's messages under new ids and names its source
//! only in its title (`… (fork #1)`): it copies an unnamed source.
//!
//! A conversation without branches: each part is an entry, in order. A
//! `tool` part is a call and, once finished, its result (`state.input`,
//! `state.output` or `state.error`). A compaction is a user message with a
//! `compaction` part, then an assistant message with `summary: true` whose
//! text is the summary. `step-start`, `step-finish`, `snapshot` and `patch`
//! parts are bookkeeping.

use serde_json::Value;

use super::ParseError;
use super::build::{self, Builder, Object, content_text, skipped, text};
use super::model::{EntryKind, Format, PeerSession};

/// The parts that record how a step went, not what was said.
const BOOKKEEPING: &[&str] = &["step-start", "step-finish", "snapshot", "patch"];

/// Whether `document` is an opencode export.
pub(crate) fn looks_like(document: &Object) -> bool {
    let id = build::object(document, "info").and_then(|info| text(info, "id"));
    id.is_some_and(|id| id.starts_with("ses_")) && document.get("messages").is_some_and(Value::is_array)
}

/// Reads an export's bytes.
pub(crate) fn parse(bytes: &[u8]) -> Result<PeerSession, ParseError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let document = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(document)) => document,
        Ok(_) => return Err(ParseError::NotAnExport("not a JSON object")),
        Err(_) => return Err(ParseError::NotAnExport("not JSON")),
    };
    if !looks_like(&document) {
        return Err(ParseError::NotAnExport("no `info` with a session id and `messages`"));
    }
    let mut builder = Builder::new(Format::Opencode, None);
    let empty = Object::new();
    let info = build::object(&document, "info").unwrap_or(&empty);
    let session = &mut builder.session;
    session.id = text(info, "id").map(str::to_owned);
    session.cwd = text(info, "directory").map(str::to_owned);
    session.title = text(info, "title").map(str::to_owned);
    // A fork (`run --fork`) copies its source's messages under new ids and
    // names its source nowhere but in its title, `… (fork #N)`.
    session.copies_unnamed_source = session.title.as_deref().is_some_and(is_fork_title);
    session.peer_version = text(info, "version").map(str::to_owned);
    if let Some(model) = build::object(info, "model") {
        session.model = text(model, "id").map(str::to_owned);
        session.provider = text(model, "providerID").map(str::to_owned);
    }
    builder.saw_time(build::object(info, "time").and_then(|time| build::time_of(time, "created")));
    let mut current_model: Option<String> = builder.session.model.clone();
    let messages = document.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (index, message) in messages.iter().enumerate() {
        let number = index as u64 + 1;
        let Some(message) = message.as_object() else {
            builder.skip(number, "a message that is not an object");
            continue;
        };
        let info = build::object(message, "info").unwrap_or(&empty);
        let role = text(info, "role").unwrap_or("");
        let at = build::object(info, "time").and_then(|time| build::time_of(time, "created"));
        let summary = info.get("summary").and_then(Value::as_bool) == Some(true);
        if role == "assistant"
            && let Some(model) = text(info, "modelID")
        {
            match &current_model {
                None => {
                    current_model = Some(model.to_owned());
                    builder.session.model = current_model.clone();
                    builder.session.provider = text(info, "providerID").map(str::to_owned);
                }
                Some(current) if current != model && !summary => {
                    current_model = Some(model.to_owned());
                    let provider = text(info, "providerID").map(str::to_owned);
                    let id = format!("{}.model", text(info, "id").unwrap_or("message"));
                    builder.linear(number, &id, at, vec![EntryKind::ModelChange { provider, model: model.to_owned() }]);
                }
                Some(_) => {}
            }
        }
        let parts = message.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        if summary {
            // The summarizer's answer: its text is the compaction's summary.
            let texts: Vec<String> = parts
                .iter()
                .filter_map(Value::as_object)
                .filter(|part| text(part, "type") == Some("text"))
                .map(|part| text(part, "text").unwrap_or("").to_owned())
                .collect();
            let compaction = EntryKind::Compaction {
                summary: texts.join("\n"),
                first_kept: None,
                read_files: Vec::new(),
                modified_files: Vec::new(),
            };
            builder.linear(number, text(info, "id").unwrap_or("summary"), at, vec![compaction]);
            continue;
        }
        for (place, part) in parts.iter().enumerate() {
            let Some(part) = part.as_object() else {
                builder.skip(number, "a part that is not an object");
                continue;
            };
            let kind = text(part, "type").unwrap_or("");
            if BOOKKEEPING.contains(&kind) {
                builder.skip(number, format!("a `{kind}` part (bookkeeping)"));
                continue;
            }
            let fallback = format!("{}.{place}", text(info, "id").unwrap_or("message"));
            let id = text(part, "id").unwrap_or(&fallback).to_owned();
            let kinds = match kind {
                "text" if part.get("synthetic").and_then(Value::as_bool) == Some(true) => {
                    vec![skipped("text opencode added (synthetic)")]
                }
                "text" if role == "user" => {
                    vec![EntryKind::UserText { text: text(part, "text").unwrap_or("").to_owned() }]
                }
                "text" => vec![EntryKind::AssistantText { text: text(part, "text").unwrap_or("").to_owned() }],
                "reasoning" => {
                    vec![EntryKind::Thinking { text: text(part, "text").unwrap_or("").to_owned(), signature: None }]
                }
                "tool" => tool(part),
                "compaction" => vec![skipped("the request to compact (the summary follows)")],
                kind => vec![skipped(format!("a `{kind}` part"))],
            };
            builder.linear(number, &id, at, kinds);
        }
    }
    Ok(builder.finish())
}

/// Whether `title` is one opencode gives a fork: its source's, then ` (fork #N)`.
fn is_fork_title(title: &str) -> bool {
    title
        .strip_suffix(')')
        .and_then(|rest| rest.rsplit_once(" (fork #"))
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A `tool` part: the call, and its result once it has one.
fn tool(part: &Object) -> Vec<EntryKind> {
    let call_id = text(part, "callID").unwrap_or("").to_owned();
    let name = text(part, "tool").unwrap_or("").to_owned();
    let empty = Object::new();
    let state = build::object(part, "state").unwrap_or(&empty);
    let arguments = state.get("input").cloned().unwrap_or(Value::Object(Object::new()));
    let mut kinds = vec![EntryKind::ToolCall { call_id: call_id.clone(), name: name.clone(), arguments }];
    match text(state, "status") {
        Some("completed") => kinds.push(EntryKind::ToolResult {
            call_id,
            name: Some(name),
            text: content_text(state.get("output").unwrap_or(&Value::Null)),
            is_error: false,
        }),
        Some("error") => kinds.push(EntryKind::ToolResult {
            call_id,
            name: Some(name),
            text: content_text(state.get("error").unwrap_or(&Value::Null)),
            is_error: true,
        }),
        _ => {}
    }
    kinds
}
