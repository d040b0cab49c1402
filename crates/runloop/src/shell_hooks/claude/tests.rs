//! A tool call and a session in Claude Code's shapes.

use serde_json::json;
use seri_core::{EventId, Message, Seq, Thinking, Timestamp, ToolCall, ToolCallId, ToolResult};

use super::*;

#[test]
fn each_tool_call_reads_as_claude_codes_call() {
    let cwd = Path::new("/work/project");
    let calls = [
        ("bash", json!({"command": "npm test", "timeoutMs": 5000})),
        ("edit", json!({"path": "src/main.rs", "old": "a", "new": "b"})),
        ("edit", json!({"path": "/abs/x.rs", "old": "a", "new": "b", "replaceAll": true})),
        ("write_file", json!({"path": "notes.txt", "content": "hi"})),
        ("read_file", json!({"path": "README.md", "offset": 10, "limit": 20})),
        ("grep", json!({"pattern": "fn main", "glob": "*.rs"})),
        ("list", json!({"path": "src", "glob": "**/*.rs"})),
        ("delegate", json!({"task": "Find the bug."})),
        ("mcp__docs__search", json!({"q": "x"})),
    ];
    let shown: Vec<Value> = calls
        .iter()
        .map(|(tool, args)| match tool_input(tool, args, cwd) {
            Some((name, input)) => json!({ "seri": tool, "tool_name": name, "tool_input": input }),
            None => json!({ "seri": tool, "tool_name": null }),
        })
        .collect();
    insta::assert_json_snapshot!(shown);
}

#[test]
fn a_session_reads_as_claude_codes_transcript() {
    let session: SessionId = "01a22b56-d880-7000-8000-000000000001".parse().unwrap();
    let at = Timestamp::parse("2026-12-07T10:00:00Z").unwrap();
    let id = |n: u8| -> EventId { format!("01a22b56-d880-7000-8000-0000000001{n:02x}").parse().unwrap() };
    let call_id: ToolCallId = "c1".into();
    let bodies = vec![
        EventBody::Message(Message::user("Fix the test.")),
        EventBody::Thinking(Thinking { text: "Look first.".into(), ..Thinking::default() }),
        EventBody::ToolCall(ToolCall {
            id: call_id.clone(),
            name: "edit".into(),
            arguments: json!({"path": "a.rs", "old": "1", "new": "2"}),
        }),
        EventBody::ToolResult(ToolResult {
            tool_call_id: call_id,
            name: "edit".into(),
            content: "Edited a.rs.".into(),
            is_error: false,
            ..ToolResult::default()
        }),
        EventBody::Message(Message::assistant("Fixed.")),
    ];
    let events: Vec<Event> = bodies
        .into_iter()
        .enumerate()
        .map(|(n, body)| Event { id: id(n as u8), session_id: session, seq: Seq(n as u64 + 1), at, body })
        .collect();
    let lines: Vec<Value> = transcript(&events, session, Path::new("/work/project"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    insta::assert_json_snapshot!(lines);
}
