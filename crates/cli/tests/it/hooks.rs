//! Hooks as Claude Code users write them: real `sh` scripts configured in
//! `config.json`, run by a real session with the scripted provider, reading
//! the event as JSON on stdin and answering by exit code 2 or JSON; and
//! contained as `bash` is: in its sandbox, without the provider keys, and
//! nothing they start outlives seri.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Env, path_str, text};
use crate::terminal::Typing as _;

fn script(env: &Env, name: &str, body: &str) -> String {
    let path = env.dir.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    path.to_string_lossy().into_owned()
}

fn hook(command: &str) -> Value {
    json!([{"hooks": [{"type": "command", "command": command}]}])
}

#[test]
fn hook_scripts_block_calls_speak_after_them_add_to_prompts_and_keep_a_turn_going() {
    let env = Env::new();
    // In the workspace: hooks run in the sandbox, which writes nowhere else
    // (but the system's temporary folder).
    let saved = env.work().join("pre.json");
    let guard = script(
        &env,
        "guard.sh",
        &format!(
            "input=$(cat)\necho \"$input\" > '{}'\ncase \"$input\" in *'rm -rf'*) echo 'no rm -rf here' >&2; exit 2;; esac\nexit 0",
            saved.display()
        ),
    );
    let after = script(
        &env,
        "after.sh",
        "cat > /dev/null\nprintf '{\"decision\":\"block\",\"reason\":\"run the formatter next\"}'",
    );
    let prompt = script(
        &env,
        "prompt.sh",
        "input=$(cat)\ncase \"$input\" in *secret*) echo 'no secrets in prompts' >&2; exit 2;; esac\necho 'Context from a hook: today is Tuesday'",
    );
    let stop = script(
        &env,
        "stop.sh",
        "input=$(cat)\ncase \"$input\" in *'\"stop_hook_active\":true'*) exit 0;; esac\necho '{\"decision\":\"block\",\"reason\":\"say DONE at the end\"}'",
    );
    let config = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}],
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": after}]}],
        "UserPromptSubmit": hook(&prompt),
        "Stop": hook(&stop),
    }});
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let turns = json!([
        {"tool_calls": [
            {"id": "c1", "name": "bash", "arguments": {"command": "rm -rf build"}},
            {"id": "c2", "name": "write_file", "arguments": {"path": "notes.txt", "content": "hi"}},
        ]},
        text("All written."),
        text("DONE"),
    ]);
    let script_file = env.script("s.json", turns);
    let run = env.run_with(
        &["--script", path_str(&script_file), "--yes", "-p", "Tidy up", "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    );
    let out = run.expect_code(0).json();
    assert_eq!(out["result"], "DONE", "the Stop hook kept the turn going once");
    assert!(env.work().join("notes.txt").exists());

    let pre: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(pre["hook_event_name"], "PreToolUse");
    assert_eq!(pre["tool_name"], "Bash", "Claude Code's name, so matchers and scripts carry over");
    assert_eq!(pre["tool_input"]["command"], "rm -rf build");
    assert_eq!(pre["session_id"], out["session_id"]);
    assert_eq!(pre["permission_mode"], "default");
    assert!(pre["cwd"].as_str().unwrap().ends_with("work"), "{pre}");

    let session = out["session_id"].as_str().unwrap();
    let thread = env.run(&["thread", session]).expect_code(0).stdout.clone();
    assert!(thread.contains("permission denied bash (hook): no rm -rf here"), "{thread}");
    assert!(thread.contains("run the formatter next"), "{thread}");
    assert!(thread.contains("did not let the turn end yet"), "{thread}");
    let requests = env.requests();
    let first = requests[0]["messages"].to_string();
    assert!(first.contains("Context from a hook: today is Tuesday"), "{first}");
    let second = requests[1]["messages"].to_string();
    assert!(second.contains("blocked this call; it did not run. The hook said:\\nno rm -rf here"), "{second}");

    let blocked =
        env.run(&["--script", path_str(&script_file), "-c", "-p", "here is my secret", "--output-format", "json"]);
    blocked.expect_code(1);
    let said = blocked.json();
    assert_eq!(said["status"], "failed");
    assert!(
        blocked.stdout.contains("no secrets in prompts") || blocked.stderr.contains("no secrets in prompts"),
        "{blocked:?}"
    );
    let after = env.run(&["thread", session]).stdout;
    assert!(!after.contains("here is my secret"), "a blocked prompt is not recorded");

    // A new session's first message is screened before the session exists.
    let count = || env.run(&["sessions", "list", "--json"]).json().as_array().map(Vec::len);
    let before = count();
    let fresh = env.run(&["--script", path_str(&script_file), "-p", "here is my secret", "--output-format", "json"]);
    fresh.expect_code(1);
    let said = fresh.json();
    assert_eq!(said["session_id"], Value::Null, "no session was made: {said}");
    assert_eq!(said["status"], "failed");
    assert!(fresh.stderr.contains("no secrets in prompts"), "the hook's words, whole: {fresh:?}");
    assert_eq!(count(), before, "a blocked first message leaves no empty session behind");
}

/// The processes whose environment holds `HOOK_TEST_MARK=mark`.
fn marked(mark: &str) -> usize {
    let wanted = format!("HOOK_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            std::fs::read(entry.path().join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == wanted.as_bytes()))
        })
        .count()
}

#[test]
fn a_hook_runs_in_the_sandbox_bash_runs_in() {
    let env = Env::new();
    // Outside the workspace and outside the temporary folder (which the
    // sandbox lets commands write).
    let elsewhere = crate::support::outside_temp();
    let outside = elsewhere.path().join("pwned");
    let hidden = env.dir.path().join(".private");
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::write(hidden.join("key"), "TOPSECRET").unwrap();
    // As a model could write it into a script the Stop hook runs.
    let stop = script(
        &env,
        "check-tests.sh",
        &format!(
            "cat > /dev/null\ntouch '{}'\ncat \"$HOME/.private/key\" > leak.txt 2>&1\necho \"key=${{OPENAI_API_KEY-none}}\" > ran.txt",
            outside.display()
        ),
    );
    let config = json!({"hooks": {"Stop": hook(&stop)}, "sandbox": {"hiddenPaths": ["~/.private"]}});
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let script_file = env.script("s.json", json!([text("Done.")]));
    let args = ["--script", path_str(&script_file), "-p", "Hi.", "--output-format", "json"];
    env.run_with(&args, &[("OPENAI_API_KEY", "sk-test-key-0123456789")]).expect_code(0);
    let ran = env.work().join("ran.txt");
    if !crate::support::sandbox_enforced() {
        assert!(!ran.exists() && !outside.exists(), "a hook the sandbox cannot contain does not run");
        return;
    }
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "key=none\n", "the hook ran, without the provider key");
    assert!(!outside.exists(), "the hook wrote outside the workspace");
    let leak = std::fs::read_to_string(env.work().join("leak.txt")).unwrap();
    assert!(!leak.contains("TOPSECRET") && leak.contains("Permission denied"), "{leak}");
    // In full-access, a hook runs as the person, as bash does.
    let mut full = args.to_vec();
    full.extend(["--sandbox", "full-access"]);
    env.run(&full).expect_code(0);
    assert!(outside.exists());
    assert!(std::fs::read_to_string(env.work().join("leak.txt")).unwrap().contains("TOPSECRET"));
}

#[test]
fn what_a_hook_started_dies_when_seri_is_killed_with_sigkill() {
    let env = Env::new();
    let mark = format!("sigkill-{}", std::process::id());
    let stop = format!("export HOOK_TEST_MARK={mark}; touch started; sleep 300 & sleep 300");
    let config = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": stop, "timeout": 3600}]}]}});
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let script_file = env.script("s.json", json!([text("Done.")]));
    let mut seri = env
        .seri()
        .args(["--script", path_str(&script_file), "-p", "Hi.", "--sandbox", "full-access"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while marked(&mark) < 2 {
        assert!(Instant::now() < deadline, "the hook never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    seri.kill().unwrap();
    seri.wait().unwrap();
    // The launcher sees its parent go (it looks every 100 ms) and ends
    // everything below it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while marked(&mark) > 0 {
        assert!(Instant::now() < deadline, "what the hook started outlived seri");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// H1 over HTTP: a PreToolUse hook that never reads its input, given a
/// `write_file` of 300 KB (over a pipe's 64 KiB), and timed out only after
/// an hour. `POST …/cancel` ends it at once: the run ends `cancelled` in
/// the store, nothing the hook started is left, and the session's next
/// message is answered.
#[test]
fn a_hung_hook_is_ended_by_a_cancel_over_the_api_and_frees_its_session() {
    use crate::serve::{http, serve, terminate};
    let env = Env::new();
    let mark = format!("hung-{}", std::process::id());
    let guard = format!("export HOOK_TEST_MARK={mark}; touch hook-started; sleep 3604");
    let config = json!({"hooks": {"PreToolUse": [{"matcher": "write_file", "hooks": [{"type": "command", "command": guard, "timeout": 3600}]}]}});
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let big = "x".repeat(300 * 1024);
    let write =
        json!({"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "big.txt", "content": big}}]});
    let script = env.script("s.json", json!([write, text("Answered after the cancel.")]));
    let (mut child, url) = serve(&env, &["--script", path_str(&script), "--yes"], "t0ken");
    let (_, body) = http(&url, "POST", "/api/sessions", Some("t0ken"), Some(&json!({})));
    let session = serde_json::from_str::<Value>(&body).unwrap()["session"]["id"].as_str().unwrap().to_owned();
    let messages = format!("/api/sessions/{session}/messages");
    let (status, _) = http(&url, "POST", &messages, Some("t0ken"), Some(&json!({"text": "Write it.", "wait": false})));
    assert_eq!(status, 202);
    let deadline = Instant::now() + Duration::from_secs(60);
    while marked(&mark) == 0 {
        assert!(Instant::now() < deadline, "the hook never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (status, body) = http(&url, "POST", &format!("/api/sessions/{session}/cancel"), Some("t0ken"), None);
    assert_eq!((status, body.contains("true")), (200, true), "{body}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while marked(&mark) > 0 {
        assert!(Instant::now() < deadline, "the hook outlived the cancel");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The session is free: the next message is answered.
    let (status, body) = http(&url, "POST", &messages, Some("t0ken"), Some(&json!({"text": "Again.", "wait": true})));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Answered after the cancel."), "{body}");
    assert!(terminate(&mut child).success());
    let db = rusqlite::Connection::open(env.home().join("seri.db")).unwrap();
    let first: String = db.query_row("SELECT status FROM runs ORDER BY started_at LIMIT 1", [], |r| r.get(0)).unwrap();
    assert_eq!(first, "cancelled");
    assert!(!env.work().join("big.txt").exists(), "the refused write never happened");
}

/// A hook in Python, as Claude Code's documentation writes them.
fn python(env: &Env, name: &str, body: &str) -> String {
    let path = env.dir.path().join(name);
    std::fs::write(&path, format!("#!/usr/bin/env python3\nimport json, sys\n{body}\n")).unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    path.to_string_lossy().into_owned()
}

/// The keys of a JSON object, sorted.
pub(crate) fn keys_of(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

#[test]
fn claude_codes_hooks_read_their_fields_and_answer_as_documented() {
    let env = Env::new();
    std::fs::write(env.work().join("notes.txt"), "draft\n").unwrap();
    let saved = |name: &str| env.work().join(name);
    // Claude Code's own example guard: the command from tool_input, exit 2 with words on stderr.
    let guard = python(
        &env,
        "bash_validator.py",
        &format!(
            "data = json.load(sys.stdin)\nopen({:?}, 'w').write(json.dumps(data))\n\
             if data['tool_name'] == 'Bash' and 'grep ' in data['tool_input'].get('command', ''):\n    \
             print('Use rg instead of grep', file=sys.stderr)\n    sys.exit(2)\n\
             if data['tool_input'].get('command') == 'make deploy':\n    \
             print(json.dumps({{'continue': False, 'stopReason': 'deploys go through CI'}}))\n",
            saved("pre.json").display()
        ),
    );
    let after_edit = python(
        &env,
        "after_edit.py",
        &format!(
            "data = json.load(sys.stdin)\nopen({:?}, 'w').write(json.dumps(data))\n\
             print(json.dumps({{'hookSpecificOutput': {{'hookEventName': 'PostToolUse', \
             'additionalContext': 'edited ' + data['tool_input']['file_path']}}}}))",
            saved("post.json").display()
        ),
    );
    let start = script(&env, "start.sh", "cat > /dev/null\necho 'Context: the release branch is frozen.'");
    let stop = python(
        &env,
        "stop.py",
        &format!(
            "data = json.load(sys.stdin)\n\
             lines = [json.loads(l) for l in open(data['transcript_path'])]\n\
             open({:?}, 'w').write(json.dumps({{'input': data, 'lines': lines}}))",
            saved("stop.json").display()
        ),
    );
    let end = script(&env, "end.sh", &format!("cat > '{}'", saved("end.json").display()));
    let config = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}],
        "PostToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [{"type": "command", "command": after_edit}]}],
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": start}]}],
        "Stop": hook(&stop),
        "SessionEnd": hook(&end),
    }});
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let turns = json!([
        {"tool_calls": [
            {"id": "c1", "name": "bash", "arguments": {"command": "grep -r TODO ."}},
            {"id": "c2", "name": "edit", "arguments": {"path": "notes.txt", "old": "draft", "new": "final"}},
        ]},
        text("Edited."),
    ]);
    let script_file = env.script("s.json", turns);
    let run = env.run_with(
        &["--script", path_str(&script_file), "--yes", "-p", "Finish the notes", "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    );
    let out = run.expect_code(0).json();
    let session = out["session_id"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(env.work().join("notes.txt")).unwrap(), "final\n");
    let read = |name: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(saved(name)).unwrap()).unwrap() };

    // PreToolUse, field by field as Claude Code documents it (plus seri's own two).
    let pre = read("pre.json");
    assert_eq!(
        keys_of(&pre),
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
    assert_eq!(pre["tool_input"], json!({"command": "grep -r TODO ."}));
    assert_eq!(pre["session_id"], session);
    // PostToolUse of an edit: Claude Code's argument names, an absolute path.
    let post = read("post.json");
    assert_eq!(post["hook_event_name"], "PostToolUse");
    assert_eq!(post["tool_name"], "Edit");
    let file = env.work().join("notes.txt").canonicalize().unwrap();
    let given = std::path::Path::new(post["tool_input"]["file_path"].as_str().unwrap()).canonicalize().unwrap();
    assert_eq!(given, file);
    assert_eq!(post["tool_input"]["old_string"], "draft");
    assert_eq!(post["tool_input"]["new_string"], "final");
    assert_eq!(post["tool_input"]["replace_all"], false);
    assert_eq!(post["seri_tool_input"]["old"], "draft");
    assert!(post["tool_response"].is_object(), "{post}");
    // The Stop hook read the session from transcript_path, as Claude Code's JSONL.
    let stopped = read("stop.json");
    assert_eq!(stopped["input"]["hook_event_name"], "Stop");
    assert_eq!(stopped["input"]["stop_hook_active"], false);
    let lines = stopped["lines"].as_array().unwrap();
    assert_eq!(lines[0]["type"], "user");
    assert!(lines[0]["message"]["content"].as_str().unwrap().starts_with("Finish the notes"), "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l["message"]["content"][0]["type"] == "tool_use" && l["message"]["content"][0]["name"] == "Edit"),
        "{lines:#?}"
    );
    assert!(lines.iter().all(|l| l["sessionId"] == session && l["uuid"].is_string()), "{lines:#?}");
    // SessionEnd, once the task was done.
    let end = read("end.json");
    assert_eq!(end["hook_event_name"], "SessionEnd");
    assert_eq!(end["reason"], "other");

    // What the model read: the SessionStart words with the message, the
    // guard's words as the refused call's result, the added context after the edit.
    let requests = env.requests();
    let first = requests[0]["messages"].to_string();
    assert!(first.contains("Context: the release branch is frozen."), "{first}");
    let second = requests[1]["messages"].to_string();
    assert!(second.contains("Use rg instead of grep"), "{second}");
    assert!(second.contains("edited /"), "{second}");

    // `continue: false` ends the run there, saying the hook's reason.
    let deploy = env.script(
        "d.json",
        json!([{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "make deploy"}}]}]),
    );
    let halted = env.run(&["--script", path_str(&deploy), "--yes", "-p", "Deploy", "--output-format", "json"]);
    halted.expect_code(1);
    let said = halted.json();
    assert_eq!(said["status"], "failed");
    assert_eq!(said["error"], "a PreToolUse hook stopped the run: deploys go through CI");
}

#[test]
fn a_pre_continue_hook_refuses_a_continuation_and_the_session_goes_on() {
    let env = Env::new();
    let guard = script(&env, "no-continue.sh", "cat > /dev/null\necho 'finish the migration here first' >&2\nexit 2");
    std::fs::write(env.home().join("config.json"), json!({"hooks": {"PreContinue": hook(&guard)}}).to_string())
        .unwrap();
    let turns = json!([
        {"tool_calls": [{"id": "c1", "name": "continue_session", "arguments": {
            "reason": "topic_change", "title": "Elsewhere", "description": "Another topic",
            "handoff": {"purpose": "Another topic.", "currentRequest": "Go on."}
        }}]},
        text("Staying here."),
    ]);
    let script_file = env.script("s.json", turns);
    let run = env.run_with(
        &["--script", path_str(&script_file), "-p", "New topic", "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    );
    let out = run.expect_code(0).json();
    assert_eq!(out["result"], "Staying here.");
    assert!(out["continued_to_session_id"].is_null(), "{out}");
    let second = env.requests()[1]["messages"].to_string();
    assert!(second.contains("A PreContinue hook the person configured refused"), "{second}");
    assert!(second.contains("finish the migration here first"), "{second}");
}

#[test]
fn claude_codes_settings_files_bring_their_hooks_and_rules_the_projects_once_trusted() {
    let env = Env::new();
    // The person's own, in their home: applies as it is.
    let mine = env.dir.path().join(".claude");
    std::fs::create_dir_all(&mine).unwrap();
    let log = env.work().join("user-hook.json");
    let user_hook = script(&env, "user-hook.sh", &format!("cat > '{}'", log.display()));
    std::fs::write(
        mine.join("settings.json"),
        json!({
            "permissions": {"deny": ["Bash(curl:*)"]},
            "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": user_hook}]}]},
            "env": {"FOO": "1"}
        })
        .to_string(),
    )
    .unwrap();
    // The project's: applies only once trusted.
    let project = env.work().join(".claude");
    std::fs::create_dir_all(&project).unwrap();
    let project_log = env.work().join("project-hook.json");
    let project_hook = script(&env, "project-hook.sh", &format!("cat > '{}'", project_log.display()));
    std::fs::write(
        project.join("settings.json"),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": project_hook}]}]}}).to_string(),
    )
    .unwrap();

    let config = env.run(&["config"]).expect_code(0).stdout.clone();
    assert!(config.contains(".claude/settings.json (yours)"), "{config}");
    assert!(config.contains("uses       permissions.deny: 1 rule"), "{config}");
    assert!(config.contains("not used   env: seri sets no variables"), "{config}");
    assert!(config.contains(".claude/settings.json (project, not trusted, not applied: seri mcp trust)"), "{config}");

    let turns = json!([
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "curl https://example.com"}}]},
        text("Could not."),
        text("Again."),
    ]);
    let script_file = env.script("s.json", turns);
    let run = env.run(&["--script", path_str(&script_file), "--yes", "-p", "Fetch it", "--output-format", "json"]);
    let out = run.expect_code(0).json();
    let session = out["session_id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &session]).stdout;
    assert!(thread.contains("permission denied bash"), "the person's deny rule held even with --yes: {thread}");
    let heard: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(heard["hook_event_name"], "UserPromptSubmit");
    assert!(!project_log.exists(), "an untrusted project's hook never ran");

    env.run(&["mcp", "trust"]).expect_code(0);
    let config = env.run(&["config"]).expect_code(0).stdout.clone();
    assert!(config.contains("(project, trusted)"), "{config}");
    assert!(config.contains("uses       hooks: Stop (1)"), "{config}");
    env.run(&["--script", path_str(&script_file), "-r", &session, "-p", "Again", "--output-format", "json"])
        .expect_code(0);
    let stopped: Value = serde_json::from_str(&std::fs::read_to_string(&project_log).unwrap()).unwrap();
    assert_eq!(stopped["hook_event_name"], "Stop");
}

#[test]
fn a_status_line_shows_what_its_command_makes_of_the_session() {
    let env = Env::new();
    let saved = env.work().join("status.json");
    // As Claude Code's documentation writes one, in Python.
    let status = python(
        &env,
        "statusline.py",
        &format!(
            "data = json.load(sys.stdin)\nopen({:?}, 'w').write(json.dumps(data))\n\
             print('[' + data['model']['display_name'] + '] ' + str(data['context_window']['context_window_size']) \
             + ' ' + data['session_id'][:8])\nprint('a second line is not shown')",
            saved.display()
        ),
    );
    std::fs::write(
        env.home().join("config.json"),
        json!({"statusLine": {"type": "command", "command": status, "padding": 2}}).to_string(),
    )
    .unwrap();
    let script_file = env.script("s.json", json!([text("Hi.")]));
    let mut p = crate::terminal::on_terminal(
        &env,
        &["--script", path_str(&script_file), "--context-window", "8000"],
        "dumb",
        &[],
    );
    p.sees("/help for commands");
    p.types("Hello");
    p.sees("Hi.");
    p.sees("  [scripted] 8000 ");
    p.leaves();
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "Status");
    for key in ["session_id", "transcript_path", "cwd", "model", "workspace", "version", "cost", "context_window"] {
        assert!(!input[key].is_null() || key == "cost", "{key} in {input}");
    }
    assert!(input["cost"]["total_cost_usd"].is_null(), "no price, so unknown: {input}");
    assert!(std::path::Path::new(input["transcript_path"].as_str().unwrap()).exists());
}

#[test]
fn the_status_line_is_made_again_while_a_turn_runs() {
    let env = Env::new();
    let status = python(&env, "out.py", "print('out=' + str(json.load(sys.stdin)['cost']['total_output_tokens']))");
    std::fs::write(
        env.home().join("config.json"),
        json!({"statusLine": {"type": "command", "command": status}}).to_string(),
    )
    .unwrap();
    let usage = |output: u64| json!({"input": 10, "cache_read": 0, "cache_write": 0, "output": output});
    let script_file = env.script(
        "s.json",
        json!([
            {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 3"}}], "usage": usage(42)},
            {"text": "Slept.", "usage": usage(100)},
        ]),
    );
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script_file), "--yes"], "xterm", &[]);
    p.sees("/help for commands");
    p.types("Sleep a while");
    // Only the first turn's 42 tokens are recorded while bash sleeps: shown
    // beside the spinner, before the turn ends (after it, the sum is 142).
    p.sees("out=42");
    p.sees("Slept.");
    p.sees("out=142");
    p.leaves();
}

#[test]
fn a_permission_request_hook_answers_for_the_person_before_they_are_asked() {
    let env = Env::new();
    let saved = env.work().join("asked.jsonl");
    // Claude Code's documented answer: hookSpecificOutput.decision.behavior.
    let answer = python(
        &env,
        "permission.py",
        &format!(
            "data = json.load(sys.stdin)\nopen({:?}, 'a').write(json.dumps(data) + '\\n')\n\
             behavior = 'deny' if data['tool_name'] == 'Write' else 'allow'\n\
             print(json.dumps({{'hookSpecificOutput': {{'hookEventName': 'PermissionRequest', \
             'decision': {{'behavior': behavior, 'message': 'no new files today'}}}}}}))",
            saved.display()
        ),
    );
    std::fs::write(
        env.home().join("config.json"),
        json!({"hooks": {"PermissionRequest": [{"matcher": "Write|Bash", "hooks": [{"type": "command", "command": answer}]}]}})
            .to_string(),
    )
    .unwrap();
    let script_file = env.script(
        "s.json",
        json!([
            {"tool_calls": [
                {"id": "w1", "name": "write_file", "arguments": {"path": "a.txt", "content": "x"}},
                {"id": "b1", "name": "bash", "arguments": {"command": "echo allowed-by-hook"}},
            ]},
            text("Done."),
        ]),
    );
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script_file)], "dumb", &[]);
    p.sees("/help for commands");
    p.types("Write and run");
    p.sees("Done.");
    p.leaves();
    assert!(!env.work().join("a.txt").exists(), "the hook denied the write");
    let requests = env.requests();
    let after = requests[1]["messages"].to_string();
    assert!(after.contains("a PermissionRequest hook denied write_file: a.txt: no new files today"), "{after}");
    assert!(after.contains("allowed-by-hook"), "the hook allowed bash, unasked: {after}");
    let asked: Vec<Value> =
        std::fs::read_to_string(&saved).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(
        keys_of(&asked[0]),
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
    assert_eq!(asked[0]["hook_event_name"], "PermissionRequest");
    assert_eq!(asked[0]["tool_name"], "Write");
    assert!(asked[0]["tool_input"]["file_path"].as_str().unwrap().ends_with("a.txt"), "{}", asked[0]);
    let session = env.run(&["sessions", "list", "--json"]).json()[0]["id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &session]).stdout;
    assert!(thread.contains("permission denied write_file (hook)"), "{thread}");
}

#[test]
fn a_notification_hook_hears_each_question_the_repl_asks() {
    let env = Env::new();
    let saved = env.work().join("notified.json");
    let notify = script(&env, "notify.sh", &format!("cat > '{}'", saved.display()));
    std::fs::write(
        env.home().join("config.json"),
        json!({"hooks": {"Notification": [{"matcher": "permission_prompt", "hooks": [{"type": "command", "command": notify}]}]}})
            .to_string(),
    )
    .unwrap();
    let script_file = env.script(
        "s.json",
        json!([
            {"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}]},
            text("Written."),
        ]),
    );
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script_file)], "dumb", &[]);
    p.sees("/help for commands");
    p.types("Write it");
    p.sees("Allow? [y]es");
    p.types("y");
    p.sees("Written.");
    p.leaves();
    let heard: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(heard["hook_event_name"], "Notification");
    assert_eq!(heard["notification_type"], "permission_prompt");
    assert_eq!(heard["message"], "seri needs your permission to use Write");
}

#[test]
fn a_claude_deny_of_a_file_keeps_it_from_tools_and_commands() {
    let env = Env::new();
    std::fs::write(env.work().join(".env"), "API_TOKEN=hunter2\n").unwrap();
    let mine = env.dir.path().join(".claude");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("settings.json"), json!({"permissions": {"deny": ["Read(./.env)"]}}).to_string()).unwrap();
    let turns = json!([
        {"tool_calls": [
            {"id": "r1", "name": "read_file", "arguments": {"path": ".env"}},
            {"id": "b1", "name": "bash", "arguments": {"command": "cat .env"}},
        ]},
        text("Could not read it."),
    ]);
    let script_file = env.script("s.json", turns);
    let run = env.run_with(
        &["--script", path_str(&script_file), "--yes", "-p", "Read the token", "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    );
    run.expect_code(0);
    let second = env.requests()[1]["messages"].to_string();
    assert!(!second.contains("hunter2"), "the denied file reached the model: {second}");
    if !crate::support::sandbox_enforced() {
        return;
    }
    let config = env.run(&["config"]).stdout;
    assert!(config.contains("permissions.deny: 1 path rule for seri's file tools"), "{config}");
    assert!(config.contains("permissions.deny: 1 place kept from bash too, by the sandbox"), "{config}");
}

#[test]
fn a_pre_tool_use_hook_that_answers_ask_has_the_person_asked_even_for_an_allowed_tool() {
    let env = Env::new();
    std::fs::write(env.work().join("notes.txt"), "private notes\n").unwrap();
    let ask = script(
        &env,
        "ask.sh",
        "cat > /dev/null\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"ask\"}}'",
    );
    let config =
        json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": ask}]}]}});
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let turns = json!([
        {"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
        text("Asked."),
        {"tool_calls": [{"id": "r2", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
        text("Nobody to ask."),
    ]);
    let script_file = env.script("s.json", turns);
    // In the REPL, read_file (allowed without asking) is asked about; a no refuses it.
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script_file)], "dumb", &[]);
    p.sees("/help for commands");
    p.types("Read the notes");
    p.sees("Allow? [y]es");
    p.types("n");
    p.sees("Asked.");
    p.leaves();
    // Headless, nobody can be asked: refused.
    let run = env.run(&["--script", path_str(&script_file), "-c", "-p", "Again", "--output-format", "json"]);
    run.expect_code(0);
    let session = run.json()["session_id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &session]).stdout;
    assert_eq!(thread.matches("permission denied read_file").count(), 2, "{thread}");
    assert!(!thread.contains("private notes"), "{thread}");
}

#[test]
fn a_first_message_a_hook_blocks_is_said_whole_and_leaves_no_session() {
    let env = Env::new();
    let runs = env.work().join("runs.log");
    let guard = script(
        &env,
        "guard.sh",
        &format!(
            "input=$(cat)\necho ran >> '{}'\ncase \"$input\" in *secret*) printf 'No secrets here.\\nUse the vault.' >&2; exit 2;; esac\necho 'Checked by the guard.'",
            runs.display()
        ),
    );
    std::fs::write(env.home().join("config.json"), json!({"hooks": {"UserPromptSubmit": hook(&guard)}}).to_string())
        .unwrap();
    let script_file = env.script("s.json", json!([text("Fine.")]));
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script_file)], "dumb", &[]);
    p.sees("/help for commands");
    p.types("the secret is 42");
    p.sees("A UserPromptSubmit hook blocked this message; it was not sent. The hook said:");
    p.sees("No secrets here.");
    p.sees("Use the vault.");
    p.types("hello");
    p.sees("Fine.");
    p.leaves();
    let listed = env.run(&["sessions", "list", "--json"]).json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "only the session of the message that was sent: {listed}");
    assert_eq!(std::fs::read_to_string(&runs).unwrap().lines().count(), 2, "the hook ran once for each message");
    let requests = env.requests();
    assert!(requests[0]["messages"].to_string().contains("Checked by the guard."), "what it added came along");
}
