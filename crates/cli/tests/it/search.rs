//! `seri search` through the binary: hits as text and as `{"hits": [...]}`,
//! a fork's shared history as one hit naming the fork, exit 0 with no hits
//! and exit 2 for a query the syntax refuses; `/search` in the REPL through
//! a real pty, opening and forking a hit.

use serde_json::json;

use crate::support::{Env, path_str, text};
use crate::terminal::Typing as _;

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

#[test]
fn slash_search_lists_numbered_hits_and_opens_or_forks_one() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("We cap the exponential backoff at thirty seconds.")]));
    let run = env.run(&["-p", "What is the retry policy?", "--script", path_str(&script), "--output-format", "json"]);
    let id = run.json()["session_id"].as_str().unwrap().to_owned();

    let script = env.script("s2.json", json!([text("Forked answer.")]));
    let mut p = crate::terminal::repl(&env, &["--script", path_str(&script)]);
    p.sees("/help for commands");
    p.types("/search exponential --here");
    // rexpect reads bytes as Latin-1: match the ASCII around the marks.
    p.sees(" 1. ");
    p.sees(" [2] assistant  ");
    p.sees("exponential");
    p.sees("open one: /search open N resumes its session, /search fork N branches it at the hit");
    p.types("/search open 9");
    p.sees("No hit 9: the last search listed 1 to 1.");
    p.types("/search \"retry");
    p.sees("never closed");
    p.types("/search absent");
    p.sees("No match for absent.");
    // The last hits stay what open and fork count in.
    p.types("/search fork 1");
    p.sees(" at [2] into ");
    p.types("And then?");
    p.sees("Forked answer.");
    p.types("/search open 1");
    p.sees("Resumed ");
    p.sees("(2 events).");
    p.sees("The hit is [2]");
    p.leaves();

    let list = env.run(&["sessions", "list", "--json"]);
    let sessions = list.json();
    let fork = sessions.as_array().unwrap().iter().find(|s| s["forkedFrom"]["sessionId"] == id.as_str());
    let fork = fork.unwrap_or_else(|| panic!("a fork of {id}: {sessions}"))["id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &fork]);
    assert_eq!(
        thread.stdout,
        "[1] user: What is the retry policy?\n[2] assistant: We cap the exponential backoff at thirty seconds.\n\
         [3] user: And then?\n[4] assistant: Forked answer.\n"
    );
    assert_eq!(env.run(&["thread", &id]).stdout.lines().count(), 2, "the hit's session is as it was");
}
