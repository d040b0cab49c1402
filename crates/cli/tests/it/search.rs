//! `seri search` through the binary: hits as text and as `{"hits": [...]}`,
//! a fork's shared history as one hit naming the fork, exit 0 with no hits
//! and exit 2 for a query the syntax refuses.

use serde_json::json;

use crate::support::{Env, path_str, text};

#[test]
fn search_prints_hits_and_refuses_a_broken_query_with_exit_2() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("We cap the exponential backoff at thirty seconds.")]));
    let run = env.run(&["-p", "What is the retry policy?", "--script", path_str(&script), "--output-format", "json"]);
    let id = run.json()["session_id"].as_str().unwrap().to_owned();
    let fork = env.run(&["fork", &format!("{id}@2")]);
    fork.expect_code(0);

    let found = env.run(&["search", "exponential", "--json"]);
    found.expect_code(0);
    let hits = found.json()["hits"].clone();
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits}");
    assert_eq!(hits[0]["sessionId"], id.as_str());
    assert_eq!((hits[0]["seq"].as_u64(), hits[0]["kind"].as_str()), (Some(2), Some("assistant")));
    assert_eq!(hits[0]["snippet"], "We cap the «exponential» backoff at thirty seconds.");
    assert_eq!(hits[0]["sharedWith"].as_array().unwrap().len(), 1, "the fork shares it: {hits}");

    let shown = env.run(&["search", "retry", "policy"]);
    shown.expect_code(0);
    assert!(shown.stdout.contains("«retry» «policy»"), "{}", shown.stdout);
    assert!(shown.stdout.contains("[1] user"), "{}", shown.stdout);

    let none = env.run(&["search", "absent", "--json"]);
    none.expect_code(0);
    assert_eq!(none.json(), json!({ "hits": [] }));

    let broken = env.run(&["search", "\"retry"]);
    broken.expect_code(2);
    assert!(broken.stderr.contains("never closed"), "{}", broken.stderr);
    env.run(&["search", "retry", "--since", "yesterday-ish"]).expect_code(2);
}
