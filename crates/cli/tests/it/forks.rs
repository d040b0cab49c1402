//! Forks by reference through the binary: `seri fork ID[@SEQ]`, `/fork` in
//! the REPL (edit and resend), and forks in `sessions tree|show|list`.

use serde_json::json;

use crate::support::{Env, path_str, text};
use crate::terminal::Typing as _;

/// A session of two exchanges; its id.
fn two_exchanges(env: &Env) -> String {
    let script = env.script("s.json", json!([text("One."), text("Two.")]));
    let run = env.run(&["-p", "First", "--script", path_str(&script), "--output-format", "json"]);
    let id = run.json()["session_id"].as_str().unwrap().to_owned();
    let script = env.script("s2.json", json!([text("Two.")]));
    env.run(&["--resume", &id, "-p", "Second", "--script", path_str(&script)]).expect_code(0);
    id
}

fn newest_session(env: &Env) -> serde_json::Value {
    env.run(&["sessions", "list", "--json"]).json()[0].clone()
}

#[test]
fn a_fork_shares_the_parents_events_and_goes_on_its_own_way() {
    let env = Env::new();
    let parent = two_exchanges(&env);
    let forked = env.run(&["fork", &format!("{}@2", &parent[..13])]);
    forked.expect_code(0);
    let fork = newest_session(&env);
    let id = fork["id"].as_str().unwrap().to_owned();
    // Its id on stdout, one line and nothing else: `FORK=$(seri fork ID)`.
    assert_eq!(forked.stdout, format!("{id}\n"));
    assert_eq!(
        (fork["forkedFrom"]["sessionId"].as_str(), fork["forkedFrom"]["forkSeq"].as_u64()),
        (Some(parent.as_str()), Some(2))
    );

    assert_eq!(env.run(&["thread", &id]).stdout, "[1] user: First\n[2] assistant: One.\n");
    let script = env.script("s3.json", json!([text("Another way.")]));
    let log = env.request_log();
    env.run_with(&["-r", &id, "-p", "Instead", "--script", path_str(&script)], &[("SERI_REQUEST_LOG", path_str(&log))])
        .expect_code(0);
    assert_eq!(
        env.run(&["thread", &id]).stdout,
        "[1] user: First\n[2] assistant: One.\n[3] user: Instead\n[4] assistant: Another way.\n"
    );
    // The model saw the shared part and the fork's own, nothing after the fork point.
    let texts: Vec<String> = env.requests().last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["text"].as_str().map(str::to_owned))
        .collect();
    // (The per-turn blocks follow the person's message.)
    assert_eq!(texts[..3], ["First", "One.", "Instead"]);
    assert_eq!(
        env.run(&["thread", &parent]).stdout,
        "[1] user: First\n[2] assistant: One.\n[3] user: Second\n[4] assistant: Two.\n",
        "the parent is unchanged"
    );

    let show = env.run(&["sessions", "show", &id, "--json"]).json();
    assert_eq!(show["forkedFrom"]["via"], "cli");
    assert_eq!(show["lastSeq"], 4);
    let text = env.run(&["sessions", "show", &parent]).stdout;
    // Short, as every id a person reads: the prefix `seri -r` takes.
    let short = env.run(&["sessions", "list"]).stdout;
    assert!(text.contains("forked into  ") && text.contains(" at 2"), "{text}");
    assert!(!text.contains(&id), "no whole id in the text: {text}");
    assert!(short.contains(text.split("forked into  ").nth(1).unwrap().split(' ').next().unwrap()), "{short}");
    let tree = env.run(&["sessions", "tree", &id]).stdout;
    let lines: Vec<&str> = tree.lines().collect();
    assert_eq!(lines.len(), 2, "{tree}");
    assert!(lines[0].contains("\u{201c}First\u{201d}") && !lines[0].contains('*'), "{tree}");
    assert!(lines[1].contains("* \u{201c}First\u{201d} (forked at 2)"), "{tree}");
    let list = env.run(&["sessions", "list"]).stdout;
    let chip = list.lines().find_map(|l| l.split_once("[forked from ").map(|(_, chip)| chip.to_owned()));
    let chip = chip.unwrap_or_else(|| panic!("no fork chip: {list}"));
    let (time, end) = chip.split(' ').next().unwrap().split_once('.').unwrap();
    assert!(parent.starts_with(time) && parent.ends_with(end) && chip.ends_with(" at 2]"), "{list}");

    // With --json, the fork's SessionInfo.
    let again = env.run(&["fork", &parent, "--json"]);
    again.expect_code(0);
    let info: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    // Without @SEQ: before the last message of the person's (seq 3).
    assert_eq!((info["forkedFrom"]["sessionId"].as_str(), info["lastSeq"].as_u64()), (Some(parent.as_str()), Some(2)));
}

#[test]
fn a_fork_of_a_fork_and_a_fork_at_the_end() {
    let env = Env::new();
    let parent = two_exchanges(&env);
    let whole = env.run(&["fork", &format!("{parent}@4")]).stdout.trim().to_owned();
    assert_eq!(env.run(&["thread", &whole]).stdout.lines().count(), 4, "@4: everything");
    env.run(&["fork", &format!("{whole}@3")]).expect_code(0);
    let second = newest_session(&env)["id"].as_str().unwrap().to_owned();
    assert_eq!(env.run(&["thread", &second]).stdout, "[1] user: First\n[2] assistant: One.\n[3] user: Second\n");
    let tree = env.run(&["sessions", "tree", &second]).stdout;
    assert_eq!(tree.lines().count(), 3, "{tree}");
    // No @SEQ: before the last message of the person's, to send another instead.
    let resend = env.run(&["fork", &whole]).stdout.trim().to_owned();
    assert_eq!(env.run(&["thread", &resend]).stdout, "[1] user: First\n[2] assistant: One.\n");
}

/// A session that continued into a successor; (the session, its successor).
fn continued(env: &Env) -> (String, String) {
    let script = env.script("c1.json", json!([text("One.")]));
    let run = env.run(&["-p", "First", "--script", path_str(&script), "--output-format", "json"]);
    let id = run.json()["session_id"].as_str().unwrap().to_owned();
    let call = json!({ "tool_calls": [{ "id": "k1", "name": "continue_session", "arguments": {
        "reason": "topic_change", "title": "Lisbon", "description": "A hotel in Lisbon",
        "handoff": { "purpose": "Find a hotel in Lisbon.", "currentRequest": "Near the river." } } }] });
    let script = env.script("c2.json", json!([call, text("Three hotels.")]));
    let run =
        env.run(&["-r", &id, "-p", "New topic: Lisbon", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    let successor = run.json()["continued_to_session_id"].as_str().expect("a successor").to_owned();
    (id, successor)
}

#[test]
fn a_fork_of_a_continued_session_goes_on_in_the_fork_and_the_successor_stays_the_continuation() {
    let env = Env::new();
    let (session, successor) = continued(&env);
    let show = |id: &str| env.run(&["sessions", "show", id, "--json"]).json();
    assert_eq!(show(&session)["continuedTo"]["sessionId"], successor.as_str());

    // Before the continuation: a live session of its own, not continued.
    env.run(&["fork", &format!("{session}@2")]).expect_code(0);
    let early = newest_session(&env)["id"].as_str().unwrap().to_owned();
    assert_eq!(show(&early)["continuedTo"], serde_json::Value::Null);
    assert_eq!(show(&early)["forkedFrom"]["sessionId"], session.as_str());
    let script = env.script("f1.json", json!([text("Still here.")]));
    let run = env.run(&["-r", &early, "-p", "Go on", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    assert_eq!(run.json()["session_id"], early.as_str(), "answered in the fork");
    assert_eq!(run.json()["continued_to_session_id"], serde_json::Value::Null);
    assert_eq!(
        env.run(&["thread", &early]).stdout,
        "[1] user: First\n[2] assistant: One.\n[3] user: Go on\n[4] assistant: Still here.\n"
    );

    // After it: the fork holds the continue_session call, but the edge is
    // the session's, not the fork's: the fork goes on where it is.
    let end = show(&session)["lastSeq"].as_u64().unwrap();
    env.run(&["fork", &format!("{session}@{end}")]).expect_code(0);
    let late = newest_session(&env)["id"].as_str().unwrap().to_owned();
    assert_eq!(show(&late)["continuedTo"], serde_json::Value::Null);
    let script = env.script("f2.json", json!([text("Here, not there.")]));
    let run = env.run(&["-r", &late, "-p", "Stay", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    assert_eq!(run.json()["session_id"], late.as_str());
    assert_eq!(run.json()["result"], "Here, not there.");

    // A fork of the successor starts from its projection, like the successor.
    env.run(&["fork", &format!("{successor}@1")]).expect_code(0);
    let of_successor = newest_session(&env)["id"].as_str().unwrap().to_owned();
    assert_eq!(show(&of_successor)["forkedFrom"]["sessionId"], successor.as_str());
    assert_eq!(show(&of_successor)["continuedFrom"], serde_json::Value::Null, "the edge stays the successor's");
    let first = env.run(&["thread", &of_successor]).stdout;
    assert_eq!(first, env.run(&["thread", &successor, "--to", "1"]).stdout);

    // The session's tree shows its successor and its forks together.
    let tree = env.run(&["sessions", "tree", &session]).stdout;
    for id in [&successor, &early, &late, &of_successor] {
        assert!(tree.contains(&id[..8]), "{id} in\n{tree}");
    }
    // The session itself is as it was: continued, and unchanged.
    assert_eq!(show(&session)["continuedTo"]["sessionId"], successor.as_str());
}

#[test]
fn a_fork_point_past_the_end_or_not_a_number_is_refused_with_why() {
    let env = Env::new();
    let parent = two_exchanges(&env);
    let past = env.run(&["fork", &format!("{parent}@9")]);
    assert_ne!(past.code, 0);
    assert!(past.stderr.contains("has 4 events: it cannot be forked at seq 9 (fork at 0 to 4)"), "{}", past.stderr);
    let bad = env.run(&["fork", &format!("{parent}@last")]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("after `@` comes the seq to fork at"), "{}", bad.stderr);
    assert_eq!(env.run(&["sessions", "list", "--json"]).json().as_array().unwrap().len(), 1, "nothing was made");
}

#[test]
fn slash_fork_puts_the_last_message_back_at_the_prompt_to_edit_and_resend() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("Answer to the first."), text("Answer to the edit.")]));
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.sees("/help for commands");
    p.types("What is two plus two");
    p.sees("Answer to the first.");
    p.types("/fork");
    p.sees("Your last message is at the prompt");
    p.sees("What is two plus two");
    // Edit it: append a word, then Enter.
    p.send(" exactly\r").unwrap();
    p.flush().unwrap();
    p.sees("Answer to the edit.");
    p.leaves();

    let fork = newest_session(&env);
    let id = fork["id"].as_str().unwrap();
    assert_eq!(fork["forkedFrom"]["forkSeq"], 0);
    assert_eq!(fork["forkedFrom"]["via"], "repl");
    assert_eq!(
        env.run(&["thread", id]).stdout,
        "[1] user: What is two plus two exactly\n[2] assistant: Answer to the edit.\n"
    );
    let parent = fork["forkedFrom"]["sessionId"].as_str().unwrap();
    assert_eq!(
        env.run(&["thread", parent]).stdout,
        "[1] user: What is two plus two\n[2] assistant: Answer to the first.\n"
    );
}

#[test]
fn slash_fork_seq_branches_after_that_event_and_goes_on_in_the_fork() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("One."), text("Two."), text("Another way.")]));
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.sees("/help for commands");
    p.types("First");
    p.sees("One.");
    p.types("Second");
    p.sees("Two.");
    p.types("/fork two");
    p.sees("usage: /fork [SEQ]");
    p.types("/fork 2");
    p.sees("at [2] into");
    p.types("Instead");
    p.sees("Another way.");
    p.leaves();

    let fork = newest_session(&env);
    let id = fork["id"].as_str().unwrap();
    assert_eq!((fork["forkedFrom"]["forkSeq"].as_u64(), fork["forkedFrom"]["via"].as_str()), (Some(2), Some("repl")));
    assert_eq!(
        env.run(&["thread", id]).stdout,
        "[1] user: First\n[2] assistant: One.\n[3] user: Instead\n[4] assistant: Another way.\n"
    );
    let parent = fork["forkedFrom"]["sessionId"].as_str().unwrap();
    assert_eq!(env.run(&["thread", parent]).stdout.lines().count(), 4, "the parent is unchanged");
}
