//! One line of a legacy file, read into what it says: the session header,
//! a user message, an assistant turn, or a tool result. Pure: the format
//! and every accepted variant are described in [`crate::legacy`].

use serde_json::{Map, Value};
use seri_core::{ModelRef, Thinking, Timestamp, ToolCall, ToolCallId};

use super::time;

/// What one line holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Line {
    /// Nothing: an empty or all-blank line.
    Blank,
    /// The session header.
    Header(Header),
    /// A message, answer or result, with the time it carried.
    Entry {
        /// When it happened, if the line said.
        at: Option<Timestamp>,
        /// What it is.
        entry: Entry,
    },
}

/// The facts of a `{"type":"session"}` line.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Header {
    pub(crate) id: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) created_at: Option<Timestamp>,
    /// The peer's id of the session this one was forked from, when the
    /// file names it (another agent's files).
    pub(crate) forked_from: Option<String>,
    /// Its first entries are copies of another session's that the file
    /// does not name (Claude Code's `--fork-session`).
    pub(crate) copies_unnamed_source: bool,
}

/// A line of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// `role: user`.
    User { content: String },
    /// `role: assistant`: thinking, then text, then calls, any of them absent;
    /// the model that wrote it, when the file says (another agent's files).
    Assistant { thinking: Option<Thinking>, content: String, calls: Vec<ToolCall>, model: Option<ModelRef> },
    /// `role: tool`: the answer to a call; `name` is taken from the call when absent.
    Tool { tool_call_id: ToolCallId, name: Option<String>, content: String, is_error: bool },
    /// Another agent compacted its session here ([`super::peer`]): its
    /// model was shown the summary in place of what came before.
    Compacted(Box<PeerCompaction>),
}

/// A compaction another agent made, as its file records it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PeerCompaction {
    /// The agent's own summary, verbatim.
    pub(crate) summary: String,
    /// The line of the first entry the agent kept after the summary; `None`
    /// when it kept nothing of what came before.
    pub(crate) first_kept_line: Option<u64>,
    /// Files the summarised part read, when the agent lists them (pi).
    pub(crate) read: Vec<String>,
    /// Files the summarised part changed, when the agent lists them (pi).
    pub(crate) modified: Vec<String>,
    /// Which agent wrote the summary (`claude-code`, `codex`, `pi`, `opencode`).
    pub(crate) peer: String,
    /// The model in use when it compacted, when the file says.
    pub(crate) model: Option<ModelRef>,
}

/// A line read, and what was not quite right about it but did not stop it
/// from being imported (a time that could not be read).
pub(crate) type Read = (Line, Vec<String>);

/// Reads one line (without its line break). `line_number` names the
/// generated ids of tool calls that have none. The error says why the line
/// cannot be imported.
pub(crate) fn read(text: &str, line_number: u64) -> Result<Read, String> {
    if text.trim().is_empty() {
        return Ok((Line::Blank, Vec::new()));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("not JSON: {}", e.to_string().replace(" at line 1 column ", " at column ")))?;
    let Value::Object(fields) = value else {
        return Err(format!("expected a JSON object, found {}", kind_of(&value)));
    };
    let fields = Fields(&fields);
    let mut notes = Vec::new();
    let at = match fields.get(&["timestamp", "createdAt", "created_at"]) {
        None | Some(Value::Null) => None,
        Some(value) => time::parse(value).map_err(|e| notes.push(format!("imported without its time: {e}"))).ok(),
    };
    let role = fields.get(&["role"]);
    match (fields.get(&["type"]), role) {
        (Some(Value::String(kind)), None) if kind == "session" => {
            let header = Header {
                id: fields.id("id")?,
                cwd: fields.string("cwd")?,
                title: fields.string("title")?,
                created_at: at,
                forked_from: None,
                copies_unnamed_source: false,
            };
            Ok((Line::Header(header), notes))
        }
        (Some(kind), None) => {
            Err(format!("unknown line type {kind}: expected a `session` header or a message with a `role`"))
        }
        (_, None) => Err("no `role`: expected `user`, `assistant` or `tool`".to_owned()),
        (_, Some(Value::String(role))) => {
            let entry = match role.as_str() {
                "user" => Entry::User { content: fields.content()?.ok_or("a user line needs `content`")? },
                "assistant" => assistant(&fields, line_number)?,
                "tool" => Entry::Tool {
                    tool_call_id: fields
                        .string_of(&["toolCallId", "tool_call_id"])?
                        .map(ToolCallId)
                        .ok_or("a tool line needs `toolCallId`, the id of the call it answers")?,
                    name: fields.string("name")?,
                    content: fields.content()?.unwrap_or_default(),
                    is_error: match fields.get(&["isError", "is_error"]) {
                        None | Some(Value::Null) => false,
                        Some(Value::Bool(b)) => *b,
                        Some(other) => return Err(format!("`isError` is {}, expected true or false", kind_of(other))),
                    },
                },
                other => return Err(format!("unknown role `{other}`: expected `user`, `assistant` or `tool`")),
            };
            Ok((Line::Entry { at, entry }, notes))
        }
        (_, Some(other)) => Err(format!("`role` is {}, expected a string", kind_of(other))),
    }
}

fn assistant(fields: &Fields<'_>, line_number: u64) -> Result<Entry, String> {
    let thinking = match fields.get(&["thinking"]) {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(Thinking { text: text.clone(), signature: None, encrypted_content: None }),
        Some(Value::Object(map)) => {
            let inner = Fields(map);
            let text = inner.string_of(&["text", "thinking"])?.unwrap_or_default();
            Some(Thinking { text, signature: inner.string("signature")?, encrypted_content: None })
        }
        Some(other) => return Err(format!("`thinking` is {}, expected a string or an object", kind_of(other))),
    };
    let calls = match fields.get(&["toolCalls", "tool_calls"]) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => {
            calls.iter().enumerate().map(|(i, call)| tool_call(call, i + 1, line_number)).collect::<Result<_, _>>()?
        }
        Some(other) => return Err(format!("`toolCalls` is {}, expected an array", kind_of(other))),
    };
    let content = fields.content()?.unwrap_or_default();
    if thinking.is_none() && content.is_empty() && calls.is_empty() {
        return Err("an assistant line with no content, thinking or tool calls".to_owned());
    }
    Ok(Entry::Assistant { thinking, content, calls, model: None })
}

/// One element of `toolCalls`: `{"id","name","arguments"}`, or the OpenAI
/// wire shape `{"id","type":"function","function":{"name","arguments"}}`.
fn tool_call(value: &Value, number: usize, line_number: u64) -> Result<ToolCall, String> {
    let Value::Object(map) = value else {
        return Err(format!("tool call {number} is {}, expected an object", kind_of(value)));
    };
    let outer = Fields(map);
    let inner = match outer.get(&["function"]) {
        Some(Value::Object(function)) => Fields(function),
        _ => Fields(map),
    };
    let name = inner.string("name")?.ok_or_else(|| format!("tool call {number} has no `name`"))?;
    let arguments = match inner.get(&["arguments"]) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(map)) => Value::Object(map.clone()),
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => object,
            _ => return Err(format!("the arguments of tool call {number} are a string that is not a JSON object")),
        },
        Some(other) => {
            return Err(format!("the arguments of tool call {number} are {}, expected an object", kind_of(other)));
        }
    };
    let id = outer.id("id")?.unwrap_or_else(|| format!("legacy-{line_number}-{number}"));
    Ok(ToolCall { id: ToolCallId(id), name, arguments })
}

/// A line's object, looked up by a field's camelCase or snake_case name.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    /// The first of `names` that is present.
    fn get(&self, names: &[&str]) -> Option<&Value> {
        names.iter().find_map(|name| self.0.get(*name))
    }

    fn string(&self, name: &str) -> Result<Option<String>, String> {
        self.string_of(&[name])
    }

    /// A text field; absent and `null` are `None`, anything but a string is an error.
    fn string_of(&self, names: &[&str]) -> Result<Option<String>, String> {
        match self.get(names) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(format!("`{}` is {}, expected a string", names[0], kind_of(other))),
        }
    }

    /// An id: a string, or a number written as its digits.
    fn id(&self, name: &str) -> Result<Option<String>, String> {
        match self.get(&[name]) {
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            _ => self.string(name),
        }
    }

    /// `content`: a string, or a list of text parts (strings, or objects
    /// `{"type":"text","text":…}`) joined with line breaks.
    fn content(&self) -> Result<Option<String>, String> {
        match self.get(&["content"]) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(Value::Array(parts)) => {
                let texts = parts.iter().enumerate().map(|(i, part)| match part {
                    Value::String(text) => Ok(text.as_str()),
                    Value::Object(map) => match (map.get("type"), map.get("text")) {
                        (Some(kind), _) if kind != "text" => {
                            Err(format!("content part {} has type {kind}; only text parts can be imported", i + 1))
                        }
                        (_, Some(Value::String(text))) => Ok(text.as_str()),
                        _ => Err(format!("content part {} has no `text`", i + 1)),
                    },
                    other => Err(format!("content part {} is {}, expected text", i + 1, kind_of(other))),
                });
                Ok(Some(texts.collect::<Result<Vec<_>, _>>()?.join("\n")))
            }
            Some(other) => Err(format!("`content` is {}, expected a string or a list of text parts", kind_of(other))),
        }
    }
}

/// A JSON value's kind, with an article, for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn entry(text: &str) -> Entry {
        match read(text, 7) {
            Ok((Line::Entry { entry, .. }, notes)) if notes.is_empty() => entry,
            other => panic!("not a plain entry: {other:?}"),
        }
    }

    #[track_caller]
    fn refused(text: &str) -> String {
        read(text, 7).unwrap_err()
    }

    #[test]
    fn reads_each_kind_of_line() {
        assert_eq!(read("", 1).unwrap(), (Line::Blank, vec![]));
        assert_eq!(read("  \t", 1).unwrap(), (Line::Blank, vec![]));
        let (header, _) =
            read(r#"{"type":"session","id":42,"cwd":"/w","title":"T","createdAt":"2025-03-01T09:30:00Z"}"#, 1).unwrap();
        assert_eq!(
            header,
            Line::Header(Header {
                id: Some("42".into()),
                cwd: Some("/w".into()),
                title: Some("T".into()),
                created_at: Some(Timestamp(1_740_821_400_000)),
                forked_from: None,
                copies_unnamed_source: false,
            })
        );
        assert_eq!(entry(r#"{"role":"user","content":"hi"}"#), Entry::User { content: "hi".into() });
        assert_eq!(
            entry(r#"{"role":"tool","tool_call_id":"c1","content":"ok","is_error":true}"#),
            Entry::Tool { tool_call_id: "c1".into(), name: None, content: "ok".into(), is_error: true }
        );
    }

    #[test]
    fn reads_tool_calls_in_both_shapes_and_arguments_as_objects_or_json_text() {
        let line = r#"{"role":"assistant","content":null,"thinking":{"text":"hm","signature":"s"},"tool_calls":[
            {"id":"a","name":"read_file","arguments":{"path":"x"}},
            {"id":"b","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}},
            {"name":"list"}]}"#
            .replace('\n', "");
        let Entry::Assistant { thinking, content, calls, .. } = entry(&line) else { panic!() };
        assert_eq!(
            thinking,
            Some(Thinking { text: "hm".into(), signature: Some("s".into()), encrypted_content: None })
        );
        assert_eq!(content, "");
        let calls: Vec<_> = calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone())).collect();
        assert_eq!(
            calls,
            [
                ("a", "read_file", json!({"path": "x"})),
                ("b", "bash", json!({"command": "ls"})),
                ("legacy-7-3", "list", json!({})),
            ]
        );
    }

    #[test]
    fn content_may_be_a_list_of_text_parts() {
        let line = r#"{"role":"user","content":["one",{"type":"text","text":"two"},{"text":"three"}]}"#;
        assert_eq!(entry(line), Entry::User { content: "one\ntwo\nthree".into() });
    }

    #[test]
    fn a_bad_time_is_a_note_not_a_refusal() {
        let (line, notes) = read(r#"{"role":"user","content":"hi","timestamp":"soon"}"#, 1).unwrap();
        assert_eq!(line, Line::Entry { at: None, entry: Entry::User { content: "hi".into() } });
        assert_eq!(
            notes,
            ["imported without its time: `soon` is not a time: expected RFC 3339 (such as 2025-03-01T09:30:00Z) \
              or Unix milliseconds"]
        );
    }

    #[test]
    fn says_why_a_line_is_refused() {
        let cases = [
            (r#"{"role":"user""#, "not JSON: EOF while parsing an object at column 14"),
            ("[1,2]", "expected a JSON object, found an array"),
            ("\"hi\"", "expected a JSON object, found a string"),
            (r#"{"content":"hi"}"#, "no `role`: expected `user`, `assistant` or `tool`"),
            (
                r#"{"type":"note"}"#,
                "unknown line type \"note\": expected a `session` header or a message with a `role`",
            ),
            (r#"{"role":"system","content":"x"}"#, "unknown role `system`: expected `user`, `assistant` or `tool`"),
            (r#"{"role":7}"#, "`role` is a number, expected a string"),
            (r#"{"role":"user"}"#, "a user line needs `content`"),
            (r#"{"role":"user","content":5}"#, "`content` is a number, expected a string or a list of text parts"),
            (
                r#"{"role":"user","content":[{"type":"image","url":"x"}]}"#,
                "content part 1 has type \"image\"; only text parts can be imported",
            ),
            (r#"{"role":"assistant"}"#, "an assistant line with no content, thinking or tool calls"),
            (r#"{"role":"assistant","toolCalls":{}}"#, "`toolCalls` is an object, expected an array"),
            (r#"{"role":"assistant","toolCalls":[{"id":"a"}]}"#, "tool call 1 has no `name`"),
            (
                r#"{"role":"assistant","toolCalls":[{"name":"x","arguments":"ls -l"}]}"#,
                "the arguments of tool call 1 are a string that is not a JSON object",
            ),
            (
                r#"{"role":"assistant","toolCalls":[{"name":"x","arguments":[1]}]}"#,
                "the arguments of tool call 1 are an array, expected an object",
            ),
            (r#"{"role":"tool","content":"x"}"#, "a tool line needs `toolCallId`, the id of the call it answers"),
            (r#"{"role":"tool","toolCallId":"a","isError":"yes"}"#, "`isError` is a string, expected true or false"),
        ];
        for (line, expected) in cases {
            assert_eq!(refused(line), expected, "{line}");
        }
    }
}
