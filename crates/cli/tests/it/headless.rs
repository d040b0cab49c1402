//! `seri -p`: every output format, flag and exit code, through the binary.

use serde_json::json;

use crate::support::{Env, path_str, text};

#[test]
fn usage_the_provider_did_not_report_is_null_never_zero() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("No usage here.")]));
    let run = env.run(&["-p", "Hi", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    assert_eq!(run.json()["usage"], serde_json::Value::Null);
    let list = env.run(&["sessions", "list", "--json"]);
    let id = list.json()[0]["id"].as_str().unwrap().to_owned();
    let show = env.run(&["sessions", "show", &id, "--json"]);
    assert_eq!(show.json()["lastUsage"], serde_json::Value::Null, "no zeros were recorded");
}

#[test]
fn text_output_is_the_answer_and_exit_zero() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("Hello from the script.")]));
    let run = env.run(&["-p", "Hi", "--script", path_str(&script)]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Hello from the script.\n");
}

#[test]
fn json_output_has_exactly_the_contract_fields() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([{ "text": "Done.", "usage": { "input": 10, "cache_read": 2, "cache_write": 0, "output": 3 } }]),
    );
    let run = env.run(&["-p", "Hi", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    let value = run.json();
    let mut keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["continued_to_session_id", "result", "session_id", "status", "turns", "usage"]);
    assert_eq!(value["status"], "succeeded");
    assert_eq!(value["result"], "Done.");
    assert_eq!(value["turns"], 1);
    assert_eq!(value["continued_to_session_id"], serde_json::Value::Null);
    // snake_case like every other key of the document (and the script's own usage).
    assert_eq!(value["usage"], json!({ "input": 10, "cache_read": 2, "cache_write": 0, "output": 3 }));
}

#[test]
fn stream_json_prints_one_event_per_line_then_the_result() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([{ "tool_calls": [{ "id": "c1", "name": "list", "arguments": { "path": "." } }] }, text("Listed.")]),
    );
    let run = env.run(&["-p", "List", "--script", path_str(&script), "--output-format", "stream-json"]);
    run.expect_code(0);
    let events: Vec<serde_json::Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"run_started"));
    assert!(types.contains(&"tool_started") && types.contains(&"tool_finished"), "{types:?}");
    assert!(types.contains(&"text_delta"), "{types:?}");
    assert_eq!(&types[types.len() - 2..], ["run_finished", "result"]);
    assert_eq!(events.last().unwrap()["result"], "Listed.");
    // A tool's start carries what the model asked of it.
    let started = events.iter().find(|e| e["type"] == "tool_started").unwrap();
    assert_eq!((&started["name"], &started["arguments"]), (&json!("list"), &json!({ "path": "." })));
    // The result says how long the task took, and its cost (unknown without a price).
    let result = events.last().unwrap();
    assert!(result["duration_ms"].is_u64(), "{result}");
    assert_eq!(result["total_cost_usd"], serde_json::Value::Null, "no price in config.json: unknown, not zero");
}

#[test]
fn a_priced_model_tells_what_the_task_cost() {
    let env = Env::new();
    std::fs::write(env.home().join("config.json"), r#"{"prices": {"script/scripted": {"input": 3, "output": 15}}}"#)
        .unwrap();
    let answer =
        json!({ "text": "Done.", "usage": { "input": 1000000, "cache_read": 0, "cache_write": 0, "output": 100000 } });
    let script = env.script("s.json", json!([answer]));
    let run = env.run(&["-p", "Go", "--script", path_str(&script), "--output-format", "stream-json"]);
    run.expect_code(0);
    let result: serde_json::Value = serde_json::from_str(run.stdout.lines().last().unwrap()).unwrap();
    // 1M input at 3 and 0.1M output at 15 a million.
    assert_eq!(result["total_cost_usd"], 4.5);
}

#[test]
fn the_prompt_is_read_from_stdin_for_a_dash() {
    use std::io::Write as _;
    let env = Env::new();
    let script = env.script("s.json", json!([text("Got it.")]));
    env.script("unused.json", json!([]));
    let mut child = env
        .seri()
        .args(["-p", "-", "--script", path_str(&script), "--output-format", "json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"the task from stdin").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let session = value["session_id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &session]);
    assert!(thread.stdout.starts_with("[1] user: the task from stdin"), "{}", thread.stdout);
}

#[test]
fn running_out_of_turns_exits_one_with_status_max_turns() {
    let env = Env::new();
    let call = json!({ "tool_calls": [{ "id": "c1", "name": "list", "arguments": { "path": "." } }] });
    let script = env.script("s.json", json!([call.clone(), call, text("never")]));
    let run = env.run(&["-p", "Loop", "--script", path_str(&script), "--max-turns", "2", "--output-format", "json"]);
    run.expect_code(1);
    assert_eq!(run.json()["status"], "max_turns");
    assert_eq!(run.json()["turns"], 2);
    // In text mode too, the person is told why nothing was printed.
    let run = env.run(&["-p", "Loop", "--script", path_str(&script), "--max-turns", "2"]);
    run.expect_code(1);
    assert!(run.stdout.is_empty());
    assert_eq!(run.stderr.trim(), "seri: the model used all 2 turns without finishing (--max-turns N allows more)");
}

#[test]
fn a_failed_run_exits_one_with_status_failed_and_the_reason() {
    let env = Env::new();
    let script = env.script("s.json", json!([{ "error": { "kind": "auth", "message": "bad key" } }]));
    let run = env.run(&["-p", "Hi", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(1);
    assert_eq!(run.json()["status"], "failed");
    assert!(run.json()["error"].as_str().unwrap().contains("bad key"));
}

#[test]
fn a_script_that_runs_out_names_the_file() {
    let env = Env::new();
    let script = env.script("short.json", json!([]));
    let run = env.run(&["-p", "Hi", "--script", path_str(&script)]);
    run.expect_code(1);
    assert!(run.stderr.contains("short.json"), "{}", run.stderr);
}

#[test]
fn usage_errors_exit_two_and_say_what_was_wrong() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("unused")]));
    let s = path_str(&script);
    for (args, needle) in [
        (vec!["--no-such-flag"], "--no-such-flag"),
        (vec!["-p", "Hi", "--script", s, "--max-turns", "0"], "--max-turns"),
        (vec!["-p", "Hi", "--script", s, "--resume", "ffffffff"], "ffffffff"),
        (vec!["-p", "   ", "--script", s], "prompt is empty"),
        (vec!["-p", "Hi", "--script", s, "--continue"], "no session to continue"),
        (vec!["-p", "Hi", "--provider", "nonsense"], "nonsense"),
        (vec!["thread", "not-an-id"], "not-an-id"),
    ] {
        let run = env.run(&args);
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
    }
    std::fs::write(env.home().join("config.json"), r#"{"context": {"stratgy": "compact"}}"#).unwrap();
    let run = env.run(&["-p", "Hi", "--script", s]);
    run.expect_code(2);
    assert!(run.stderr.contains("config.json") && run.stderr.contains("stratgy"), "{}", run.stderr);
}

#[test]
fn continue_and_resume_bring_the_conversation_back_intact() {
    let env = Env::new();
    let log = env.request_log();
    let script = env.script("s.json", json!([text("First answer."), text("Second answer."), text("Third answer.")]));
    let s = path_str(&script);
    let first = env
        .seri()
        .args(["-p", "First question", "--script", s, "--output-format", "json"])
        .env("SERI_REQUEST_LOG", &log)
        .output()
        .unwrap();
    assert!(first.status.success());
    let session =
        serde_json::from_slice::<serde_json::Value>(&first.stdout).unwrap()["session_id"].as_str().unwrap().to_owned();

    // The scripted provider starts its script again in every process.
    let script = env.script("s2.json", json!([text("Second answer.")]));
    let run = env
        .seri()
        .args(["-c", "-p", "Second question", "--script", path_str(&script), "--output-format", "json"])
        .env("SERI_REQUEST_LOG", &log)
        .output()
        .unwrap();
    assert!(run.status.success());
    let second: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(second["session_id"], session.as_str(), "--continue opened the most recent session");

    let script = env.script("s3.json", json!([text("Third answer.")]));
    let prefix = &session[..13];
    let run = env
        .seri()
        .args(["--resume", prefix, "-p", "Third question", "--script", path_str(&script)])
        .env("SERI_REQUEST_LOG", &log)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));

    let requests = env.requests();
    assert_eq!(requests.len(), 3);
    let texts: Vec<&str> =
        requests[2]["messages"].as_array().unwrap().iter().filter_map(|m| m["text"].as_str()).collect();
    assert_eq!(&texts[..5], ["First question", "First answer.", "Second question", "Second answer.", "Third question"]);
    assert_eq!(requests[0]["system"], requests[2]["system"], "the frozen system prompt survives resuming");
}

#[test]
fn the_environment_overrides_config_json_and_says_so() {
    let env = Env::new();
    std::fs::write(
        env.home().join("config.json"),
        r#"{"maxTurns": 7, "context": {"strategy": "compact", "window": 9000}}"#,
    )
    .unwrap();
    let run = env.seri().args(["config"]).env("SERI_MAX_TURNS", "3").output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success());
    assert!(
        stdout.contains("maxTurns") && stdout.contains("3") && stdout.contains("(environment SERI_MAX_TURNS)"),
        "{stdout}"
    );
    assert!(stdout.contains("compact") && stdout.contains("(config.json context.strategy)"), "{stdout}");
    assert!(stdout.contains("SERI_MAX_TURNS=3 overrides config.json maxTurns=7"), "{stdout}");
    let run = env.seri().args(["config", "--max-turns", "5"]).env("SERI_MAX_TURNS", "3").output().unwrap();
    assert!(String::from_utf8_lossy(&run.stdout).contains("(flag --max-turns)"));
}

#[test]
fn legacy_sessions_are_imported_on_first_use_once() {
    let env = Env::new();
    let legacy = env.home().join("sessions");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(
        legacy.join("old.jsonl"),
        "{\"type\":\"session\",\"title\":\"Old talk\",\"cwd\":\"/somewhere\"}\n{\"role\":\"user\",\"content\":\"hello from the past\"}\nnot json\n{\"role\":\"assistant\",\"content\":\"hi\"}\n",
    )
    .unwrap();
    let first = env.run(&["sessions", "list", "--json"]);
    first.expect_code(0);
    assert!(first.stderr.contains("imported sessions/old.jsonl"), "{}", first.stderr);
    assert!(first.stderr.contains("old.jsonl:3: skipped"), "{}", first.stderr);
    let sessions = first.json();
    assert_eq!(sessions[0]["title"], "Old talk");
    let again = env.run(&["sessions", "list"]);
    assert!(!again.stderr.contains("imported"), "the second start is quiet: {}", again.stderr);
    assert!(again.stdout.contains("Old talk"), "read beside the check, and still listed: {}", again.stdout);
    let explicit = env.run(&["import"]);
    explicit.expect_code(0);
    assert!(explicit.stdout.contains("already imported"), "{}", explicit.stdout);
    assert_eq!(std::fs::read_to_string(legacy.join("old.jsonl")).unwrap().lines().count(), 4, "never written");
}

#[test]
fn an_unreadable_legacy_file_is_reported_once_not_at_every_start() {
    let env = Env::new();
    let legacy = env.home().join("sessions");
    std::fs::create_dir_all(legacy.join("broken.jsonl")).unwrap();
    std::fs::write(legacy.join("old.jsonl"), "{\"role\":\"user\",\"content\":\"hello\"}\n").unwrap();
    let first = env.run(&["sessions", "list"]);
    first.expect_code(0);
    assert!(first.stderr.contains("failed sessions/broken.jsonl: cannot read it"), "{}", first.stderr);
    assert!(first.stderr.contains("imported sessions/old.jsonl"), "{}", first.stderr);
    let again = env.run(&["sessions", "list"]);
    again.expect_code(0);
    assert_eq!(again.stderr, "", "the second start is quiet");
    // `seri import` still shows everything, saying the failure is old.
    let explicit = env.run(&["import"]);
    assert!(explicit.stdout.contains("cannot read it, as before"), "{}", explicit.stdout);
}

#[test]
fn other_agents_sessions_import_from_a_folder_searched_recursively_once() {
    let env = Env::new();
    let recorded = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../import/tests/fixtures/peers");
    // A copy: reading opencode's database (WAL mode) makes its `-shm` beside it.
    let copy = env.home().join("recorded");
    copy_dir(&recorded, &copy);
    let fixtures = copy.to_str().unwrap();
    let first = env.run(&["import", fixtures]);
    first.expect_code(0);
    // opencode: its database's two sessions, and its export of each.
    for format in ["claude-code: 2 files: 2 sessions imported", "codex: 2 files", "pi: 2 files", "opencode: 4 files"] {
        assert!(first.stdout.contains(format), "{format}: {}", first.stdout);
    }
    assert!(first.stdout.contains("skipped 12 × `queue-operation` (bookkeeping)"), "{}", first.stdout);
    let again = env.run(&["import", fixtures]);
    again.expect_code(0);
    assert!(
        again.stdout.contains("claude-code: 2 files: 0 sessions imported, 0 grown (0 events), 2 already imported"),
        "{}",
        again.stdout
    );

    // A named file with nothing importable fails, and says why once.
    let junk = env.home().join("notes.jsonl");
    std::fs::write(&junk, "not json\n").unwrap();
    let named = env.run(&["import", junk.to_str().unwrap()]);
    named.expect_code(1);
    assert!(named.stdout.contains("no importable line"), "{}", named.stdout);
    assert_eq!(named.stderr.matches("nothing importable").count(), 1, "{}", named.stderr);
    env.run(&["import", "--from", "opencode"]).expect_code(2);
}

/// `seri import --from opencode` reads opencode's database where XDG puts
/// data, each session once.
#[test]
fn opencode_sessions_import_from_its_database() {
    let env = Env::new();
    let recorded = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../import/tests/fixtures/peers");
    let copy = env.home().join("recorded");
    copy_dir(&recorded, &copy);
    let database = std::fs::read_dir(&copy)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.file_name().unwrap().to_string_lossy().starts_with("opencode-"))
        .unwrap()
        .join(".local/share/opencode/opencode.db");
    // HOME is the folder above SERI_HOME; XDG_DATA_HOME is unset.
    let data = env.home().parent().unwrap().join(".local/share/opencode");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(&database, data.join("opencode.db")).unwrap();
    let first = env.run(&["import", "--from", "opencode"]);
    first.expect_code(0);
    assert!(first.stdout.contains("opencode: 2 files: 2 sessions imported"), "{}", first.stdout);
    let again = env.run(&["import", "--from", "opencode"]);
    again.expect_code(0);
    assert!(again.stdout.contains("0 sessions imported, 0 grown (0 events), 2 already imported"), "{}", again.stdout);
    // Named, or found in its folder, it is the same database.
    let named = env.run(&["import", data.to_str().unwrap()]);
    named.expect_code(0);
    assert!(named.stdout.contains("2 already imported"), "{}", named.stdout);
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// A 200-character message: 50 tokens by the local estimate.
fn long(tag: &str) -> String {
    let mut text = format!("{tag}: ");
    while text.len() < 200 {
        text.push_str("lorem ipsum ");
    }
    text.truncate(200);
    text
}

#[test]
fn the_first_model_call_after_resume_compacts_when_the_context_is_over_half() {
    let env = Env::new();
    let log = env.request_log();
    let reply = |tag: &str, input: u64| json!({ "text": long(tag), "usage": { "input": input, "cache_read": 0, "cache_write": 0, "output": 50 } });
    let flags = ["--context-strategy", "compact", "--context-window", "2000", "--output-format", "json"];
    let script = env.script("first.json", json!([reply("a1", 300)]));
    let run = env
        .seri()
        .args(["-p", &long("q1"), "--script", path_str(&script)])
        .args(flags)
        .env("SERI_KEEP_TOKENS", "150")
        .env("SERI_REQUEST_LOG", &log)
        .output()
        .unwrap();
    assert!(run.status.success());
    let session =
        serde_json::from_slice::<serde_json::Value>(&run.stdout).unwrap()["session_id"].as_str().unwrap().to_owned();
    for (i, input) in [(2, 400), (3, 500), (4, 1200)] {
        let script = env.script(&format!("s{i}.json"), json!([reply(&format!("a{i}"), input)]));
        let run = env
            .seri()
            .args(["--resume", &session, "-p", &long(&format!("q{i}")), "--script", path_str(&script)])
            .args(flags)
            .env("SERI_KEEP_TOKENS", "150")
            .env("SERI_REQUEST_LOG", &log)
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    }
    let before = env.requests().len();
    // A new process: the last billed figure (1,200 of 2,000) is over half, so
    // its first request is the summarizer's.
    let recap =
        "## Goal\nAnswer.\n\n## Progress\n- Four answers.\n\n## Blockers\n(none)\n\n## Next steps\n- Answer q5.";
    let script = env.script("s5.json", json!([{ "text": recap }, reply("a5", 300)]));
    let run = env
        .seri()
        .args(["--resume", &session, "-p", &long("q5"), "--script", path_str(&script)])
        .args(flags)
        .env("SERI_KEEP_TOKENS", "150")
        .env("SERI_REQUEST_LOG", &log)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let requests = env.requests();
    assert_eq!(requests.len(), before + 2);
    assert!(
        requests[before]["messages"][0]["text"].as_str().unwrap().contains("evicted_transcript"),
        "the summarizer ran first: {}",
        requests[before]
    );
    assert!(requests[before + 1]["messages"][0]["text"].as_str().unwrap().starts_with("<compaction_recap"));
    let thread = env.run(&["thread", &session]);
    assert!(thread.stdout.contains("compaction: recap of seq 1 to"), "{}", thread.stdout);
}

#[test]
fn subagent_settings_in_config_json_bound_each_child() {
    let env = Env::new();
    std::fs::write(env.home().join("config.json"), r#"{"subagents": {"maxTurns": 2}}"#).unwrap();
    let list = json!({ "tool_calls": [{ "id": "l", "name": "list", "arguments": { "path": "." } }] });
    let script = env.dir.path().join("s.json");
    std::fs::write(
        &script,
        json!({
            "turns": [
                { "tool_calls": [{ "id": "d1", "name": "delegate", "arguments": { "task": "List forever" } }] },
                text("The child gave up."),
            ],
            "children": [{ "turns": [list.clone(), list.clone(), list] }],
        })
        .to_string(),
    )
    .unwrap();
    let run = env.run(&["-p", "Delegate it", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    let session = run.json()["session_id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &session]);
    assert!(thread.stdout.contains("ran out of turns after 2 turns"), "{}", thread.stdout);
}

#[test]
fn an_approved_memory_write_enters_the_next_sessions_prompt_not_this_one() {
    let env = Env::new();
    let note = "The person deploys on Fridays only.";
    let remember = json!({ "tool_calls": [{ "id": "m1", "name": "remember",
        "arguments": { "name": "deploys", "content": note } }] });
    let log = env.request_log();
    let vars = [("SERI_REQUEST_LOG", path_str(&log))];

    // Headless and not allowed: refused, recorded, nothing written.
    let script = env.script("refused.json", json!([remember, text("Not saved.")]));
    env.run_with(&["-p", "Remember my deploy day", "--script", path_str(&script)], &vars).expect_code(0);
    let memory = env.home().join("memory").join("deploys.md");
    assert!(!memory.exists());
    let refusal = &env.requests()[1]["messages"];
    assert!(refusal.to_string().contains("permission denied: remember"), "{refusal}");

    // Allowed: written atomically, and this session's prompt stays frozen.
    let script = env.script("allowed.json", json!([remember, text("Saved.")]));
    let run =
        env.run_with(&["-p", "Remember my deploy day", "--script", path_str(&script), "--allow", "remember"], &vars);
    run.expect_code(0);
    assert_eq!(std::fs::read_to_string(&memory).unwrap(), note);
    let requests = env.requests();
    assert!(!requests[3]["system"].as_str().unwrap().contains(note), "not in the current session");
    let result = requests[3]["messages"].to_string();
    assert!(result.contains("Saved ~/memory/deploys.md") && result.contains("next session"), "{result}");

    let script = env.script("next.json", json!([text("Fridays.")]));
    env.run_with(&["-p", "When do I deploy?", "--script", path_str(&script)], &vars).expect_code(0);
    assert!(env.requests()[4]["system"].as_str().unwrap().contains(note), "the next session's prompt has it");
}

#[test]
fn a_memory_folder_linked_elsewhere_receives_the_note() {
    let env = Env::new();
    let elsewhere = env.work().join("dotfiles-memory");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, env.home().join("memory")).unwrap();
    let remember = json!({ "tool_calls": [{ "id": "m1", "name": "remember",
        "arguments": { "name": "editor", "content": "Uses helix." } }] });
    let script = env.script("s.json", json!([remember, text("Saved.")]));
    env.run(&["-p", "Remember my editor", "--script", path_str(&script), "--allow", "remember"]).expect_code(0);
    assert_eq!(std::fs::read_to_string(elsewhere.join("editor.md")).unwrap(), "Uses helix.");
}

#[test]
fn a_glob_rule_arrives_as_a_message_the_first_time_a_call_touches_its_files() {
    let env = Env::new();
    let rules = env.work().join(".seri").join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::create_dir_all(env.work().join("src")).unwrap();
    std::fs::write(env.work().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
    std::fs::write(env.work().join("notes.md"), "notes\n").unwrap();
    let glob_rule = "Rust files use `thiserror` for library errors.";
    std::fs::write(rules.join("rust.md"), format!("---\nglobs: [\"src/**/*.rs\"]\n---\n{glob_rule}\n")).unwrap();
    std::fs::write(rules.join("style.md"), "---\ndescription: always\n---\nBe terse.\n").unwrap();
    let read = |id: &str, path: &str| json!({ "tool_calls": [{ "id": id, "name": "read_file", "arguments": { "path": path } }] });
    let log = env.request_log();
    let vars = [("SERI_REQUEST_LOG", path_str(&log))];

    // A file no rule covers, then a covered one twice: the rule fires once,
    // after the first covered read's result.
    let script = env.script(
        "first.json",
        json!([read("r1", "notes.md"), read("r2", "src/lib.rs"), read("r3", "./src/lib.rs"), text("Done.")]),
    );
    let run = env.run_with(&["-p", "Look around", "--script", path_str(&script), "--output-format", "json"], &vars);
    let session = run.expect_code(0).json()["session_id"].as_str().unwrap().to_owned();
    let requests = env.requests();
    let system = requests[0]["system"].as_str().unwrap();
    assert!(system.contains("Be terse.") && !system.contains("description: always"), "always-on, front matter gone");
    assert!(!system.contains(glob_rule), "a glob rule is not frozen into the prompt");
    let fired = |request: &serde_json::Value| request["messages"].to_string().matches(glob_rule).count();
    assert_eq!(requests.iter().map(fired).collect::<Vec<_>>(), [0, 0, 1, 1]);
    let messages = requests[2]["messages"].as_array().unwrap();
    let rule_message = messages.iter().position(|m| m.to_string().contains(glob_rule)).unwrap();
    assert!(messages[rule_message - 1].to_string().contains("r2"), "right after the call that touched the file");
    let shown = messages[rule_message].to_string();
    assert!(shown.contains("touched=\\\"src/lib.rs\\\""), "{shown}");

    // Recorded: `seri thread` shows it, and a later run of the same session
    // does not fire it again.
    let thread = env.run(&["thread", &session]).expect_code(0).stdout.clone();
    assert!(thread.contains(glob_rule) && thread.contains(".seri/rules/rust.md"), "{thread}");
    let again = env.script("again.json", json!([read("r4", "src/lib.rs"), text("Still done.")]));
    env.run_with(&["-p", "Once more", "--resume", &session, "--script", path_str(&again)], &vars).expect_code(0);
    let thread = env.run(&["thread", &session]).expect_code(0).stdout.clone();
    assert_eq!(thread.matches(glob_rule).count(), 1, "{thread}");

    // A new session is a new session: the rule fires in it too.
    env.run_with(&["-p", "Fresh", "--script", path_str(&again)], &vars).expect_code(0);
    assert_eq!(fired(env.requests().last().unwrap()), 1);
}

#[test]
fn a_rule_file_with_broken_front_matter_is_named_and_no_session_starts() {
    let env = Env::new();
    let rules = env.work().join(".seri").join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(rules.join("broken.md"), "---\nglobs: [\"src/**\"\nBody\n").unwrap();
    let script = env.script("s.json", json!([text("hi")]));
    let run = env.run(&["-p", "hello", "--script", path_str(&script)]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("broken.md") && run.stderr.contains("never closed"), "{}", run.stderr);
    assert!(env.run(&["sessions", "list", "--json"]).json().as_array().unwrap().is_empty());
}

#[test]
fn at_mentions_bring_text_files_inline_and_attach_pictures_and_binaries() {
    let env = Env::new();
    let png = b"\x89PNG\r\n\x1a\n-pixels-";
    std::fs::write(env.work().join("shot.png"), png).unwrap();
    std::fs::write(env.work().join("notes.txt"), "the build broke at step 3\n").unwrap();
    std::fs::write(env.work().join("core.bin"), b"\x7fELF\0\0").unwrap();
    let log = env.request_log();
    let vars = [("SERI_REQUEST_LOG", path_str(&log))];
    let script = env.script("s.json", json!([text("Seen.")]));
    let prompt = "Why? See @shot.png, @notes.txt and @core.bin; ask @someone.";
    let run = env.run_with(&["-p", prompt, "--script", path_str(&script), "--output-format", "json"], &vars);
    let session = run.expect_code(0).json()["session_id"].as_str().unwrap().to_owned();

    let sent = &env.requests()[0]["messages"][0];
    let images = sent["images"].as_array().unwrap();
    assert_eq!(images.len(), 1, "{sent}");
    assert_eq!((&images[0]["mediaType"], &images[0]["bytes"]), (&json!("image/png"), &json!(png.len())));
    let id = images[0]["attachmentId"].as_str().unwrap();
    let text = sent["text"].as_str().unwrap();
    assert!(text.starts_with(prompt), "the words as typed come first: {text}");
    assert!(
        text.contains("<mentioned_file path=\"notes.txt\">\nthe build broke at step 3\n</mentioned_file>"),
        "{text}"
    );
    assert!(text.contains(&format!("[attachment:{id} \"shot.png\"]")), "{text}");
    assert!(text.contains("\"core.bin\"]") && !text.contains("someone\""), "{text}");

    // Stored in the profile, byte for byte, under the session.
    let stored = env.home().join("attachments").join(&session).join(id);
    assert_eq!(std::fs::read(stored).unwrap(), png);
    let thread = env.run(&["thread", &session]).expect_code(0).stdout.clone();
    assert!(thread.contains(&format!("[attachment:{id} \"shot.png\"]")), "{thread}");

    // A mention too large to attach is refused before anything is sent.
    let big = std::fs::File::create(env.work().join("huge.iso")).unwrap();
    big.set_len(seri_core::MAX_ATTACHMENT_BYTES + 1).unwrap();
    let run = env.run_with(&["-p", "Look at @huge.iso", "--script", path_str(&script)], &vars);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("@huge.iso is") && run.stderr.contains("at most"), "{}", run.stderr);
    assert_eq!(env.run(&["sessions", "list", "--json"]).json().as_array().unwrap().len(), 1, "no new session");
}

/// Runs `seri ARGS`, reads one line of its output and closes the pipe, as
/// `| head -1` does; returns how seri ended and what it said on stderr.
fn first_line_then_close(env: &Env, args: &[&str]) -> (Option<i32>, String, String) {
    use std::io::{BufRead as _, Read as _};
    let mut child = env
        .seri()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    // The reader is dropped here: the pipe is closed with output still to come.
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    (status.code(), first, stderr)
}

#[test]
fn output_cut_short_by_a_closed_pipe_ends_seri_quietly_with_status_0() {
    let env = Env::new();
    let long = "word ".repeat(60_000);
    let script = env.script("s.json", json!([text(&long), text(&long)]));
    let run = env.run(&["-p", "Say a lot", "--script", path_str(&script), "--output-format", "json"]);
    let session = run.expect_code(0).json()["session_id"].as_str().unwrap().to_owned();
    for args in [
        vec!["thread", session.as_str()],
        vec!["sessions", "list"],
        vec!["sessions", "list", "--json"],
        vec!["trajectory", "show", session.as_str()],
    ] {
        let (code, first, stderr) = first_line_then_close(&env, &args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(!first.is_empty() && !stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // A run in flight: its stream is cut, the run is cancelled and settled.
    let args = ["-p", "Again", "--resume", &session, "--script", path_str(&script), "--output-format", "stream-json"];
    let (code, first, stderr) = first_line_then_close(&env, &args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(first.contains("run_started") && stderr.is_empty(), "{first} / {stderr}");
}

#[test]
fn warnings_go_to_the_profiles_log_not_the_screen_unless_seri_log_asks() {
    let env = Env::new();
    std::fs::write(env.work().join("shot.png"), b"\x89PNG\r\n\x1a\n-pixels-").unwrap();
    let script = env.script("s.json", json!([text("Seen.")]));
    let run = env.run(&["-p", "See @shot.png", "--script", path_str(&script), "--output-format", "json"]);
    let session = run.expect_code(0).json()["session_id"].as_str().unwrap().to_owned();
    // The picture's cached file cannot be read (a folder stands where it
    // was; a missing file is written again from the database): the next
    // request leaves it out, with a warning.
    let attachments = env.home().join("attachments").join(&session);
    for entry in std::fs::read_dir(&attachments).unwrap() {
        let path = entry.unwrap().path();
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
    }
    let run = env.run(&["-p", "Again", "--resume", &session, "--script", path_str(&script)]);
    run.expect_code(0);
    assert!(run.stderr.is_empty(), "nothing on screen: {}", run.stderr);
    let log = std::fs::read_to_string(env.home().join("logs").join("seri.log")).unwrap();
    assert!(log.contains("image attachment unreadable") && !log.contains('\u{1b}'), "{log}");
    // Asked for: on stderr, and without colour codes when stderr is not a terminal.
    let run = env
        .run_with(&["-p", "Once more", "--resume", &session, "--script", path_str(&script)], &[("SERI_LOG", "warn")]);
    assert!(run.stderr.contains("image attachment unreadable") && !run.stderr.contains('\u{1b}'), "{}", run.stderr);
}

#[test]
fn piped_input_follows_the_prompt_in_a_fenced_block() {
    use std::io::Write as _;
    let env = Env::new();
    let log = env.request_log();
    let script = env.script("s.json", json!([text("It is a build log.")]));
    let mut child = env
        .seri()
        .args(["-p", "Explain this", "--script", path_str(&script)])
        .env("SERI_REQUEST_LOG", path_str(&log))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"error[E0425]: cannot find value `x`\n```\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let sent = env.requests()[0]["messages"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(sent, "Explain this\n\n````\nerror[E0425]: cannot find value `x`\n```\n````");
}

#[test]
fn help_ends_with_examples_and_the_environment() {
    let env = Env::new();
    let help = env.run(&["--help"]);
    let out = &help.expect_code(0).stdout;
    for needle in
        ["Examples:", "seri \"fix the failing test\"", "Environment:", "SERI_HOME", "SERI_LOG=debug", "NO_COLOR"]
    {
        assert!(out.contains(needle), "{needle} missing from:\n{out}");
    }
}

#[test]
fn a_subcommands_help_lists_its_own_flags_and_the_run_flags_still_parse_there() {
    let env = Env::new();
    let top = env.run(&["--help"]);
    assert!(top.expect_code(0).stdout.contains("--provider <PROVIDER>"));
    let list = env.run(&["sessions", "list", "--help"]);
    let out = &list.expect_code(0).stdout;
    assert!(out.contains("--json") && !out.contains("--provider") && !out.contains("--max-turns"), "{out}");
    let show = env.run(&["sessions", "show", "-h"]);
    let out = &show.expect_code(0).stdout;
    assert!(out.contains("--context-window") && !out.contains("--temperature"), "{out}");
    let serve = env.run(&["serve", "--help"]);
    let out = &serve.expect_code(0).stdout;
    assert!(out.contains("--port") && out.contains("--provider") && out.contains("--yes"), "{out}");
    // Hidden from help, still accepted where a run needs them.
    env.run(&["sessions", "list", "--json", "--provider", "script"]).expect_code(0);
    let wrong = env.run(&["sessions", "list", "--nope"]);
    wrong.expect_code(2);
}

#[test]
fn the_system_prompt_says_where_the_session_started() {
    let env = Env::new();
    std::fs::create_dir_all(env.work().join(".git")).unwrap();
    std::fs::write(env.work().join(".git/HEAD"), "ref: refs/heads/fix/empty-input\n").unwrap();
    let log = env.request_log();
    let script = env.script("s.json", json!([text("Hi.")]));
    env.run_with(&["-p", "Hello", "--script", path_str(&script)], &[("SERI_REQUEST_LOG", path_str(&log))])
        .expect_code(0);
    let system = env.requests()[0]["system"].as_str().unwrap().to_owned();
    let block = &system[system.find("<environment>").expect("an environment block")..];
    assert!(block.contains(&format!("Working directory: {}", path_str(&env.work()))), "{block}");
    assert!(block.contains(&format!("Operating system: {}", std::env::consts::OS)), "{block}");
    assert!(block.contains("Git: on branch fix/empty-input"), "{block}");
    assert!(block.contains("Session started: 20"), "{block}");
}

#[test]
fn a_glob_rule_whose_message_a_compaction_evicted_fires_again_when_it_applies() {
    let env = Env::new();
    let rules = env.work().join(".seri").join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::create_dir_all(env.work().join("src")).unwrap();
    std::fs::write(env.work().join("src/a.rs"), "pub fn a() {}\n").unwrap();
    std::fs::write(env.work().join("src/b.rs"), "pub fn b() {}\n").unwrap();
    let glob_rule = "Rust files use `thiserror` for library errors.";
    std::fs::write(rules.join("rust.md"), format!("---\nglobs: [\"src/**/*.rs\"]\n---\n{glob_rule}\n")).unwrap();
    let log = env.request_log();
    let usage = |input: u64| json!({ "input": input, "cache_read": 0, "cache_write": 0, "output": 50 });
    let read = |id: &str, path: &str| json!({ "tool_calls": [{ "id": id, "name": "read_file", "arguments": { "path": path } }], "usage": usage(300) });
    let reply = |tag: &str, input: u64| json!({ "text": long(tag), "usage": usage(input) });
    let flags = ["--context-strategy", "compact", "--context-window", "2000", "--output-format", "json"];
    let run = |args: &[&str], turns: serde_json::Value, name: &str| {
        let script = env.script(name, turns);
        let out = env
            .seri()
            .args(args)
            .args(["--script", path_str(&script)])
            .args(flags)
            .env("SERI_KEEP_TOKENS", "150")
            .env("SERI_REQUEST_LOG", &log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let session =
        run(&["-p", &long("q1")], json!([read("r1", "src/a.rs"), reply("a1", 300)]), "one.json")["session_id"]
            .as_str()
            .unwrap()
            .to_owned();
    run(&["--resume", &session, "-p", &long("q2")], json!([reply("a2", 1200)]), "two.json");
    // Over half the window: the next run compacts first, and its recap
    // replaces the rule's message; then a read of another covered file.
    let recap = "## Goal\nAnswer.\n\n## Progress\n- Two answers.\n\n## Blockers\n(none)\n\n## Next steps\n- Read b.";
    run(
        &["--resume", &session, "-p", &long("q3")],
        json!([{ "text": recap }, read("r2", "src/b.rs"), reply("a3", 300)]),
        "three.json",
    );
    let thread = env.run(&["thread", &session]).expect_code(0).stdout.clone();
    assert!(thread.contains("compaction: recap of seq 1 to"), "{thread}");
    assert_eq!(thread.matches(glob_rule).count(), 2, "it fired again after the compaction: {thread}");
    let last = env.requests().last().unwrap()["messages"].to_string();
    assert_eq!(last.matches(glob_rule).count(), 1, "the rule is in the context once: {last}");
}

#[test]
fn without_a_key_the_error_names_every_providers_variable_and_the_ways_to_try_seri_without_one() {
    let env = Env::new();
    let run = env.run(&["-p", "Hello"]);
    run.expect_code(2);
    for said in [
        "set ANTHROPIC_API_KEY",
        "OPENAI_API_KEY with --provider openai",
        "OPENROUTER_API_KEY with --provider openrouter",
        "--provider ollama",
        "`seri demo`",
        "--script FILE",
    ] {
        assert!(run.stderr.contains(said), "{said:?} in: {}", run.stderr);
    }
}
