//! Child runs through the binary: a delegating task headless, its progress
//! as `child_progress` events, the children under their parent in
//! `seri sessions tree`, `seri thread` and `seri sessions show` on a child,
//! and the live child lines of the interactive session.

use serde_json::{Value, json};

use crate::support::{Env, path_str, text};
use crate::terminal::Typing as _;

/// A script whose parent delegates two tasks in one turn; each child plays
/// its own script.
fn delegating_script(env: &Env) -> std::path::PathBuf {
    let path = env.dir.path().join("delegating.json");
    let file = json!({
        "turns": [
            { "tool_calls": [
                { "id": "d1", "name": "delegate", "arguments": { "task": "Summarise the README" } },
                { "id": "d2", "name": "delegate", "arguments": { "task": "Count the files", "tools": ["list"] } }
            ] },
            text("The README says hello, and there are no files."),
        ],
        "children": [
            { "turns": [text("It says hello.")] },
            { "turns": [
                { "tool_calls": [{ "id": "l1", "name": "list", "arguments": { "path": "." } }] },
                text("No files."),
            ] }
        ]
    });
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

/// The events of a `stream-json` run, parsed.
fn events(stdout: &str) -> Vec<Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn children_are_reported_as_they_go_and_shown_under_their_parent() {
    let env = Env::new();
    let script = delegating_script(&env);
    let run = env.run(&["-p", "Split it", "--script", path_str(&script), "--output-format", "stream-json"]);
    run.expect_code(0);
    let events = events(&run.stdout);
    let progress: Vec<&Value> = events.iter().filter(|e| e["type"] == "child_progress").collect();
    let finished: Vec<(&str, &str)> = progress
        .iter()
        .filter(|p| !p["finished"].is_null())
        .map(|p| (p["call_id"].as_str().unwrap(), p["finished"].as_str().unwrap()))
        .collect();
    assert_eq!(finished.len(), 2, "{progress:#?}");
    assert!(finished.contains(&("d1", "succeeded")) && finished.contains(&("d2", "succeeded")), "{finished:?}");
    assert!(progress.iter().any(|p| p["call_id"] == "d2" && p["last_tool"] == "list"), "{progress:#?}");
    let result = events.last().unwrap();
    assert_eq!(result["result"], "The README says hello, and there are no files.");
    let parent = result["session_id"].as_str().unwrap().to_owned();
    let child_of =
        |call: &str| progress.iter().find(|p| p["call_id"] == call).unwrap()["session_id"].as_str().unwrap().to_owned();
    let (first, second) = (child_of("d1"), child_of("d2"));

    let tree = env.run(&["sessions", "tree", &parent]);
    tree.expect_code(0);
    let lines: Vec<&str> = tree.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", tree.stdout);
    assert!(lines[0].ends_with(" * \u{201c}Split it\u{201d}"), "{}", tree.stdout);
    // Each id is shown short: its time digits and its random end, which
    // tell apart two children made in the same millisecond or two.
    let shown_id = |line: &str| line.split_whitespace().nth(2).unwrap_or_default().to_owned();
    let (id1, id2) = (shown_id(lines[1]), shown_id(lines[2]));
    let names = |short: &str, id: &str| {
        short.split_once('.').is_some_and(|(time, end)| id.starts_with(time) && id.ends_with(end))
    };
    assert!(names(&id1, &first) && !names(&id1, &second), "{}", tree.stdout);
    assert!(names(&id2, &second) && !names(&id2, &first), "{}", tree.stdout);
    assert_eq!(env.run(&["thread", &id1]).stdout, env.run(&["thread", &first]).stdout, "a short id is taken back");
    assert!(
        lines[1].starts_with(&format!("├─ ⤷ {id1} \u{201c}Summarise the README\u{201d} (child of run ")),
        "{}",
        tree.stdout
    );
    assert!(
        lines[2].starts_with(&format!("└─ ⤷ {id2} \u{201c}Count the files\u{201d} (child of run ")),
        "{}",
        tree.stdout
    );
    assert!(lines[1].ends_with(", succeeded)"), "{}", tree.stdout);

    // From a child, the same tree, with the child marked.
    let from_child = env.run(&["sessions", "tree", &second]);
    assert!(from_child.stdout.contains(&format!("⤷ {id2} * \u{201c}Count the files\u{201d}")), "{}", from_child.stdout);
    assert!(!from_child.stdout.lines().next().unwrap().contains('*'), "{}", from_child.stdout);

    let thread = env.run(&["thread", &second]);
    thread.expect_code(0);
    assert!(thread.stdout.starts_with("[1] agent: Count the files\n"), "{}", thread.stdout);
    assert!(thread.stdout.contains("] tool call list: {\"path\":\".\"}\n"), "{}", thread.stdout);
    assert!(thread.stdout.ends_with("] assistant: No files.\n"), "{}", thread.stdout);

    let show = env.run(&["sessions", "show", &first]);
    // The parent by its short id, which every command takes back.
    let named = show.stdout.split("in session ").nth(1).and_then(|rest| rest.lines().next()).unwrap_or_default();
    assert_eq!(env.run(&["sessions", "show", named, "--json"]).json()["id"], parent.as_str(), "{}", show.stdout);
    let json = env.run(&["sessions", "show", &first, "--json"]).json();
    assert!(json["parentRunId"].is_string(), "{json}");

    // Lists mark child sessions, and only them.
    let list = env.run(&["sessions", "list"]);
    let marked: Vec<&str> = list.stdout.lines().filter(|l| l.contains("[child of run ")).collect();
    assert_eq!(marked.len(), 2, "{}", list.stdout);
    assert!(!marked.iter().any(|l| l.starts_with(&parent[..18])), "{}", list.stdout);
    let listed = env.run(&["sessions", "list", "--json"]).json();
    let children = listed.as_array().unwrap().iter().filter(|s| s["parentRunId"].is_string()).count();
    assert_eq!(children, 2, "{listed}");
}

#[test]
fn the_interactive_session_shows_one_live_line_per_child() {
    let env = Env::new();
    let script = delegating_script(&env);
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script)], "dumb", &[]);
    p.sees("/help for commands");
    p.types("Split it");
    // The pty's bytes are matched as they come; only ASCII is matched here.
    // Children start in call order, each with its own line; how their
    // progress interleaves after that depends on scheduling, so only the
    // redraw (cursor up, clear) and the end are checked, not their order.
    p.sees("Summarise the README");
    p.sees("Count the files");
    p.sees("A\r\x1b[J");
    p.sees("succeeded");
    p.sees("delegate: No files.");
    p.sees("The README says hello, and there are no files.");
    p.leaves();
}

#[test]
fn a_claude_code_subagent_is_a_child_with_its_instructions_and_only_its_tools() {
    let env = Env::new();
    let agents = env.dir.path().join(".claude").join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews a change for bugs. Use after writing code.\ntools: Read, Grep\nmodel: opus\n---\nYou are a careful reviewer. Name each bug with its line.\n",
    )
    .unwrap();
    let path = env.dir.path().join("review.json");
    let file = json!({
        "turns": [
            { "tool_calls": [
                { "id": "d1", "name": "delegate", "arguments": { "task": "Review src/lib.rs", "agent": "reviewer" } }
            ] },
            text("The reviewer found nothing."),
        ],
        "children": [{ "turns": [text("No bugs.")] }]
    });
    std::fs::write(&path, file.to_string()).unwrap();
    let run = env.run_with(
        &["-p", "Review it", "--script", path_str(&path), "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    );
    assert_eq!(run.expect_code(0).json()["result"], "The reviewer found nothing.");
    let requests = env.requests();
    let offered = requests[0]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "delegate").unwrap().clone();
    let agent = offered["inputSchema"]["properties"]["agent"].to_string();
    assert!(agent.contains("reviewer: Reviews a change for bugs."), "{offered}");
    let child = requests
        .iter()
        .find(|r| r["messages"].to_string().contains("You are a careful reviewer."))
        .unwrap_or_else(|| panic!("no child request: {requests:#?}"));
    assert!(child["messages"].to_string().contains("Review src/lib.rs"), "{child}");
    let mut tools: Vec<&str> = child["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    tools.sort_unstable();
    assert!(tools.contains(&"read_file") && tools.contains(&"grep"), "{tools:?}");
    assert!(!tools.contains(&"bash") && !tools.contains(&"write_file") && !tools.contains(&"edit"), "{tools:?}");

    // /agents says what it offers and what it does not use.
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&path)], "dumb", &[]);
    p.sees("/help for commands");
    p.types("/agents");
    p.sees("reviewer  (");
    p.sees("not used: model `opus`: a child uses the session's model");
    p.leaves();
}
