//! Codex's rollout files: `{timestamp, type, payload}` lines (0.171 adds an
//! `ordinal`), one conversation without branches.
//!
//! The conversation is in `response_item` lines (`message`, `reasoning`,
//! `function_call` with its `arguments` as a JSON string and a `call_id`,
//! `function_call_output`, `custom_tool_call`…). `session_meta` is the
//! header (a fork's names `forked_from_id` and the ordinal it starts
//! before: the fork does not repeat its source). `turn_context` says the
//! model of each turn. A compaction is a `compacted` line whose `message`
//! is the summary; the summarizer's answer was recorded just before it as
//! an ordinary assistant message, which is skipped as the compaction's
//! copy. `event_msg` lines are the interface's copy of the same
//! conversation; they and `world_state`, `token_usage_record` are left out.
//! The instructions and context Codex sends as `developer` and `user`
//! messages (`<environment_context>`, AGENTS.md, skills) are kept in place
//! as skipped entries.

use serde_json::Value;

use super::build::{self, Builder, Object, Source, content_text, skipped, text, time_of};
use super::model::{EntryKind, ForkedFrom, Format, PeerSession};

/// The line types of Codex's rollouts.
const TYPES: &[&str] = &["session_meta", "response_item", "event_msg", "turn_context", "compacted"];

/// How the context Codex adds to a conversation as user messages begins.
const INJECTED: &[&str] = &["<environment_context>", "<user_instructions>", "# AGENTS.md", "<skills_instructions>"];

/// Whether `first` (the first line of a file) is one Codex writes.
pub(crate) fn looks_like(first: &Object) -> bool {
    first.contains_key("payload") && text(first, "type").is_some_and(|kind| TYPES.contains(&kind))
}

/// Reads a file's lines.
pub(crate) fn parse(source: &(impl Source + ?Sized), sink: build::Sink<'_>) -> PeerSession {
    let mut builder = Builder::new(Format::Codex, sink);
    let mut header_seen = false;
    let mut current_model: Option<String> = None;
    for (number, line) in build::lines(source) {
        let line = match line {
            Ok(line) => line,
            Err(reason) => {
                builder.skip(number, reason);
                continue;
            }
        };
        let kind = text(&line, "type").unwrap_or("");
        let empty = Object::new();
        let payload = build::object(&line, "payload").unwrap_or(&empty);
        let at = time_of(&line, "timestamp");
        let id = match line.get("ordinal").and_then(Value::as_u64) {
            Some(ordinal) => ordinal.to_string(),
            None => format!("line-{number}"),
        };
        match kind {
            "session_meta" if !header_seen => {
                header_seen = true;
                header(&mut builder.session, payload);
                builder.saw_time(time_of(payload, "timestamp").or(at));
            }
            "session_meta" => builder.skip(number, "a second `session_meta`"),
            "response_item" => {
                let kinds = response_item(payload);
                builder.linear(number, &id, at, kinds);
            }
            "compacted" => {
                let summary = text(payload, "message").unwrap_or("").to_owned();
                // The summarizer's answer, recorded before the compaction
                // as if it were the conversation's.
                if let Some(entry) = builder.last_entry_mut()
                    && let EntryKind::AssistantText { text } = &entry.kind
                    && !text.is_empty()
                    && summary.ends_with(text.as_str())
                {
                    entry.kind = skipped("the summarizer's answer (the compaction after it holds it)");
                }
                let compaction = EntryKind::Compaction {
                    summary,
                    first_kept: None,
                    read_files: Vec::new(),
                    modified_files: Vec::new(),
                };
                builder.linear(number, &id, at, vec![compaction]);
            }
            "turn_context" => match text(payload, "model") {
                Some(model) if current_model.as_deref().is_some_and(|current| current != model) => {
                    current_model = Some(model.to_owned());
                    let change = EntryKind::ModelChange { provider: None, model: model.to_owned() };
                    builder.linear(number, &id, at, vec![change]);
                }
                model => {
                    if current_model.is_none() {
                        current_model = model.map(str::to_owned);
                        if builder.session.model.is_none() {
                            builder.session.model = current_model.clone();
                        }
                    }
                    builder.skip(number, "`turn_context` (bookkeeping)");
                }
            },
            "event_msg" => builder
                .skip(number, format!("`event_msg` {} (the interface's copy)", text(payload, "type").unwrap_or("?"))),
            "" => builder.skip(number, "a line without a `type`"),
            kind => builder.skip(number, format!("`{kind}` (bookkeeping)")),
        }
    }
    builder.finish()
}

/// The facts of the `session_meta` payload.
fn header(session: &mut PeerSession, payload: &Object) {
    session.id = text(payload, "id").map(str::to_owned);
    session.cwd = text(payload, "cwd").map(str::to_owned);
    session.provider = text(payload, "model_provider").map(str::to_owned);
    session.peer_version = text(payload, "cli_version").map(str::to_owned);
    session.model = text(payload, "model").map(str::to_owned);
    session.forked_from = text(payload, "forked_from_id").map(|source| ForkedFrom {
        session: source.to_owned(),
        before: payload.get("forked_from_ordinal_exclusive").and_then(Value::as_u64).map(|o| o.to_string()),
    });
}

/// The entries of one `response_item`.
fn response_item(payload: &Object) -> Vec<EntryKind> {
    let item = text(payload, "type").unwrap_or("");
    match item {
        "message" => {
            let role = text(payload, "role").unwrap_or("");
            let content = content_text(payload.get("content").unwrap_or(&Value::Null));
            match role {
                "user" if INJECTED.iter().any(|tag| content.trim_start().starts_with(tag)) => {
                    vec![skipped("context Codex added as a user message")]
                }
                "user" => vec![EntryKind::UserText { text: content }],
                "assistant" => vec![EntryKind::AssistantText { text: content }],
                role => vec![skipped(format!("instructions Codex sent (a `{role}` message)"))],
            }
        }
        "reasoning" => {
            let summary = content_text(payload.get("summary").unwrap_or(&Value::Null));
            let text =
                if summary.is_empty() { content_text(payload.get("content").unwrap_or(&Value::Null)) } else { summary };
            if text.is_empty() {
                vec![skipped("reasoning with no readable text (encrypted)")]
            } else {
                vec![EntryKind::Thinking { text, signature: None }]
            }
        }
        "function_call" | "custom_tool_call" | "local_shell_call" => {
            let call_id = text(payload, "call_id").or_else(|| text(payload, "id")).unwrap_or("").to_owned();
            let name = match item {
                "local_shell_call" => "local_shell".to_owned(),
                _ => text(payload, "name").unwrap_or("").to_owned(),
            };
            let arguments = match item {
                "function_call" => {
                    let raw = text(payload, "arguments").unwrap_or("");
                    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
                }
                "custom_tool_call" => Value::String(text(payload, "input").unwrap_or("").to_owned()),
                _ => payload.get("action").cloned().unwrap_or(Value::Null),
            };
            vec![EntryKind::ToolCall { call_id, name, arguments }]
        }
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            let call_id = text(payload, "call_id").unwrap_or("").to_owned();
            let (text, is_error) = match payload.get("output") {
                // Older releases wrote `{content, success}` (or that as a string).
                Some(Value::Object(output)) => output_object(output),
                Some(Value::String(raw)) => match serde_json::from_str::<Value>(raw) {
                    Ok(Value::Object(output)) if output.contains_key("content") => output_object(&output),
                    _ => (raw.clone(), false),
                },
                Some(other) => (content_text(other), false),
                None => (String::new(), false),
            };
            vec![EntryKind::ToolResult { call_id, name: None, text, is_error }]
        }
        item => vec![skipped(format!("a `{item}` item"))],
    }
}

/// `{content, success}`: the text, and whether it failed.
fn output_object(output: &Object) -> (String, bool) {
    let text = content_text(output.get("content").unwrap_or(&Value::Null));
    (text, output.get("success").and_then(Value::as_bool) == Some(false))
}
