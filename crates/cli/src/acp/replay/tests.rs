//! A lineage replayed for `session/load`, snapshot-tested.

use std::path::Path;

use serde_json::json;
use seri_core::{
    ContinuationId, EventId, Message, MessageMeta, PermissionMode, PermissionModeChanged, Plan, PlanStep, PlanUpdated,
    Seq, SessionId, Thinking, Timestamp, ToolCall, ToolCallId, ToolResult,
};

use super::*;

fn events(bodies: Vec<EventBody>) -> Vec<Event> {
    let session = SessionId::from_bytes([1; 16]);
    bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| Event {
            id: EventId::from_bytes([i as u8 + 1; 16]),
            session_id: session,
            seq: Seq(i as u64 + 1),
            at: Timestamp(0),
            body,
        })
        .collect()
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> EventBody {
    EventBody::ToolCall(ToolCall { id: ToolCallId::from(id), name: name.to_owned(), arguments })
}

fn result(id: &str, name: &str, content: &str, is_error: bool) -> EventBody {
    EventBody::ToolResult(ToolResult {
        tool_call_id: ToolCallId::from(id),
        name: name.to_owned(),
        content: content.to_owned(),
        is_error,
        ..ToolResult::default()
    })
}

#[test]
fn a_lineage_replays_as_the_editor_would_have_seen_it() {
    let root = events(vec![
        EventBody::Message(Message::user("read a.rs")),
        EventBody::Thinking(Thinking { text: "Looking.".to_owned(), ..Thinking::default() }),
        call("t1", "read_file", json!({"path": "a.rs"})),
        result("t1", "read_file", "fn a() {}", false),
        call("t2", "bash", json!({"command": "rm -rf /"})),
        result("t2", "bash", "refused: not allowed", true),
        call("t3", "edit", json!({"path": "a.rs", "old": "a", "new": "b"})),
        EventBody::PermissionModeChanged(PermissionModeChanged { mode: PermissionMode::Plan }),
        EventBody::PlanUpdated(PlanUpdated {
            plan: Some(Plan {
                steps: vec![PlanStep { text: "Read".to_owned(), status: StepStatus::Done }],
                ..Plan::default()
            }),
        }),
        EventBody::Message(Message::assistant("It is one function.")),
    ]);
    let projection = Message {
        meta: Some(Box::new(MessageMeta {
            projection_of: Some(ContinuationId::from_bytes([9; 16])),
            ..MessageMeta::default()
        })),
        ..Message::user("<projection of the session before>")
    };
    let successor = events(vec![EventBody::Message(projection), EventBody::Message(Message::assistant("Going on."))]);
    let parts = [
        Part { short: "root0000000000a".to_owned(), title: "Reading", events: &root },
        Part { short: "next0000000000b".to_owned(), title: "Next part", events: &successor },
    ];
    let updates = replay(&parts, Path::new("/work"));
    insta::assert_json_snapshot!(updates);
}

#[test]
fn turns_a_rewind_took_back_are_not_replayed() {
    let part = events(vec![
        EventBody::Message(Message::user("first")),
        EventBody::Message(Message::assistant("one")),
        EventBody::Message(Message::user("taken back")),
        EventBody::Message(Message::assistant("gone")),
        EventBody::ContextRewound(seri_core::ContextRewound::before_turn(Seq(3))),
        EventBody::Message(Message::user("instead")),
    ]);
    let parts = [Part { short: "s".to_owned(), title: "t", events: &part }];
    let texts: Vec<String> = replay(&parts, Path::new("/work"))
        .iter()
        .map(|update| serde_json::to_value(update).unwrap()["content"]["text"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(texts, ["first", "one", "instead"]);
}
