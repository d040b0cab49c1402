//! Permission modes and command patterns as a person uses them: Shift+Tab
//! in the REPL (through a real pseudo-terminal), leaving plan mode by
//! approving the plan, `--permission-mode` and `--allow 'Bash(…)'` with the
//! scripted provider, and the mode recorded in the session.

use rexpect::session::spawn_command;
use serde_json::json;

use crate::support::{Env, path_str, text};

const TIMEOUT_MS: u64 = 30_000;

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
    let mut command = env.seri_on_terminal();
    command
        .args(["--script", path_str(&script)])
        .env("TERM", "xterm")
        .env("NO_COLOR", "1")
        .env("SERI_REQUEST_LOG", env.request_log());
    let mut p = spawn_command(command, Some(TIMEOUT_MS)).unwrap();
    p.exp_string("/help for commands").unwrap();
    // rexpect reads bytes as Latin-1: the prompt's `›` is matched as ASCII
    // around it. Keys sent before the line editor reads would be echoed.
    p.exp_string("Ctrl-D to leave.").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // Shift+Tab, twice: accept-edits, then plan; the prompt says which.
    p.send("\x1b[Z").unwrap();
    p.flush().unwrap();
    p.exp_string("permission mode: accept-edits").unwrap();
    p.exp_string("accept-edits ").unwrap();
    p.send("Write a note\x1b[Z").unwrap();
    p.flush().unwrap();
    p.exp_string("permission mode: plan").unwrap();
    // The line typed before Shift+Tab is still there.
    p.exp_string("plan ").unwrap();
    p.exp_string("Write a note").unwrap();
    p.send_line("").unwrap();
    p.exp_string("Plan: 1. write notes.txt.").unwrap();
    p.exp_string("Carry out this plan?").unwrap();
    assert!(!env.work().join("notes.txt").exists(), "plan mode refused the write");
    p.send_line("a").unwrap();
    p.exp_string("permission mode: accept-edits").unwrap();
    p.exp_string("Done.").unwrap();
    p.exp_string("accept-edits ").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
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
