//! A Claude Code project on its first day with seri: one folder with
//! `.claude/settings.json` (hooks as Claude Code's documentation writes
//! them, in Python and in shell, called through `$CLAUDE_PROJECT_DIR`;
//! `Bash(…)` and `Read(…)` rules), `.claude/commands`, `.claude/agents`
//! and a skill with a script, trusted once with `seri mcp trust`, then used
//! as it is from the REPL (a real pty) and from `seri -p`. The hooks'
//! inputs are compared key by key with the shapes Claude Code documents.

use serde_json::{Value, json};

use crate::hooks::keys_of;
use crate::support::{Env, path_str, text};
use crate::terminal::Typing as _;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn executable(path: &std::path::Path, text: &str) {
    write(path, text);
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(path, permissions).unwrap();
}

/// Every line a hook logged: one JSON object each.
fn logged(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The project, as a Claude Code user keeps it. Its hooks log their
/// inputs to `hooks.log` in the project (they run in the sandbox, which
/// lets them write there and nowhere outside).
fn claude_project(env: &Env) {
    let project = env.work();
    let claude = project.join(".claude");
    // The guard of Claude Code's hooks guide, in Python: exit 2 with words on stderr.
    executable(
        &claude.join("hooks").join("bash_guard.py"),
        "#!/usr/bin/env python3\nimport json, os, sys\ndata = json.load(sys.stdin)\n\
         open(os.path.join(os.environ['CLAUDE_PROJECT_DIR'], 'hooks.log'), 'a').write(json.dumps(data) + '\\n')\n\
         if 'rm -rf' in data['tool_input'].get('command', ''):\n    \
         print('Refusing rm -rf: clean with make clean', file=sys.stderr)\n    sys.exit(2)\n",
    );
    // A prompt hook in shell: logs its input, adds context on stdout.
    executable(
        &claude.join("hooks").join("prompt.sh"),
        "#!/bin/sh\ncat >> \"$CLAUDE_PROJECT_DIR/hooks.log\"\necho >> \"$CLAUDE_PROJECT_DIR/hooks.log\"\n\
         echo 'Context: the main branch is protected.'\n",
    );
    write(
        &claude.join("settings.json"),
        &json!({
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "permissions": {
                "allow": ["Bash(echo:*)", "Bash(cd:*)", "Bash(./scripts/line.sh)"],
                "deny": ["Read(**/.env)"]
            },
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/bash_guard.py"}
                ]}],
                "UserPromptSubmit": [{"hooks": [
                    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/prompt.sh"}
                ]}]
            }
        })
        .to_string(),
    );
    write(
        &claude.join("commands").join("review.md"),
        "---\ndescription: Review a file for bugs\nallowed-tools: Read, Grep\n---\nReview $ARGUMENTS for bugs.\n",
    );
    write(
        &claude.join("agents").join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code for bugs.\ntools: Read, Grep\n---\nYou review code. Name each bug with its line.\n",
    );
    let skill = claude.join("skills").join("changelog");
    write(
        &skill.join("SKILL.md"),
        "---\nname: changelog\ndescription: Write a changelog line. Use after a review.\n---\nRun `./scripts/line.sh` and use what it prints.\n",
    );
    executable(&skill.join("scripts").join("line.sh"), "#!/bin/sh\necho '- reviewed the parser'\n");
    write(&project.join(".env"), "API_TOKEN=hunter2\n");
    write(&project.join("src").join("lib.rs"), "pub fn add(a: i32, b: i32) -> i32 { a - b }\n");
}

/// The turns of one review: the skill loaded and its script run, the
/// `.env` read (denied by the rule), `rm -rf` (refused by the guard),
/// `echo` and the skill's script (allowed by the rules, asked of nobody),
/// then the reviewer.
fn review_script(env: &Env, name: &str) -> std::path::PathBuf {
    let skill = env.work().join(".claude").join("skills").join("changelog");
    let line = format!("cd '{}' && ./scripts/line.sh", skill.display());
    let file = json!({
        "turns": [
            {"tool_calls": [
                {"id": "s1", "name": "skill", "arguments": {"name": "changelog"}},
                {"id": "r1", "name": "read_file", "arguments": {"path": ".env"}},
                {"id": "b1", "name": "bash", "arguments": {"command": "rm -rf target"}},
                {"id": "b2", "name": "bash", "arguments": {"command": "echo checked"}},
            ]},
            {"tool_calls": [{"id": "b3", "name": "bash", "arguments": {"command": line}}]},
            {"tool_calls": [
                {"id": "d1", "name": "delegate", "arguments": {"task": "Review src/lib.rs", "agent": "reviewer"}}
            ]},
            text("add subtracts: line 1."),
        ],
        "children": [{"turns": [text("Line 1: add subtracts.")]}]
    });
    let path = env.dir.path().join(name);
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

/// What the model was told of each call, from the requests it got.
fn check_review(requests: &[Value], from: usize) {
    let after_calls = requests[from + 1]["messages"].to_string();
    assert!(after_calls.contains("Run `./scripts/line.sh`"), "the skill's body was loaded: {after_calls}");
    assert!(after_calls.contains("Read(**/.env)"), "the read of .env was denied by the rule: {after_calls}");
    assert!(!after_calls.contains("hunter2"), "{after_calls}");
    assert!(after_calls.contains("Refusing rm -rf: clean with make clean"), "the guard's words: {after_calls}");
    assert!(after_calls.contains("checked"), "echo ran, allowed by Bash(echo:*): {after_calls}");
    let after_script = requests[from + 2]["messages"].to_string();
    assert!(after_script.contains("- reviewed the parser"), "the skill's script ran: {after_script}");
    let child = requests[from + 3..]
        .iter()
        .find(|r| r["messages"].to_string().contains("You review code."))
        .unwrap_or_else(|| panic!("no request of the reviewer: {requests:#?}"));
    let tools: Vec<&str> = child["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(!tools.contains(&"bash") && tools.contains(&"read_file"), "only the agent's tools: {tools:?}");
}

/// The hooks' inputs, key by key as Claude Code documents them (seri adds
/// its own tool name and input beside Claude Code's).
fn check_hook_inputs(log: &[Value], session: &str) {
    let prompt = log.iter().find(|l| l["hook_event_name"] == "UserPromptSubmit").unwrap();
    assert_eq!(
        keys_of(prompt),
        ["cwd", "hook_event_name", "permission_mode", "prompt", "session_id", "transcript_path"],
        "{prompt}"
    );
    assert_eq!(prompt["session_id"], session);
    assert!(prompt["prompt"].as_str().unwrap().contains("for bugs."), "{prompt}");
    let pre: Vec<&Value> = log.iter().filter(|l| l["hook_event_name"] == "PreToolUse").collect();
    assert_eq!(pre.len(), 3, "the matcher `Bash` takes only bash's calls: {pre:#?}");
    for input in &pre {
        assert_eq!(
            keys_of(input),
            [
                "cwd",
                "hook_event_name",
                "permission_mode",
                "seri_tool_input",
                "seri_tool_name",
                "session_id",
                "tool_input",
                "tool_name",
                "transcript_path"
            ]
        );
        assert_eq!(input["tool_name"], "Bash");
        assert!(input["tool_input"]["command"].is_string(), "{input}");
    }
}

#[test]
fn a_claude_code_project_works_as_it_is_from_the_repl_and_from_p() {
    let env = Env::new();
    claude_project(&env);
    let log_path = env.work().join("hooks.log");
    // Not trusted: seri says what waits, and runs none of it.
    let config = env.run(&["config"]).expect_code(0).stdout.clone();
    assert!(config.contains("not trusted, not applied: seri mcp trust"), "{config}");
    let trusted = env.run(&["mcp", "trust"]).expect_code(0).stdout.clone();
    assert!(trusted.contains(".claude/settings.json"), "{trusted}");
    assert!(trusted.contains("review.md"), "the project's command is in the trust: {trusted}");
    let config = env.run(&["config"]).expect_code(0).stdout.clone();
    assert!(config.contains("uses       hooks: PreToolUse (1), UserPromptSubmit (1)"), "{config}");
    assert!(config.contains("uses       permissions.allow: 3 rules"), "{config}");
    assert!(config.contains("uses       permissions.deny: 1 path rule for seri's file tools"), "{config}");

    // The REPL, on a real terminal.
    let script = review_script(&env, "repl.json");
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script)], "dumb", &[]);
    p.sees("/help for commands");
    p.types("/help");
    p.sees("/review            Review a file for bugs (project; seri does not use its allowed-tools)");
    p.types("/review src/lib.rs");
    p.sees("add subtracts: line 1.");
    p.types("/skills");
    p.sees("changelog  (project");
    p.types("/agents");
    p.sees("reviewer  (");
    p.leaves();
    let requests = env.requests();
    let system = requests[0]["system"].as_str().unwrap();
    assert!(system.contains("<skill name=\"changelog\">"), "{system}");
    let first = requests[0]["messages"].to_string();
    assert!(first.contains("Review src/lib.rs for bugs."), "the command, expanded: {first}");
    assert!(first.contains("Context: the main branch is protected."), "the prompt hook's context: {first}");
    check_review(&requests, 0);
    let session = env.run(&["sessions", "list", "--json"]).json()[0]["id"].as_str().unwrap().to_owned();
    check_hook_inputs(&logged(&log_path), &session);

    // The same from `seri -p`, in a session of its own.
    std::fs::remove_file(&log_path).unwrap();
    let before = requests.len();
    let script = review_script(&env, "p.json");
    let run = env.run_with(
        &["--script", path_str(&script), "-p", "/review src/lib.rs", "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    );
    let out = run.expect_code(0).json();
    assert_eq!(out["result"], "add subtracts: line 1.");
    let requests = env.requests();
    assert!(requests[before]["messages"].to_string().contains("Review src/lib.rs for bugs."));
    check_review(&requests, before);
    check_hook_inputs(&logged(&log_path), out["session_id"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(env.work().join(".env")).unwrap(), "API_TOKEN=hunter2\n");
}
