//! Hooks as Claude Code users write them: real `sh` scripts configured in
//! `config.json`, run by a real session with the scripted provider, reading
//! the event as JSON on stdin and answering by exit code 2 or JSON.

use serde_json::{Value, json};

use crate::support::{Env, path_str, text};

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
    let saved = env.dir.path().join("pre.json");
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
}
