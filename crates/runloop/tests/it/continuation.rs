//! The continuation runtime end to end: the verb, the successor, the edge,
//! the predecessor's turn ending, and the successor answering. One module per
//! part of the continuation document; the helpers here are shared by them.

mod atomicity;
mod attachments;
mod cap;
mod handoff;
mod input;
mod lineage;
mod notify;
mod plan;
mod prompt;
mod reasons;
mod replay;
mod sources;
mod window;

use serde_json::{Value, json};
use seri_core::{Actor, AgentId, ContinueReason, EventBody, Role, SessionId};
use seri_runloop::RunStatus;

use crate::support::{Harness, call, text};

/// The usual `continue_session` arguments, with `reason`.
fn continue_args(reason: &str) -> Value {
    json!({
        "reason": reason,
        "title": "Trip planning",
        "description": "Planning the Lisbon trip",
        "handoff": {
            "purpose": "Help the person plan a trip to Lisbon.",
            "currentRequest": "Find a hotel near the river.",
            "establishedFacts": ["Dates: 3-7 May"],
            "nextActions": ["Propose three hotels"]
        }
    })
}

pub(crate) fn continue_call(id: &str, reason: &str) -> Value {
    call(id, "continue_session", continue_args(reason))
}

/// Every error tool result in `session`, in order.
fn error_results(h: &Harness, session: SessionId) -> Vec<String> {
    h.events(session)
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ToolResult(r) if r.is_error => Some(r.content),
            _ => None,
        })
        .collect()
}

/// Replaces each id with its placeholder.
fn redact(text: &str, names: &[(SessionId, &str)]) -> String {
    names.iter().fold(text.to_owned(), |text, (id, name)| text.replace(&id.to_string(), name))
}

/// Request `index` of the log, tools left out (the tools crate snapshots
/// their schemas) and ids replaced by placeholders.
fn logged_request(h: &Harness, index: usize, names: &[(SessionId, &str)]) -> Value {
    let mut request = h.requests()[index].clone();
    request["tools"] = Value::Null;
    serde_json::from_str(&redact(&request.to_string(), names)).unwrap()
}

/// The number of sessions, edges and events in the whole database, read
/// with SQL so nothing the store's API filters can hide a leftover.
fn row_counts(h: &Harness) -> (i64, i64, i64) {
    let db = rusqlite::Connection::open(h.store.path()).unwrap();
    let count = |table: &str| db.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap();
    (count("sessions"), count("session_continuations"), count("session_events"))
}

/// `PRAGMA integrity_check` of the database file.
fn integrity(h: &Harness) -> String {
    let db = rusqlite::Connection::open(h.store.path()).unwrap();
    db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap()
}

#[tokio::test]
async fn a_continuation_creates_a_successor_that_answers_and_ends_the_predecessors_turn() {
    let h = Harness::new(json!([continue_call("cont_1", "topic_change"), text("Here are three hotels.")]));
    let outcomes = h.send("New topic: find me a hotel in Lisbon").await;
    assert_eq!(outcomes.len(), 2, "the predecessor's run, then the successor's");
    let (first, second) = (&outcomes[0], &outcomes[1]);
    assert_eq!(first.status, RunStatus::Succeeded);
    let continued = first.continued_to.clone().expect("continued");
    assert_eq!(continued.title, "Trip planning");
    assert_eq!(continued.reason, ContinueReason::TopicChange);
    assert_eq!(second.session_id, continued.session_id);
    assert_eq!(second.result.as_deref(), Some("Here are three hotels."));
    assert_eq!(h.requests().len(), 2, "no further request for the predecessor");

    // The predecessor gained only the tool_call/tool_result pair after the answer.
    let transcript = h.transcript(h.session).replace(&continued.session_id.to_string(), "<SUCCESSOR>");
    insta::assert_snapshot!("continuation_predecessor_transcript", transcript);

    // The successor starts with the projection (system) and the copied message.
    let events = h.events(continued.session_id);
    let first_two: Vec<_> = events.iter().take(2).map(|e| e.body.as_message().cloned().unwrap()).collect();
    assert_eq!((first_two[0].role, first_two[0].actor), (Role::User, Actor::System));
    assert_eq!(first_two[0].meta().projection_of, Some(continued.continuation_id));
    assert_eq!(first_two[1].content, "New topic: find me a hotel in Lisbon");
    let from = first_two[1].meta().continued_from.unwrap();
    assert_eq!(from.session_id, h.session);

    let store = h.store.agent(&AgentId::local());
    let predecessor = store.info(h.session).unwrap();
    let successor = store.info(continued.session_id).unwrap();
    assert_eq!(predecessor.continued_to.as_ref().map(|l| l.session_id), Some(continued.session_id));
    assert_eq!(successor.continued_from.as_ref().map(|l| l.session_id), Some(h.session));
    assert_eq!(successor.title, "Trip planning");

    let mut request = h.requests()[1].clone();
    request["tools"] = Value::Null;
    let redacted = request
        .to_string()
        .replace(&h.session.to_string(), "<PREDECESSOR>")
        .replace(&continued.session_id.to_string(), "<SUCCESSOR>");
    let redacted: Value = serde_json::from_str(&redacted).unwrap();
    insta::assert_json_snapshot!("continuation_successor_first_request", redacted);
}

#[tokio::test]
async fn a_successor_goes_on_with_the_model_chosen_in_its_predecessor() {
    let h = Harness::new(json!([continue_call("cont_1", "topic_change"), text("Here are three hotels.")]));
    let chosen = seri_core::ModelRef::new("script", "chosen-later");
    h.runtime.set_model(h.session, Some(chosen.clone())).unwrap();
    let outcomes = h.send("New topic: find me a hotel in Lisbon").await;
    let successor = outcomes[0].continued_to.clone().expect("continued").session_id;
    let info = h.store.agent(&AgentId::local()).info(successor).unwrap();
    assert_eq!(info.model_override, Some(chosen), "the model in force, not the one the predecessor began with");
    assert!(h.requests().iter().all(|r| r["model"] == "chosen-later"), "{:#?}", h.requests());
}

#[tokio::test]
async fn continuing_again_right_after_a_continuation_is_refused_as_a_loop() {
    let h = Harness::new(json!([
        continue_call("cont_1", "topic_change"),
        continue_call("cont_2", "topic_change"),
        text("Answering here instead."),
    ]));
    let outcomes = h.send("Switch topics").await;
    assert_eq!(outcomes.len(), 2);
    let successor = outcomes[0].continued_to.clone().unwrap().session_id;
    assert_eq!(outcomes[1].continued_to, None);
    let refusal = h
        .events(successor)
        .into_iter()
        .find_map(|e| match e.body {
            EventBody::ToolResult(r) if r.is_error => Some(r.content),
            _ => None,
        })
        .expect("a refused call");
    assert!(refusal.to_lowercase().contains("continued"), "{refusal}");
    let edges = h.store.agent(&AgentId::local()).continuations_from(successor).unwrap();
    assert!(edges.is_empty(), "nothing was created");
}

#[tokio::test]
async fn a_message_an_earlier_run_continued_is_not_answered_again_in_the_predecessor() {
    // A person resuming the predecessor (the REPL's -r) while another process
    // answered the message by continuing: the recovery run must follow the
    // continuation, never answer the message a second time here.
    let h = Harness::new(json!([
        continue_call("cont_1", "topic_change"),
        text("Answered in the successor."),
        text("unreached")
    ]));
    let outcomes = h.send("New topic: Lisbon hotels.").await;
    let successor = outcomes[0].continued_to.clone().expect("continued").session_id;
    let before = h.events(h.session).len();
    let message = h
        .events(h.session)
        .iter()
        .find(|e| e.body.as_message().is_some_and(|m| m.is_from_user_or_trigger()))
        .unwrap()
        .id;
    h.runtime.enqueue(seri_runloop::RunSpec {
        session_id: h.session,
        kind: seri_tools::RunKind::Interactive,
        lane: seri_runloop::Lane::Interactive,
        user_event_ids: vec![message],
        max_turns: h.runtime.settings().max_turns,
        message: None,
    });
    let again = h.runtime.drain(&seri_runloop::Quiet, &h.cancel.1).await;
    assert_eq!(again[0].status, RunStatus::Succeeded, "{again:?}");
    assert_eq!(again[0].continued_to.as_ref().map(|c| c.session_id), Some(successor), "it points at the successor");
    assert_eq!(h.events(h.session).len(), before, "nothing new in the predecessor");
    let answers =
        h.events(successor).iter().filter(|e| e.body.as_message().is_some_and(|m| m.role == Role::Assistant)).count();
    assert_eq!(answers, 1, "the successor answered once");
}
