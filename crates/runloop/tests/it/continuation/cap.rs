//! The cap on successors per predecessor: a person may branch from a
//! continued session by typing in it again, up to
//! `MAX_SESSION_CONTINUATIONS_PER_SESSION` times; the next continuation is
//! refused with an error the model reads, and nothing is created.

use serde_json::Value;
use seri_core::AgentId;
use seri_runloop::MAX_SESSION_CONTINUATIONS_PER_SESSION;

use super::{continue_call, error_results, row_counts};
use crate::support::{Harness, text};

#[tokio::test]
async fn the_continuation_past_the_cap_is_refused_and_creates_nothing() {
    let cap = MAX_SESSION_CONTINUATIONS_PER_SESSION;
    let mut turns: Vec<Value> = (1..=cap)
        .flat_map(|i| [continue_call(&format!("cont_{i}"), "topic_change"), text(&format!("Successor {i} answers."))])
        .collect();
    turns.push(continue_call("cont_over", "topic_change"));
    turns.push(text("Answering here instead."));
    let h = Harness::new(Value::from(turns));

    let mut newest = None;
    for i in 1..=cap {
        let outcomes = h.send(&format!("Branch {i}")).await;
        assert_eq!(outcomes.len(), 2, "branch {i}: {outcomes:?}");
        newest = outcomes[0].continued_to.clone();
    }
    let store = h.store.agent(&AgentId::local());
    assert_eq!(store.successor_count(h.session).unwrap(), cap);
    let before = row_counts(&h);

    let outcomes = h.send("One branch too many").await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].continued_to, None);
    assert_eq!(outcomes[0].result.as_deref(), Some("Answering here instead."));
    let errors = error_results(&h, h.session);
    assert_eq!(
        errors,
        [format!(
            "this session already continued {cap} times, the most allowed ({cap}); answer here or ask the person to start a new session"
        )]
    );
    let (sessions, edges, events) = row_counts(&h);
    assert_eq!((sessions, edges), (before.0, before.1), "no session or edge was created");
    assert_eq!(events, before.2 + 5, "only the predecessor's message, turn, call, error and answer");
    assert_eq!(store.successor_count(h.session).unwrap(), cap);
    let info = store.info(h.session).unwrap();
    assert_eq!(info.continued_to.map(|l| l.session_id), newest.map(|c| c.session_id), "still the newest branch");
    assert_eq!(sessions as u64, cap + 1, "the predecessor and its branches");
}
