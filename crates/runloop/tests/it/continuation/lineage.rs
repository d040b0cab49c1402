//! Chains and branches: the origin id is kept on every edge and the depth
//! grows along a chain; typing in a continued session branches it, and
//! `continuedTo` shows the newest successor.

use serde_json::{Value, json};
use seri_core::AgentId;

use super::logged_request;
use crate::support::{Harness, call, text};

fn continue_titled(id: &str, title: &str) -> Value {
    call(
        id,
        "continue_session",
        json!({
            "reason": "phase_change",
            "title": title,
            "description": format!("{title}, in progress"),
            "handoff": { "purpose": format!("Do the {title} phase."), "currentRequest": "Start it." }
        }),
    )
}

#[tokio::test]
async fn a_chain_of_three_sessions_keeps_the_origin_on_every_edge() {
    let h = Harness::new(json!([
        continue_titled("cont_a", "Design"),
        text("Design: here is the outline."),
        continue_titled("cont_b", "Build"),
        text("Build: starting with the parser."),
    ]));
    let a = h.session;
    let b = h.send("Let's design it.").await[0].continued_to.clone().unwrap().session_id;
    let outcomes = h.send_to(b, "Design approved; build it.").await;
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    let c = outcomes[0].continued_to.clone().unwrap().session_id;
    assert_eq!(outcomes[1].result.as_deref(), Some("Build: starting with the parser."));

    let store = h.store.agent(&AgentId::local());
    let ab = store.continuation_into(b).unwrap().unwrap();
    let bc = store.continuation_into(c).unwrap().unwrap();
    assert_eq!((ab.predecessor_session_id, ab.origin_session_id, ab.manifest.depth), (a, a, 1));
    assert_eq!((bc.predecessor_session_id, bc.origin_session_id, bc.manifest.depth), (b, a, 2));
    assert_eq!((bc.manifest.origin_session_id, bc.manifest.predecessor_session_id), (a, b));
    assert_eq!(store.continuation_into(a).unwrap(), None, "the origin continues nothing");

    let info = |id| store.info(id).unwrap();
    assert_eq!(info(a).continued_to.map(|l| l.session_id), Some(b));
    assert_eq!(info(b).continued_from.map(|l| l.session_id), Some(a));
    assert_eq!(info(b).continued_to.map(|l| l.session_id), Some(c));
    assert_eq!(info(c).continued_from.map(|l| (l.session_id, l.title)), Some((b, "Design".to_owned())));
    assert_eq!(info(c).continued_to, None);

    let names = [(a, "<ORIGIN>"), (b, "<SECOND>"), (c, "<THIRD>")];
    insta::assert_json_snapshot!("chain_third_session_first_request", logged_request(&h, 3, &names));
}

#[tokio::test]
async fn typing_in_a_continued_session_branches_it_and_continued_to_is_the_newest() {
    let h = Harness::new(json!([
        continue_titled("cont_1", "First branch"),
        text("First branch answers."),
        continue_titled("cont_2", "Second branch"),
        text("Second branch answers."),
    ]));
    let first = h.send("Go one way.").await[0].continued_to.clone().unwrap();
    let outcomes = h.send("No, go the other way.").await;
    assert_eq!(outcomes.len(), 2, "continuing again is not a loop: a person wrote something new: {outcomes:?}");
    let second = outcomes[0].continued_to.clone().unwrap();
    assert_ne!(first.session_id, second.session_id);
    assert_eq!(outcomes[1].result.as_deref(), Some("Second branch answers."));

    let store = h.store.agent(&AgentId::local());
    let edges: Vec<_> =
        store.continuations_from(h.session).unwrap().into_iter().map(|e| e.successor_session_id).collect();
    assert_eq!(edges, [first.session_id, second.session_id], "both branches, oldest first");
    let to = store.info(h.session).unwrap().continued_to.unwrap();
    assert_eq!((to.session_id, to.title.as_str()), (second.session_id, "Second branch"), "the newest");
    for (branch, message) in [(&first, "Go one way."), (&second, "No, go the other way.")] {
        let info = store.info(branch.session_id).unwrap();
        assert_eq!(info.continued_from.map(|l| l.session_id), Some(h.session));
        let copied = h.events(branch.session_id)[1].body.as_message().unwrap().content.clone();
        assert_eq!(copied, message, "each branch answers the message it was started for");
        let edge = store.continuation_into(branch.session_id).unwrap().unwrap();
        assert_eq!((edge.origin_session_id, edge.manifest.depth), (h.session, 1));
    }
}
