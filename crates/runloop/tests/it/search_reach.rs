//! `read search:<query>`: the model finds an earlier session of the agent
//! by what was said in it, then reads it with `read thread:`.

use serde_json::json;
use seri_core::{AgentId, Message};

use crate::support::{Harness, call, text};

#[tokio::test]
async fn the_model_finds_an_earlier_thread_by_what_was_said_in_it() {
    let mut h = Harness::new(json!([]));
    let store = h.store.clone();
    let store = store.agent(&AgentId::local());
    let earlier = store.new_seed("/elsewhere-not");
    store.create_session(&earlier).unwrap();
    store
        .append(earlier.id, [seri_core::EventBody::Message(Message::user("We settled the retry policy: jitter."))])
        .unwrap();
    let read = |id: &str, target: &str| call(id, "read", json!({ "target": target }));
    h.rescript(json!([read("r1", "search:\"retry policy\""), read("r2", "search:\"retry"), text("Found it."),]));
    let outcomes = h.send_message(h.session, Message::user("What did we decide about retries?")).await;
    assert_eq!(outcomes[0].result.as_deref(), Some("Found it."));
    let requests = h.requests();
    let results: Vec<String> = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(results[0].starts_with("search:\"retry policy\": 1 hit\n"), "{}", results[0]);
    assert!(results[0].contains(&format!("thread:{} seq 1 (user, ", earlier.id)), "{}", results[0]);
    assert!(results[0].contains("another folder; reading it asks first"), "{}", results[0]);
    let listed = results[0].lines().filter(|l| l.starts_with("thread:")).count();
    assert_eq!(listed, 1, "the search call itself is not found: {}", results[0]);
    assert!(results[1].contains("never closed"), "a refused query says why: {}", results[1]);
}
