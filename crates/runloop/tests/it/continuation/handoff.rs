//! The handoff a person's card shows is a fact stored with the
//! continuation: on the successor's projection message, written in the
//! transaction that makes the edge, never read back out of the projection's
//! text. A continuation recorded before it was kept there still shows its
//! handoff: the `continue_session` call is parsed again.

use serde_json::json;
use seri_core::{AgentId, ContinuationHandoff, Message, MessageMeta, ToolCall, ToolCallId};
use seri_runloop::continuation::{continuation_handoff, handoff_of};

use super::{continue_args, continue_call};
use crate::support::{Harness, text};

#[tokio::test]
async fn the_handoff_is_stored_on_the_projection_message_and_read_from_there() {
    let h = Harness::new(json!([continue_call("cont_1", "topic_change"), text("Three hotels.")]));
    let outcomes = h.send("New topic: find me a hotel in Lisbon").await;
    let continued = outcomes[0].continued_to.clone().expect("continued");
    let projection = h.events(continued.session_id)[0].body.as_message().cloned().unwrap();
    let stored = projection.meta().handoff.as_deref().cloned().expect("the projection message keeps the handoff");
    assert_eq!(stored.title, "Trip planning");
    assert_eq!(stored.description, "Planning the Lisbon trip");
    assert_eq!(stored.handoff.purpose.as_deref(), Some("Help the person plan a trip to Lisbon."));
    assert_eq!(stored.handoff.established_facts, ["Dates: 3-7 May"]);

    let store = h.store.agent(&AgentId::local());
    let edge = store.continuation(continued.continuation_id).unwrap().unwrap();
    assert_eq!(continuation_handoff(&store, &edge).unwrap(), Some(stored));
}

#[test]
fn a_continuation_recorded_before_the_handoff_was_kept_falls_back_to_its_call() {
    let call = ToolCall {
        id: ToolCallId("cont_1".into()),
        name: "continue_session".into(),
        arguments: continue_args("topic_change"),
    };
    // What older builds wrote: the projection message without the handoff.
    let old = Message::user("<handoff>…</handoff>");
    let parsed = handoff_of(Some(&old), Some(&call)).expect("the call parses");
    assert_eq!(parsed.title, "Trip planning");
    assert_eq!(parsed.handoff.next_actions, ["Propose three hotels"]);

    // What is stored wins over the call, and neither is none.
    let kept = ContinuationHandoff { title: "Kept".into(), ..ContinuationHandoff::default() };
    let meta = MessageMeta { handoff: Some(Box::new(kept.clone())), ..MessageMeta::default() };
    let new = Message { meta: Some(Box::new(meta)), ..old.clone() };
    assert_eq!(handoff_of(Some(&new), Some(&call)), Some(kept));
    assert_eq!(handoff_of(Some(&old), None), None);
    let unreadable = ToolCall { arguments: json!({ "reason": 7 }), ..call };
    assert_eq!(handoff_of(None, Some(&unreadable)), None);
}
