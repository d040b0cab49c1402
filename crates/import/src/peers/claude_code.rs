//! Claude Code's session files: one JSON object a line, a tree of
//! `user`/`assistant`/`system`/`attachment` lines by `uuid`/`parentUuid`,
//! each `message` an Anthropic Messages message, and bookkeeping lines
//! without a `uuid` (`queue-operation`, `last-prompt`, `mode`, …).
//!
//! As 2.1 writes them: an answer is one line per content block (thinking,
//! text, `tool_use`), chained, sharing `message.id`; a result is a `user`
//! line of `tool_result` blocks. A compaction is a `system` line with
//! `subtype: "compact_boundary"` (its `parentUuid` null, the line before it
//! in `logicalParentUuid`, the messages kept after the summary in
//! `compactMetadata.preservedSegment`), then a `user` line with
//! `isCompactSummary: true` holding the summary. `/compact` itself leaves
//! `user` lines recording the local command, and a resumed turn a meta
//! line and a `<synthetic>` answer no model gave: each keeps its place in
//! the tree as a skipped entry.

use serde_json::Value;
use seri_core::Timestamp;

use super::build::{self, Builder, Object, Source, content_text, skipped, text, time_of};
use super::model::{EntryKind, Format, PeerSession};

/// The types of lines Claude Code writes that are not part of the conversation.
const BOOKKEEPING: &[&str] = &[
    "queue-operation",
    "last-prompt",
    "mode",
    "summary",
    "custom-title",
    "ai-title",
    "agent-name",
    "file-history-snapshot",
    "permission-mode",
    "tag",
    "pr-link",
];

/// The tags that open the `user` lines recording a local command (`/compact`, `!ls`).
const LOCAL_COMMAND: &[&str] =
    &["<command-name>", "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>", "<bash-input>"];

/// Whether `first` (the first line of a file) is one Claude Code writes.
pub(crate) fn looks_like(first: &Object) -> bool {
    let kind = text(first, "type").unwrap_or("");
    first.contains_key("sessionId") && (first.contains_key("uuid") || BOOKKEEPING.contains(&kind))
        || (kind == "summary" && first.contains_key("leafUuid"))
}

/// Whether a line is a subagent's (`isSidechain: true`).
fn is_sidechain(line: &Object) -> bool {
    line.get("isSidechain").and_then(Value::as_bool) == Some(true)
}

/// Reads a file's lines.
///
/// A subagent's lines (`isSidechain: true`) in a file of the main
/// conversation keep their place as skipped entries: they are the
/// subagent's, not the session's. A file of nothing but a subagent's lines
/// (Claude Code writes each subagent a file of its own) is that
/// subagent's conversation, and read as one.
pub(crate) fn parse(source: &(impl Source + ?Sized), sink: build::Sink<'_>) -> PeerSession {
    let mut builder = Builder::new(Format::ClaudeCode, sink);
    let subagent_file = build::lines(source)
        .filter_map(|(_, line)| line.ok())
        .filter(|line| line.contains_key("uuid"))
        .all(|line| is_sidechain(&line));
    // The newest compaction boundary's metadata, for the summary after it.
    let mut boundary: Option<Object> = None;
    // The earliest time on a line of the file's own bookkeeping, and the
    // time of its first entry: a fork's first entries are copies, dated
    // before the fork's own first line.
    let mut own_from: Option<Timestamp> = None;
    let mut first_entry_at: Option<Option<Timestamp>> = None;
    for (number, line) in build::lines(source) {
        let line = match line {
            Ok(line) => line,
            Err(reason) => {
                builder.skip(number, reason);
                continue;
            }
        };
        let kind = text(&line, "type").unwrap_or("");
        let session = &mut builder.session;
        for (field, key) in
            [(&mut session.id, "sessionId"), (&mut session.cwd, "cwd"), (&mut session.peer_version, "version")]
        {
            if field.is_none() {
                *field = text(&line, key).filter(|value| !value.is_empty()).map(str::to_owned);
            }
        }
        if kind == "custom-title" || kind == "ai-title" {
            let title = text(&line, "customTitle").or_else(|| text(&line, "aiTitle")).or_else(|| text(&line, "title"));
            if let Some(title) = title {
                // The newest title wins, and a person's over a generated one.
                if kind == "custom-title" || session.title.is_none() {
                    session.title = Some(title.to_owned());
                }
            }
        }
        let Some(uuid) = text(&line, "uuid") else {
            if let Some(at) = time_of(&line, "timestamp") {
                own_from = Some(own_from.map_or(at, |earliest| earliest.min(at)));
            }
            let reason = match kind {
                "" => "a line without a `type`".to_owned(),
                kind if BOOKKEEPING.contains(&kind) => format!("`{kind}` (bookkeeping)"),
                kind => format!("a `{kind}` line without a `uuid`"),
            };
            builder.skip(number, reason);
            continue;
        };
        // A compaction boundary starts a new root in the file, but follows
        // the line before it: its `logicalParentUuid`.
        let parent = text(&line, "parentUuid").or_else(|| text(&line, "logicalParentUuid"));
        let at = time_of(&line, "timestamp");
        first_entry_at.get_or_insert(at);
        let kinds = if is_sidechain(&line) && !subagent_file {
            vec![skipped("a subagent's line (sidechain)")]
        } else {
            match kind {
                "user" => user(&line, &mut boundary),
                "assistant" => assistant(&line, &mut builder.session),
                "system" if text(&line, "subtype") == Some("compact_boundary") => {
                    boundary = build::object(&line, "compactMetadata").cloned();
                    vec![skipped("a compaction boundary (its summary follows)")]
                }
                "system" => {
                    vec![skipped(format!("a `system` line ({})", text(&line, "subtype").unwrap_or("no subtype")))]
                }
                "attachment" => {
                    let what = build::object(&line, "attachment").and_then(|a| text(a, "type")).unwrap_or("of no type");
                    vec![skipped(format!("an attachment ({what})"))]
                }
                kind => vec![skipped(format!("a `{kind}` line"))],
            }
        };
        builder.line(number, uuid, parent, at, kinds);
    }
    if let (Some(own_from), Some(Some(first))) = (own_from, first_entry_at) {
        builder.session.copies_unnamed_source = first < own_from;
    }
    builder.finish()
}

/// A `user` line: the person's text, tool results, a compaction's summary,
/// or a line Claude Code added.
fn user(line: &Object, boundary: &mut Option<Object>) -> Vec<EntryKind> {
    let content = build::object(line, "message").and_then(|message| message.get("content")).unwrap_or(&Value::Null);
    if line.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
        let first_kept = boundary
            .take()
            .as_ref()
            .and_then(|metadata| build::object(metadata, "preservedSegment"))
            .and_then(|segment| text(segment, "headUuid"))
            .map(str::to_owned);
        let summary = content_text(content);
        return vec![EntryKind::Compaction { summary, first_kept, read_files: Vec::new(), modified_files: Vec::new() }];
    }
    if line.get("isMeta").and_then(Value::as_bool) == Some(true) {
        return vec![skipped("a meta line Claude Code added")];
    }
    let text_entry = |text: &str| {
        if LOCAL_COMMAND.iter().any(|tag| text.trim_start().starts_with(tag)) {
            skipped("the record of a local command")
        } else {
            EntryKind::UserText { text: text.to_owned() }
        }
    };
    match content {
        Value::String(text) => vec![text_entry(text)],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(Value::as_object)
            .map(|block| match text(block, "type") {
                Some("text") => text_entry(text(block, "text").unwrap_or("")),
                Some("tool_result") => EntryKind::ToolResult {
                    call_id: text(block, "tool_use_id").unwrap_or("").to_owned(),
                    name: None,
                    text: content_text(block.get("content").unwrap_or(&Value::Null)),
                    is_error: block.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                },
                other => skipped(format!("a `{}` block", other.unwrap_or("untyped"))),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// An `assistant` line: one content block of an answer, as 2.1 writes them
/// (older versions put the whole answer on one line; both read the same).
fn assistant(line: &Object, session: &mut PeerSession) -> Vec<EntryKind> {
    let Some(message) = build::object(line, "message") else {
        return Vec::new();
    };
    let model = text(message, "model");
    if model == Some("<synthetic>") {
        return vec![skipped("an answer Claude Code wrote itself (no model gave it)")];
    }
    if line.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
        return vec![skipped("an API error Claude Code recorded")];
    }
    if session.model.is_none() {
        session.model = model.map(str::to_owned);
    }
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        let text = content_text(message.get("content").unwrap_or(&Value::Null));
        return if text.is_empty() { Vec::new() } else { vec![EntryKind::AssistantText { text }] };
    };
    blocks
        .iter()
        .filter_map(Value::as_object)
        .map(|block| match text(block, "type") {
            Some("text") => EntryKind::AssistantText { text: text(block, "text").unwrap_or("").to_owned() },
            Some("thinking") => EntryKind::Thinking {
                text: text(block, "thinking").unwrap_or("").to_owned(),
                signature: text(block, "signature").filter(|s| !s.is_empty()).map(str::to_owned),
            },
            Some("tool_use") => EntryKind::ToolCall {
                call_id: text(block, "id").unwrap_or("").to_owned(),
                name: text(block, "name").unwrap_or("").to_owned(),
                arguments: block.get("input").cloned().unwrap_or(Value::Object(Object::new())),
            },
            Some("redacted_thinking") => skipped("redacted thinking"),
            other => skipped(format!("a `{}` block", other.unwrap_or("untyped"))),
        })
        .collect()
}
