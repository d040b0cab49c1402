//! What the model writes, end to end: `sources`, `transfer` and
//! `description` nested inside `handoff` are hoisted and used, and any other
//! handoff key becomes its own `## Section` of the successor's projection.

use serde_json::{Value, json};
use seri_core::{AgentId, SessionId, Source};

use super::redact;
use crate::support::{Harness, call, text};

/// A plan with an unfinished step, so `transfer.plan` has something to act on.
fn plan_call() -> Value {
    call(
        "plan_1",
        "plan",
        json!({ "steps": [{ "text": "Compare hotels", "status": "in_progress" }, { "text": "Book one" }] }),
    )
}

/// Plays a plan call then a continuation with `arguments`; returns the harness
/// and the successor.
async fn continue_with(arguments: Value) -> (Harness, SessionId) {
    let h = Harness::new(json!([plan_call(), call("cont_1", "continue_session", arguments), text("Here.")]));
    let outcomes = h.send("New topic: a hotel in Lisbon.").await;
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    let successor = outcomes[0].continued_to.as_ref().expect("continued").session_id;
    (h, successor)
}

/// The successor's projection: its first event.
fn projection(h: &Harness, successor: SessionId) -> String {
    let text = h.events(successor)[0].body.as_message().unwrap().content.clone();
    redact(&text, &[(h.session, "<PREDECESSOR>"), (successor, "<SUCCESSOR>")])
}

#[tokio::test]
async fn sources_transfer_and_description_nested_in_the_handoff_are_hoisted() {
    let (h, successor) = continue_with(json!({
        "reason": "topic_change",
        "title": "Lisbon hotel",
        "handoff": {
            "purpose": "Find a hotel in Lisbon.",
            "currentRequest": "A hotel near the river.",
            "description": "Finding a hotel near the river",
            "sources": [
                { "kind": "resource", "uri": "https://example.com/lisbon-hotels" },
                { "kind": "session_event", "seq": 1 }
            ],
            "transfer": { "plan": "omit" }
        }
    }))
    .await;
    let store = h.store.agent(&AgentId::local());
    let info = store.info(successor).unwrap();
    assert_eq!(info.description, "Finding a hotel near the river", "description hoisted");
    // Without the hoisted `omit`, the unfinished plan would have been carried.
    assert_eq!(info.plan, None, "transfer hoisted");
    assert!(store.info(h.session).unwrap().plan.is_some(), "omit leaves the predecessor's plan");
    let edge = store.continuation_into(successor).unwrap().unwrap();
    assert_eq!(
        edge.manifest.sources,
        [
            Source::Resource { uri: "https://example.com/lisbon-hotels".into() },
            Source::SessionEvent { session_id: h.session, seq: seri_core::Seq(1) },
        ],
        "sources hoisted"
    );
    let projection = projection(&h, successor);
    for hoisted in ["## description", "## sources", "## transfer"] {
        assert!(!projection.contains(hoisted), "{hoisted} was hoisted, not kept as a section:\n{projection}");
    }
}

#[tokio::test]
async fn a_nested_key_the_top_level_also_has_stays_as_a_section() {
    let (h, successor) = continue_with(json!({
        "reason": "topic_change",
        "title": "Lisbon hotel",
        "description": "The top level wins",
        "handoff": {
            "purpose": "Find a hotel in Lisbon.",
            "currentRequest": "A hotel near the river.",
            "description": "The nested copy is kept, not lost"
        }
    }))
    .await;
    assert_eq!(h.store.agent(&AgentId::local()).info(successor).unwrap().description, "The top level wins");
    let projection = projection(&h, successor);
    assert!(projection.contains("## description\n- The nested copy is kept, not lost"), "{projection}");
}

#[tokio::test]
async fn extra_handoff_keys_are_rendered_as_their_own_sections() {
    let (h, successor) = continue_with(json!({
        "reason": "topic_change",
        "title": "Lisbon hotel",
        "description": "Finding a hotel near the river",
        "handoff": {
            "purpose": "Find a hotel in Lisbon.",
            "currentRequest": "A hotel near the river.",
            "glossary": { "POI": "point of interest", "ETA": "estimated time of arrival" },
            "risks": ["A transport strike on 5 May", ["Rain", "Crowds at Belém"]],
            "budgetEuros": 1200,
            "nothing": null,
            "flexibleDates": true
        }
    }))
    .await;
    let projection = projection(&h, successor);
    insta::assert_snapshot!("extra_handoff_keys_projection", projection);
    assert!(!projection.contains("## nothing"), "a key with no text is dropped");
}

/// The request log's view of the same: what the successor's model reads.
#[tokio::test]
async fn the_successors_model_reads_the_projection_then_the_copied_message() {
    let (h, successor) = continue_with(json!({
        "reason": "topic_change",
        "title": "Lisbon hotel",
        "description": "Finding a hotel near the river",
        "handoff": { "purpose": "Find a hotel in Lisbon.", "currentRequest": "A hotel near the river." }
    }))
    .await;
    let request = h.requests().last().unwrap().clone();
    let texts: Vec<&str> =
        request["messages"].as_array().unwrap().iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(texts.len(), 3, "projection, copied message, turn blocks: {texts:?}");
    assert_eq!(
        redact(texts[0], &[(h.session, "<PREDECESSOR>"), (successor, "<SUCCESSOR>")]),
        projection(&h, successor)
    );
    assert_eq!(texts[1], "New topic: a hotel in Lisbon.");
}
