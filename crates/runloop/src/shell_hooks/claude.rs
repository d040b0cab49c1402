//! What a hook written for Claude Code reads, made from seri's own facts:
//! a tool call in Claude Code's names (`Edit` with `file_path`,
//! `old_string`, `new_string`), and a session as the JSONL transcript
//! Claude Code keeps (`transcript_path`). Pure.

use std::path::Path;

use serde_json::{Map, Value, json};
use seri_core::{Actor, Event, EventBody, Role, SessionId};

/// Claude Code's name for seri's tool, and the call's arguments in Claude
/// Code's names (a path made absolute, as Claude Code gives it); `None`
/// for a tool Claude Code has no counterpart of.
pub fn tool_input(tool: &str, arguments: &Value, cwd: &Path) -> Option<(&'static str, Value)> {
    let args = arguments.as_object()?;
    let absolute = |key: &str| {
        args.get(key).and_then(Value::as_str).map(|p| Value::String(cwd.join(p).to_string_lossy().into_owned()))
    };
    let mut out = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            out.insert(key.to_owned(), value);
        }
    };
    let name = match tool {
        "bash" => {
            put("command", args.get("command").cloned());
            put("timeout", args.get("timeoutMs").cloned());
            "Bash"
        }
        "edit" => {
            put("file_path", absolute("path"));
            put("old_string", args.get("old").cloned());
            put("new_string", args.get("new").cloned());
            put("replace_all", Some(args.get("replaceAll").cloned().unwrap_or(Value::Bool(false))));
            "Edit"
        }
        "write_file" => {
            put("file_path", absolute("path"));
            put("content", args.get("content").cloned());
            "Write"
        }
        "read_file" => {
            put("file_path", absolute("path"));
            put("offset", args.get("offset").cloned());
            put("limit", args.get("limit").cloned());
            "Read"
        }
        "grep" => {
            put("pattern", args.get("pattern").cloned());
            put("path", absolute("path"));
            put("glob", args.get("glob").cloned());
            "Grep"
        }
        "list" => {
            put("pattern", Some(args.get("glob").cloned().unwrap_or_else(|| json!("**/*"))));
            put("path", absolute("path"));
            "Glob"
        }
        "delegate" => {
            put("prompt", args.get("task").cloned());
            "Task"
        }
        _ => return None,
    };
    Some((name, Value::Object(out)))
}

/// The session's events as Claude Code's transcript: one JSON object a
/// line, `user` and `assistant` entries chained by `parentUuid`, the
/// model's text and tool calls as content blocks and tool results as a
/// user entry's `tool_result` blocks. What Claude Code has no entry for
/// (titles, plans, modes) is left out.
pub fn transcript(events: &[Event], session: SessionId, cwd: &Path) -> String {
    let mut out = String::new();
    let mut parent: Option<String> = None;
    let cwd = cwd.to_string_lossy();
    for event in events {
        let (kind, message) = match &event.body {
            EventBody::Message(message) => {
                let role = match message.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                let content = match message.role {
                    Role::Assistant => json!([{ "type": "text", "text": message.content }]),
                    _ => json!(message.content),
                };
                let mut body = json!({ "role": role, "content": content });
                if message.actor == Actor::System {
                    body["seri_actor"] = json!("system");
                }
                (role, body)
            }
            EventBody::Thinking(thinking) => (
                "assistant",
                json!({ "role": "assistant", "content": [{ "type": "thinking", "thinking": thinking.text }] }),
            ),
            EventBody::ToolCall(call) => {
                let (name, input) = tool_input(&call.name, &call.arguments, Path::new(cwd.as_ref()))
                    .unwrap_or((call.name.as_str(), call.arguments.clone()));
                let block = json!({ "type": "tool_use", "id": call.id.to_string(), "name": name, "input": input });
                ("assistant", json!({ "role": "assistant", "content": [block] }))
            }
            EventBody::ToolResult(result) => {
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": result.tool_call_id.to_string(),
                    "content": result.content,
                    "is_error": result.is_error,
                });
                ("user", json!({ "role": "user", "content": [block] }))
            }
            _ => continue,
        };
        let uuid = event.id.to_string();
        let line = json!({
            "parentUuid": parent,
            "isSidechain": false,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session.to_string(),
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": event.at.to_string(),
        });
        out.push_str(&line.to_string());
        out.push('\n');
        parent = Some(uuid);
    }
    out
}

#[cfg(test)]
mod tests;
