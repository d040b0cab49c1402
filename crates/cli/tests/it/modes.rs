//! Permission modes and command patterns as a person uses them: Shift+Tab
//! in the REPL (through a real pseudo-terminal), leaving plan mode by
//! approving the plan, `--permission-mode` and `--allow 'Bash(…)'` with the
//! scripted provider, and the mode recorded in the session.

use serde_json::json;

use crate::support::{Env, path_str, text};
use crate::terminal::Typing as _;

/// The `<permission_mode>` block of a logged request, if it has one.
fn mode_block(request: &serde_json::Value) -> bool {
    request.to_string().contains("<permission_mode mode=\\\"plan\\\">")
}

#[test]
fn shift_tab_cycles_to_plan_mode_and_approving_the_plan_leaves_it() {
    let env = Env::new();
    let write = |id: &str| json!({"tool_calls": [{"id": id, "name": "write_file", "arguments": {"path": "notes.txt", "content": "hi"}}]});
    let script =
        env.script("s.json", json!([write("early"), text("Plan: 1. write notes.txt."), write("late"), text("Done.")]));
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.sees("/help for commands");
    // rexpect reads bytes as Latin-1: the prompt's `›` is matched as ASCII
    // around it. Keys sent before the line editor reads would be echoed.
    p.sees("Ctrl-D to leave.");
    std::thread::sleep(std::time::Duration::from_millis(500));
    // Shift+Tab, twice: accept-edits, then plan; the prompt says which.
    p.send("\x1b[Z").unwrap();
    p.flush().unwrap();
    p.sees("permission mode: accept-edits");
    p.sees("accept-edits ");
    p.send("Write a note\x1b[Z").unwrap();
    p.flush().unwrap();
    p.sees("permission mode: plan");
    // The line typed before Shift+Tab is still there.
    p.sees("plan ");
    p.sees("Write a note");
    p.types("");
    p.sees("Plan: 1. write notes.txt.");
    p.sees("Carry out this plan?");
    assert!(!env.work().join("notes.txt").exists(), "plan mode refused the write");
    p.types("a");
    p.sees("permission mode: accept-edits");
    p.sees("Done.");
    p.sees("accept-edits ");
    p.leaves();
    assert_eq!(std::fs::read_to_string(env.work().join("notes.txt")).unwrap(), "hi", "written without asking");

    let requests = env.requests();
    let blocks: Vec<bool> = requests.iter().map(mode_block).collect();
    assert_eq!(blocks, [true, true, false, false], "the model is told of plan mode while it lasts");
    let session = env.run(&["sessions", "list", "--json"]).json()[0]["id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &session]).expect_code(0).stdout.clone();
    assert!(thread.contains("permission mode: plan"), "{thread}");
    assert!(thread.contains("permission denied write_file (plan_mode)"), "{thread}");
    assert!(thread.contains("user: I approve your plan"), "{thread}");
    let shown = env.run(&["sessions", "show", &session, "--json"]).json();
    assert_eq!(shown["permissionMode"], "accept-edits", "the mode survives the process");
}

#[test]
fn a_headless_run_records_its_mode_and_plan_mode_refuses_writes() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "touch ran"}}]},
            text("I would run touch."),
        ]),
    );
    let run = env.run(&[
        "--script",
        path_str(&script),
        "--permission-mode",
        "plan",
        "--yes",
        "-p",
        "Go",
        "--output-format",
        "json",
    ]);
    let out = run.expect_code(0).json();
    assert!(!env.work().join("ran").exists(), "plan mode wins over --yes");
    let shown = env.run(&["sessions", "show", out["session_id"].as_str().unwrap(), "--json"]).json();
    assert_eq!(shown["permissionMode"], "plan");

    let bad = env.run(&["--script", path_str(&script), "--permission-mode", "yolo", "-p", "Go"]);
    bad.expect_code(2);
    assert!(bad.stderr.contains("--permission-mode: `yolo` is not a permission mode"), "{}", bad.stderr);
}

#[test]
fn command_patterns_allow_each_part_of_a_command_and_no_more() {
    let env = Env::new();
    let bash = |id: &str, command: &str| json!({"tool_calls": [{"id": id, "name": "bash", "arguments": {"command": command}}]});
    let script = env.script(
        "s.json",
        json!([bash("c1", "echo hi && touch allowed"), bash("c2", "touch allowed; touch sneaky"), text("Done.")]),
    );
    let run = env.run(&[
        "--script",
        path_str(&script),
        "--allow",
        "Bash(echo *)",
        "--allow",
        "Bash(touch allowed)",
        "-p",
        "Go",
        "--output-format",
        "json",
    ]);
    let out = run.expect_code(0).json();
    assert!(env.work().join("allowed").exists());
    assert!(!env.work().join("sneaky").exists(), "one part no pattern allows is asked about, and nobody can answer");
    let thread = env.run(&["thread", out["session_id"].as_str().unwrap()]).stdout;
    assert!(thread.contains("permission denied bash (policy)"), "{thread}");

    // config.json takes Claude Code's shape.
    std::fs::write(
        env.home().join("config.json"),
        json!({"permissions": {"deny": ["Bash(rm *)"], "allow": ["Bash"]}}).to_string(),
    )
    .unwrap();
    let script = env.script("t.json", json!([bash("c3", "touch kept; rm -f allowed"), text("Done.")]));
    env.run(&["--script", path_str(&script), "-p", "Go"]).expect_code(0);
    assert!(
        env.work().join("allowed").exists() && !env.work().join("kept").exists(),
        "a denied part denies the whole command"
    );
}
