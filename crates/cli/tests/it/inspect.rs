//! `seri sessions …`, `seri thread` and `seri demo` through the binary.

use serde_json::json;

use crate::support::{Env, path_str, text};

fn session_with_two_exchanges(env: &Env) -> String {
    let script = env.script("s.json", json!([text("One."), text("Two.")]));
    let run = env.run(&["-p", "First", "--script", path_str(&script), "--output-format", "json"]);
    let id = run.json()["session_id"].as_str().unwrap().to_owned();
    let script = env.script("s2.json", json!([text("Two.")]));
    env.run(&["--resume", &id, "-p", "Second", "--script", path_str(&script)]).expect_code(0);
    id
}

#[test]
fn sessions_list_and_show_in_json_and_text() {
    let env = Env::new();
    let id = session_with_two_exchanges(&env);
    let list = env.run(&["sessions", "list", "--json"]);
    list.expect_code(0);
    assert_eq!(list.json()[0]["id"], id.as_str());
    assert_eq!(list.json()[0]["lastSeq"], 4);

    let show = env.run(&["sessions", "show", &id[..13], "--json", "--context-window", "32000"]);
    show.expect_code(0);
    let info = show.json();
    assert_eq!(info["id"], id.as_str());
    assert_eq!(info["contextWindow"], 32000);
    assert_eq!(info["title"], "First");
    assert_eq!(info["titleSource"], "fallback");
    assert!(info.get("continuedFrom").is_some() && info.get("continuedTo").is_some());

    let text = env.run(&["sessions", "list"]);
    assert!(text.stdout.contains("First"), "{}", text.stdout);
}

#[test]
fn thread_prints_seq_lines_with_from_to_and_limit() {
    let env = Env::new();
    let id = session_with_two_exchanges(&env);
    let all = env.run(&["thread", &id]);
    all.expect_code(0);
    assert_eq!(all.stdout, "[1] user: First\n[2] assistant: One.\n[3] user: Second\n[4] assistant: Two.\n");
    assert_eq!(env.run(&["thread", &id, "--from", "2", "--to", "3"]).stdout, "[2] assistant: One.\n[3] user: Second\n");
    assert_eq!(env.run(&["thread", &id, "--from", "2", "--limit", "1"]).stdout, "[2] assistant: One.\n");
}

#[test]
fn the_demo_runs_without_a_key_and_shows_both_strategies() {
    let env = Env::new();
    let run = env.run(&["demo"]);
    run.expect_code(0);
    assert!(run.stdout.contains("Continued in \u{201c}Autumn haiku\u{201d} (topic change)"), "{}", run.stdout);
    assert!(run.stdout.contains("compacted seq"), "{}", run.stdout);
    assert!(run.stdout.contains("└─"), "the lineage tree: {}", run.stdout);
    assert!(!env.home().join("seri.db").exists(), "the demo never touches the real profile");
}
