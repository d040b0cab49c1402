//! What subscribers hear when a session continues: `session-change` for
//! both sessions and `account-change` with `session-updated` and
//! `session-continued`.

use serde_json::json;
use seri_runloop::{AccountChangeReason, Notification};

use super::continue_call;
use crate::support::{Harness, text};

#[tokio::test]
async fn a_continuation_announces_both_sessions_and_the_account_change() {
    let h = Harness::new(json!([continue_call("cont_1", "topic_change"), text("Here.")]));
    let mut notifications = h.runtime.subscribe();
    let outcomes = h.send("New topic: a hotel in Lisbon.").await;
    let successor = outcomes[0].continued_to.clone().unwrap().session_id;

    let mut heard = Vec::new();
    while let Ok(n) = notifications.try_recv() {
        heard.push(n);
    }
    for session_id in [h.session, successor] {
        assert!(
            heard.contains(&Notification::SessionChange { session_id }),
            "session-change for {session_id}: {heard:?}"
        );
    }
    let account = Notification::AccountChange {
        reasons: vec![AccountChangeReason::SessionUpdated, AccountChangeReason::SessionContinued],
        session_ids: vec![h.session, successor],
    };
    assert_eq!(heard.iter().filter(|n| **n == account).count(), 1, "{heard:?}");
    let names: Vec<&str> = [AccountChangeReason::SessionUpdated, AccountChangeReason::SessionContinued]
        .iter()
        .map(|r| r.as_str())
        .collect();
    assert_eq!(names, ["session-updated", "session-continued"]);
}

#[tokio::test]
async fn a_refused_continuation_announces_no_account_change() {
    let mut arguments = super::continue_args("topic_change");
    arguments["sources"] = json!([{ "kind": "memory", "path": "~/memory/missing.md" }]);
    let h = Harness::new(json!([crate::support::call("cont_1", "continue_session", arguments), text("Here.")]));
    let mut notifications = h.runtime.subscribe();
    h.send("New topic: a hotel in Lisbon.").await;
    while let Ok(n) = notifications.try_recv() {
        assert!(
            matches!(n, Notification::SessionChange { session_id } if session_id == h.session),
            "only the predecessor changed: {n:?}"
        );
    }
}
