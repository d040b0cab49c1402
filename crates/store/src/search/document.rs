//! What of an event the search index holds: its [`SearchKind`] and its
//! text, a pure function of the event's body. The append writes it in the
//! event's own transaction, the migration writes it for older events, and
//! a hit's snippet is cut from it again: one definition for all three.

use seri_core::{EventBody, Role};

/// The most bytes of one event the index holds. A tool result can be
/// megabytes (a whole file, a build log); its first part is what a person
/// searches for, and PostgreSQL refuses a `tsvector` over 1 MiB.
pub const MAX_INDEXED_BYTES: usize = 64 * 1024;

/// What kind of content a hit is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    /// A person's (or a trigger's) message.
    User,
    /// The model's answer.
    Assistant,
    /// The model's reasoning.
    Thinking,
    /// A tool call: its name and arguments (paths, commands, patterns).
    ToolCall,
    /// What a tool answered.
    ToolResult,
    /// A title or description the session was given.
    Title,
    /// A compaction's recap.
    Recap,
    /// A continuation's handoff: the `continue_session` call, or the
    /// projection a successor starts from.
    Handoff,
}

impl SearchKind {
    /// Every kind, in the order a help text lists them.
    pub const ALL: [SearchKind; 8] = [
        SearchKind::User,
        SearchKind::Assistant,
        SearchKind::Thinking,
        SearchKind::ToolCall,
        SearchKind::ToolResult,
        SearchKind::Title,
        SearchKind::Recap,
        SearchKind::Handoff,
    ];

    /// The snake_case name, as JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchKind::User => "user",
            SearchKind::Assistant => "assistant",
            SearchKind::Thinking => "thinking",
            SearchKind::ToolCall => "tool_call",
            SearchKind::ToolResult => "tool_result",
            SearchKind::Title => "title",
            SearchKind::Recap => "recap",
            SearchKind::Handoff => "handoff",
        }
    }
}

/// The kind and text the index holds of an event; `None` for an event
/// with nothing to find (a plan, a mode change, a rewind mark).
pub fn document(body: &EventBody) -> Option<(SearchKind, String)> {
    let (kind, text) = match body {
        EventBody::Message(m) => {
            let meta = m.meta.as_deref();
            // A rule's text is a file's, shown to the model, said by no one.
            if meta.is_some_and(|meta| meta.rule.is_some()) {
                return None;
            }
            let kind = match m.role {
                // The projection a successor starts from.
                _ if meta.is_some_and(|meta| meta.projection_of.is_some()) => SearchKind::Handoff,
                Role::Assistant => SearchKind::Assistant,
                Role::User => SearchKind::User,
            };
            let mut text = m.content.clone();
            for line in &m.context_lines {
                text.push('\n');
                text.push_str(line);
            }
            (kind, text)
        }
        EventBody::Thinking(t) => (SearchKind::Thinking, t.text.clone()),
        // A search the model ran is not content: indexed, every search
        // would find the call that asked for it.
        EventBody::ToolCall(call)
            if call.name == "read"
                && call
                    .arguments
                    .get("target")
                    .and_then(|t| t.as_str())
                    .is_some_and(|t| t.trim().starts_with("search:")) =>
        {
            return None;
        }
        EventBody::ToolCall(call) => {
            let kind = if call.name == "continue_session" { SearchKind::Handoff } else { SearchKind::ToolCall };
            let mut text = call.name.clone();
            strings_of(&call.arguments, &mut text);
            (kind, text)
        }
        EventBody::ToolResult(result) => (SearchKind::ToolResult, result.content.clone()),
        EventBody::StatusChanged(status) => {
            let text = [status.title.as_deref(), status.description.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n");
            (SearchKind::Title, text)
        }
        EventBody::ContextCompacted(c) => {
            let r = &c.recap;
            let mut text = [&r.goal, &r.progress, &r.blockers, &r.next_steps]
                .into_iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join("\n");
            for path in c.read.iter().chain(&c.modified) {
                text.push('\n');
                text.push_str(path);
            }
            (SearchKind::Recap, text)
        }
        EventBody::PlanUpdated(_)
        | EventBody::PermissionDenied(_)
        | EventBody::ContextRewound(_)
        | EventBody::ModelChanged(_)
        | EventBody::PermissionModeChanged(_)
        | EventBody::SandboxChanged(_)
        | EventBody::Unknown { .. } => return None,
    };
    let text = capped(text);
    let has_words = crate::search::query::words(&text).next().is_some();
    has_words.then_some((kind, text))
}

/// Every string of a JSON value, a line each: a tool call's paths,
/// commands and patterns, whatever its arguments are called.
fn strings_of(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::String(s) => {
            out.push('\n');
            out.push_str(s);
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        serde_json::Value::Object(fields) => fields.values().for_each(|v| strings_of(v, out)),
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {}
    }
}

/// `text` cut to [`MAX_INDEXED_BYTES`] at a character boundary.
fn capped(mut text: String) -> String {
    if text.len() > MAX_INDEXED_BYTES {
        let mut end = MAX_INDEXED_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// The words PostgreSQL's index is built from: the folded words of `text`,
/// space-separated, so its parser meets nothing but plain words and
/// splits them as SQLite's tokenizer splits the text (`lib.rs` is two
/// words on both, never a PostgreSQL "file" token).
pub fn index_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (_, word) in crate::search::query::words(text) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&crate::search::query::fold(word));
    }
    out
}
