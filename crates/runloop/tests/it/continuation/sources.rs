//! Every kind of invalid source is refused with a tool error that names the
//! field, the model reads it and answers in the predecessor, and nothing of
//! a continuation is created.

use serde_json::{Value, json};
use seri_core::{AgentId, Message};

use super::{continue_args, error_results, row_counts};
use crate::support::{Harness, call, text};

/// Continues citing `source` (built once the harness exists, so it can name
/// ids) and checks the refusal names `field` and says `problem`.
async fn check(source: impl FnOnce(&Harness) -> Value, field: &str, problem: &str) {
    let mut h = Harness::new(json!([]));
    let memory = h.profile.memory_dir();
    std::fs::write(memory.join("notes.md"), "Hotel notes.").unwrap();
    std::fs::write(h.profile.root().join("secret.txt"), "Not for the model.").unwrap();
    std::os::unix::fs::symlink(h.profile.root().join("secret.txt"), memory.join("escape.md")).unwrap();
    let mut arguments = continue_args("topic_change");
    arguments["sources"] = match source(&h) {
        Value::Array(several) => Value::Array(several),
        one => json!([one]),
    };
    h.rescript(json!([call("cont_1", "continue_session", arguments), text("Answering here, then.")]));

    let outcomes = h.send("New topic: a hotel in Lisbon.").await;
    assert_eq!(outcomes.len(), 1, "no successor ran: {outcomes:?}");
    assert_eq!(outcomes[0].continued_to, None);
    assert_eq!(outcomes[0].result.as_deref(), Some("Answering here, then."), "the model read the error and went on");
    let errors = error_results(&h, h.session);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with(&format!("`{field}`: ")), "names `{field}`: {}", errors[0]);
    assert!(errors[0].contains(problem), "says {problem:?}: {}", errors[0]);
    // The only other session is the one this test made for another agent.
    let (sessions, edges, _) = row_counts(&h);
    assert_eq!((sessions - other_agent_sessions(&h), edges), (1, 0), "nothing was created");
}

fn other_agent_sessions(h: &Harness) -> i64 {
    let other = h.store.agent(&AgentId("someone-else".into()));
    other.list_sessions(&Default::default()).unwrap().len() as i64
}

#[tokio::test]
async fn a_resource_with_another_scheme() {
    check(|_| json!({ "kind": "resource", "uri": "ftp://example.com/hotels" }), "sources[0].uri", "not an address")
        .await;
}

#[tokio::test]
async fn a_resource_with_no_host() {
    check(|_| json!({ "kind": "resource", "uri": "https://" }), "sources[0].uri", "not an address").await;
}

#[tokio::test]
async fn a_bare_string_that_is_not_an_address() {
    check(|_| json!("file:///etc/passwd"), "sources[0]", "not an address").await;
}

#[tokio::test]
async fn a_memory_path_that_does_not_exist() {
    check(|_| json!({ "kind": "memory", "path": "~/memory/missing.md" }), "sources[0].path", "does not exist").await;
}

#[tokio::test]
async fn a_memory_path_that_climbs_out_with_dot_dot() {
    check(
        |_| json!({ "kind": "memory", "path": "~/memory/../secret.txt" }),
        "sources[0].path",
        "leaves your memory folder",
    )
    .await;
}

#[tokio::test]
async fn a_memory_path_that_leaves_through_a_symlink() {
    check(
        |_| json!({ "kind": "memory", "path": "~/memory/escape.md" }),
        "sources[0].path",
        "leaves your memory folder",
    )
    .await;
}

#[tokio::test]
async fn a_memory_path_outside_the_memory_folder() {
    check(|_| json!({ "kind": "memory", "path": "/etc/passwd" }), "sources[0].path", "absolute path").await;
}

#[tokio::test]
async fn a_memory_path_naming_the_folder_itself() {
    check(|_| json!({ "kind": "memory", "path": "~/memory/" }), "sources[0].path", "memory folder itself").await;
}

#[tokio::test]
async fn session_events_past_the_end_of_the_thread() {
    // The predecessor has three events when the call is checked: the
    // message, the model's turn and this call.
    check(|_| json!({ "kind": "session_events", "fromSeq": 1, "toSeq": 40 }), "sources[0].toSeq", "40 is past its end")
        .await;
}

#[tokio::test]
async fn session_events_ending_before_they_start() {
    check(|_| json!({ "kind": "session_events", "fromSeq": 3, "toSeq": 2 }), "sources[0].toSeq", "before fromSeq 3")
        .await;
}

#[tokio::test]
async fn session_events_starting_at_zero() {
    check(|_| json!({ "kind": "session_events", "fromSeq": 0, "toSeq": 2 }), "sources[0].fromSeq", "at least 1, got 0")
        .await;
}

#[tokio::test]
async fn a_session_event_past_the_end_of_the_thread() {
    check(|_| json!({ "kind": "session_event", "seq": 9 }), "sources[0].seq", "9 is past its end").await;
}

#[tokio::test]
async fn another_agents_thread_is_reported_as_missing() {
    check(
        |h| {
            let other = h.store.agent(&AgentId("someone-else".into()));
            let theirs = other.create_session(&other.new_seed("/elsewhere")).unwrap().id;
            other.append(theirs, [seri_core::EventBody::Message(Message::user("Private."))]).unwrap();
            json!({ "kind": "session_events", "sessionId": theirs.to_string(), "fromSeq": 1, "toSeq": 1 })
        },
        "sources[0].sessionId",
        "among your threads",
    )
    .await;
}

#[tokio::test]
async fn a_thread_that_does_not_exist() {
    check(
        |_| json!({ "kind": "session_event", "sessionId": "0190aaaa-0000-7000-8000-000000000000", "seq": 1 }),
        "sources[0].sessionId",
        "among your threads",
    )
    .await;
}

#[tokio::test]
async fn a_thread_reference_that_is_not_an_id() {
    check(
        |_| json!({ "kind": "session_event", "sessionId": "the other chat", "seq": 1 }),
        "sources[0].sessionId",
        "not a thread id",
    )
    .await;
}

#[tokio::test]
async fn an_unknown_source_kind() {
    check(|_| json!({ "kind": "webpage", "uri": "https://example.com" }), "sources[0].kind", "not a source kind").await;
}

#[tokio::test]
async fn a_second_source_is_named_by_its_index() {
    check(
        |_| json!([{ "kind": "memory", "path": "~/memory/notes.md" }, { "kind": "memory", "path": "~/memory/gone.md" }]),
        "sources[1].path",
        "does not exist",
    ).await;
}
