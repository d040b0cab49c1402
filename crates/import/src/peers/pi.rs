//! pi's session files: a `session` header (`version`, `id`, `timestamp`,
//! `cwd`, and `parentSession` in a fork), then entries with
//! `id`/`parentId` forming a tree, branches in the same file.
//!
//! Entries: `message` (roles `user`; `assistant` with `text`, `thinking`
//! and `toolCall` blocks; `toolResult`; `bashExecution` and `custom`, which
//! keep their place as skipped entries), `model_change`, `compaction`
//! (`summary`, `firstKeptEntryId`, `details.readFiles/modifiedFiles`),
//! `branch_summary` (the summary of a branch left behind), and bookkeeping
//! that keeps its place (`thinking_level_change`, `label`, `session_info`,
//! `custom`). A fork (`--fork`) copies every entry of its source, every
//! branch, under the same ids.

use serde_json::Value;

use super::build::{self, Builder, Object, Source, content_text, skipped, text, time_of};
use super::model::{EntryKind, ForkedFrom, Format, PeerSession};

/// Whether `first` and `second` (the first two lines of a file) are pi's
/// header and first entry. seri's own older files open with
/// `{"type":"session"}` too, but never with a `version`, and their lines
/// are messages with a `role`, never `{"type":"message","message":…}`;
/// pi's version 1 files may lack the `version`.
pub(crate) fn looks_like(first: &Object, second: Option<&Object>) -> bool {
    let entry = |line: &Object| {
        text(line, "type").is_some_and(|kind| ENTRY_TYPES.contains(&kind)) && !line.contains_key("role")
    };
    text(first, "type") == Some("session")
        && (first.get("version").is_some_and(Value::is_number) || second.is_some_and(entry))
}

/// The types of pi's entries.
const ENTRY_TYPES: &[&str] = &[
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "label",
    "session_info",
    "custom",
    "custom_message",
];

/// Reads a file's lines.
pub(crate) fn parse(source: &(impl Source + ?Sized), sink: build::Sink<'_>) -> PeerSession {
    let mut builder = Builder::new(Format::Pi, sink);
    let mut header_seen = false;
    for (number, line) in build::lines(source) {
        let line = match line {
            Ok(line) => line,
            Err(reason) => {
                builder.skip(number, reason);
                continue;
            }
        };
        let kind = text(&line, "type").unwrap_or("");
        if kind == "session" {
            if header_seen {
                builder.skip(number, "a second `session` header");
            } else {
                header_seen = true;
                let session = &mut builder.session;
                session.id = text(&line, "id").map(str::to_owned);
                session.cwd = text(&line, "cwd").map(str::to_owned);
                session.forked_from =
                    text(&line, "parentSession").map(|source| ForkedFrom { session: source.to_owned(), before: None });
                builder.saw_time(time_of(&line, "timestamp"));
            }
            continue;
        }
        // Version 1 files, from before the tree, have no ids: each entry
        // follows the one before it.
        let (id, parent) = match text(&line, "id") {
            Some(id) => (id.to_owned(), text(&line, "parentId").map(str::to_owned)),
            None => (format!("line-{number}"), builder.last_id().map(str::to_owned)),
        };
        let at = time_of(&line, "timestamp");
        let kinds = match kind {
            "message" => message(&line, &mut builder.session),
            "model_change" => {
                let provider = text(&line, "provider").map(str::to_owned);
                let model = text(&line, "modelId").unwrap_or("").to_owned();
                let session = &mut builder.session;
                if session.model.is_none() {
                    session.model = Some(model.clone());
                    session.provider.clone_from(&provider);
                }
                vec![EntryKind::ModelChange { provider, model }]
            }
            "compaction" => {
                let details = build::object(&line, "details");
                let files = |key| {
                    details
                        .and_then(|details| details.get(key))
                        .and_then(Value::as_array)
                        .map(|files| files.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                        .unwrap_or_default()
                };
                vec![EntryKind::Compaction {
                    summary: text(&line, "summary").unwrap_or("").to_owned(),
                    first_kept: text(&line, "firstKeptEntryId").map(str::to_owned),
                    read_files: files("readFiles"),
                    modified_files: files("modifiedFiles"),
                }]
            }
            "branch_summary" => vec![EntryKind::BranchSummary {
                summary: text(&line, "summary").unwrap_or("").to_owned(),
                from: text(&line, "fromId").map(str::to_owned),
            }],
            "session_info" => {
                if let Some(name) = text(&line, "name") {
                    builder.session.title = Some(name.to_owned());
                }
                vec![skipped("`session_info` (bookkeeping)")]
            }
            "" => vec![skipped("an entry without a `type`")],
            kind => vec![skipped(format!("`{kind}` (bookkeeping)"))],
        };
        builder.line(number, &id, parent.as_deref(), at, kinds);
    }
    builder.finish()
}

/// A `message` entry.
fn message(line: &Object, session: &mut PeerSession) -> Vec<EntryKind> {
    let Some(message) = build::object(line, "message") else {
        return vec![skipped("a `message` entry without a message")];
    };
    let content = message.get("content").unwrap_or(&Value::Null);
    match text(message, "role").unwrap_or("") {
        "user" => match content {
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(Value::as_object)
                .map(|block| match text(block, "type") {
                    Some("text") => EntryKind::UserText { text: text(block, "text").unwrap_or("").to_owned() },
                    other => skipped(format!("a `{}` block", other.unwrap_or("untyped"))),
                })
                .collect(),
            content => vec![EntryKind::UserText { text: content_text(content) }],
        },
        "assistant" => {
            if session.model.is_none() {
                session.model = text(message, "model").map(str::to_owned);
                session.provider = text(message, "provider").map(str::to_owned);
            }
            let blocks = content.as_array().map(Vec::as_slice).unwrap_or_default();
            let kinds: Vec<EntryKind> = blocks
                .iter()
                .filter_map(Value::as_object)
                .map(|block| match text(block, "type") {
                    Some("text") => EntryKind::AssistantText { text: text(block, "text").unwrap_or("").to_owned() },
                    Some("thinking") => EntryKind::Thinking {
                        text: text(block, "thinking").unwrap_or("").to_owned(),
                        // On other APIs pi keeps the name of the field the
                        // reasoning came in here, not a signature.
                        signature: text(block, "thinkingSignature")
                            .filter(|_| text(message, "api") == Some("anthropic-messages"))
                            .map(str::to_owned),
                    },
                    Some("toolCall") => EntryKind::ToolCall {
                        call_id: text(block, "id").unwrap_or("").to_owned(),
                        name: text(block, "name").unwrap_or("").to_owned(),
                        arguments: block.get("arguments").cloned().unwrap_or(Value::Object(Object::new())),
                    },
                    other => skipped(format!("a `{}` block", other.unwrap_or("untyped"))),
                })
                .collect();
            if kinds.is_empty() {
                let why = text(message, "errorMessage").or_else(|| text(message, "stopReason")).unwrap_or("no content");
                return vec![skipped(format!("an answer with nothing in it ({why})"))];
            }
            kinds
        }
        "toolResult" => vec![EntryKind::ToolResult {
            call_id: text(message, "toolCallId").unwrap_or("").to_owned(),
            name: text(message, "toolName").map(str::to_owned),
            text: content_text(content),
            is_error: message.get("isError").and_then(Value::as_bool).unwrap_or(false),
        }],
        "bashExecution" => vec![skipped("a shell command the person ran (`!`)")],
        role => vec![skipped(format!("a `{role}` message"))],
    }
}
