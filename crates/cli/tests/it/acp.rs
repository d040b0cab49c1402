//! `seri acp` driven by clients nobody here wrote: a client on the official
//! TypeScript SDK (`crates/cli/tests/acp/client.mjs`, running scenarios)
//! and the `acpx` command line, both installed by `cargo xtask ci` from
//! `xtask/acp-clients`. The model is the scripted provider; the sessions
//! are ordinary sessions that `seri` itself reads afterwards.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{Env, path_str, text};

/// The installed clients' `node_modules`, or `None` (with a note) when
/// they are not installed and `SERI_REQUIRE_ACP` is unset.
fn modules() -> Option<PathBuf> {
    let path = std::env::var_os("SERI_ACP_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/acp-clients/node_modules"));
    if path.join("@agentclientprotocol/sdk").is_dir() && path.join("acpx/dist/cli.js").is_file() {
        return Some(path);
    }
    let note = format!("the ACP clients are not in {} (cargo xtask ci installs them)", path.display());
    assert!(std::env::var_os("SERI_REQUIRE_ACP").is_none(), "{note}");
    #[allow(clippy::print_stderr, reason = "the note says why the test did nothing")]
    {
        eprintln!("skipped: {note}");
    }
    None
}

/// What a scenario printed: one JSON value per line.
struct Lines(Vec<Value>);

impl Lines {
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.0.iter().filter(|line| line["kind"] == kind).collect()
    }

    /// The `session/update`s, as `update` objects.
    fn updates(&self) -> Vec<&Value> {
        self.of_kind("update").into_iter().map(|line| &line["update"]["update"]).collect()
    }

    fn updates_of(&self, tag: &str) -> Vec<&Value> {
        self.updates().into_iter().filter(|u| u["sessionUpdate"] == tag).collect()
    }

    /// The result of the `n`th response to `op`.
    fn response(&self, op: &str, n: usize) -> &Value {
        let responses: Vec<&Value> = self.0.iter().filter(|l| l["kind"] == "response" && l["op"] == op).collect();
        match responses.get(n) {
            Some(line) => &line["result"],
            None => panic!("no response {n} to {op}: {:#?}", self.0),
        }
    }

    fn error(&self, op: &str) -> &Value {
        match self.0.iter().find(|l| l["kind"] == "error" && l["op"] == op) {
            Some(line) => &line["error"],
            None => panic!("no error for {op}: {:#?}", self.0),
        }
    }

    /// The agent's streamed answer text, in order.
    fn agent_text(&self) -> String {
        self.updates_of("agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect()
    }
}

/// Runs `scenario` with the TypeScript client against `seri --script S acp`.
fn scenario(env: &Env, modules: &Path, script: &Path, scenario: Value) -> Lines {
    client(env, modules, &["--script", path_str(script), "acp"], scenario)
}

/// Runs `scenario` with the TypeScript client against `seri ARGS`.
fn client(env: &Env, modules: &Path, args: &[&str], scenario: Value) -> Lines {
    let file = env.dir.path().join("scenario.json");
    std::fs::write(&file, scenario.to_string()).unwrap();
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs");
    let output = Command::new("node")
        .arg(client)
        .arg(&file)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_seri"))
        .args(args)
        .current_dir(env.work())
        .env_clear()
        .env("SERI_HOME", env.home())
        .env("HOME", env.dir.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("SERI_ACP_MODULES", modules)
        .env("SERI_REQUEST_LOG", env.request_log())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}\n{stderr}")))
        .collect();
    let lines = Lines(lines);
    assert!(output.status.success(), "the client failed:\n{stdout}\n{stderr}");
    assert!(lines.of_kind("sdk_error").is_empty(), "the SDK refused what seri sent:\n{stdout}");
    assert!(lines.of_kind("crash").is_empty(), "{stdout}\n{stderr}");
    assert_eq!(lines.of_kind("exit")[0]["code"], 0, "seri acp exits 0 when the editor leaves:\n{stderr}");
    lines
}

fn calls(calls: &[(&str, &str, Value)]) -> Value {
    let calls: Vec<Value> =
        calls.iter().map(|(id, name, arguments)| json!({ "id": id, "name": name, "arguments": arguments })).collect();
    json!({ "tool_calls": calls })
}

fn work(env: &Env) -> String {
    path_str(&std::fs::canonicalize(env.work()).unwrap()).to_owned()
}

#[test]
fn a_prompt_streams_its_calls_asks_permission_and_shows_edits_as_diffs() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    std::fs::write(env.work().join("notes.txt"), "old line\n").unwrap();
    let script = env.script(
        "s.json",
        json!([
            calls(&[("w1", "write_file", json!({"path": "new.txt", "content": "fresh\n"}))]),
            calls(&[("b1", "bash", json!({"command": "echo from-bash"}))]),
            calls(&[("e1", "edit", json!({"path": "notes.txt", "old": "old line", "new": "new line"}))]),
            calls(&[("e2", "edit", json!({"path": "notes.txt", "old": "old line", "new": "other"}))]),
            text("All done."),
        ]),
    );
    let cwd = work(&env);
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({
            "permissions": ["allow_once", "allow_once", "reject_always"],
            "steps": [
                {"op": "initialize"},
                {"op": "new", "cwd": cwd},
                {"op": "prompt", "text": "make the files"},
            ]
        }),
    );
    let init = lines.response("initialize", 0);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(init["agentInfo"]["name"], "seri");
    let session = lines.response("new", 0)["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(lines.response("new", 0)["modes"]["currentModeId"], "default");
    assert_eq!(lines.response("prompt", 0)["stopReason"], "end_turn");
    assert_eq!(lines.agent_text(), "All done.");

    // Each call: its kind, where it works, and an edit as a diff.
    let started = lines.updates_of("tool_call");
    let by_id = |id: &str| *started.iter().find(|u| u["toolCallId"] == id).unwrap_or_else(|| panic!("{started:#?}"));
    assert_eq!(by_id("w1")["kind"], "edit");
    assert_eq!(by_id("w1")["locations"][0]["path"], format!("{cwd}/new.txt"));
    // A new file: no old text.
    assert_eq!(
        by_id("w1")["content"][0],
        json!({"type": "diff", "path": format!("{cwd}/new.txt"), "newText": "fresh\n"})
    );
    assert_eq!(by_id("b1")["kind"], "execute");
    assert_eq!(by_id("b1")["title"], "$ echo from-bash");
    assert_eq!(
        by_id("e1")["content"][0],
        json!({"type": "diff", "path": format!("{cwd}/notes.txt"), "oldText": "old line", "newText": "new line"})
    );

    // Three questions, each with the call's diff or command; the third
    // rejected for the session, so the fourth call is refused unasked.
    let asked = lines.of_kind("permission");
    assert_eq!(asked.len(), 3, "{asked:#?}");
    assert_eq!(asked[0]["request"]["toolCall"]["content"][0]["type"], "diff");
    assert!(
        asked[1]["request"]["toolCall"]["content"][0]["content"]["text"].as_str().unwrap().contains("echo from-bash")
    );
    let kinds: Vec<&str> =
        asked[2]["request"]["options"].as_array().unwrap().iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once", "reject_always"]);
    let ended = lines.updates_of("tool_call_update");
    let status = |id: &str| ended.iter().find(|u| u["toolCallId"] == id).map(|u| u["status"].clone());
    assert_eq!(status("w1"), Some(json!("completed")));
    assert_eq!(status("b1"), Some(json!("completed")));
    let bash_output = ended.iter().find(|u| u["toolCallId"] == "b1").unwrap()["content"][0]["content"]["text"].clone();
    assert!(bash_output.as_str().unwrap().contains("from-bash") && bash_output.as_str().unwrap().contains("exit 0"));
    assert_eq!(status("e1"), Some(json!("failed")));
    assert_eq!(status("e2"), Some(json!("failed")));
    assert_eq!(std::fs::read_to_string(env.work().join("new.txt")).unwrap(), "fresh\n");
    assert_eq!(std::fs::read_to_string(env.work().join("notes.txt")).unwrap(), "old line\n");

    // An ordinary session: the command line lists it and reads its thread.
    let listed = env.run(&["sessions", "list", "--json"]).json();
    assert!(listed.as_array().unwrap().iter().any(|s| s["id"] == session.as_str()), "{listed}");
    let thread = env.run(&["thread", &session]).expect_code(0).stdout.clone();
    assert!(thread.contains("make the files") && thread.contains("All done."), "{thread}");
}

#[test]
fn a_cancel_keeps_the_partial_answer_and_answers_cancelled() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let chunks: Vec<String> = (0..40).map(|i| format!("part{i} ")).collect();
    let script = env.script("s.json", json!([{ "chunks": chunks, "delay_ms": 100 }, text("Second answer.")]));
    let cwd = work(&env);
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": cwd},
            {"op": "prompt", "text": "write a lot", "cancelAfterChunks": 3},
            {"op": "prompt", "text": "again"},
        ]}),
    );
    assert_eq!(lines.response("prompt", 0)["stopReason"], "cancelled");
    assert_eq!(lines.response("prompt", 1)["stopReason"], "end_turn");
    let session = lines.response("new", 0)["sessionId"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &session]).expect_code(0).stdout.clone();
    assert!(thread.contains("part0 part1 part2"), "the partial answer is kept: {thread}");
    assert!(!thread.contains("part39"), "{thread}");
    assert!(thread.contains("Second answer."), "{thread}");
}

#[test]
fn a_session_made_on_the_command_line_loads_with_its_whole_history() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let first = env.script(
        "first.json",
        json!([calls(&[("r1", "read_file", json!({"path": "a.txt"}))]), {"text": "It says hello.", "thinking": "Let me look."}]),
    );
    std::fs::write(env.work().join("a.txt"), "hello\n").unwrap();
    env.run(&["-p", "what is in a.txt?", "--script", path_str(&first)]).expect_code(0);
    let id = env.run(&["sessions", "list", "--json"]).json()[0]["id"].as_str().unwrap().to_owned();
    let script = env.script("s.json", json!([text("Loaded and answered.")]));
    let cwd = work(&env);
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({"steps": [
            {"op": "initialize"},
            {"op": "load", "sessionId": id, "cwd": cwd},
            {"op": "prompt", "text": "and now?"},
            {"op": "load", "sessionId": "0000000000000000000000000000", "cwd": cwd},
        ]}),
    );
    let updates = lines.updates();
    let user = lines.updates_of("user_message_chunk");
    assert_eq!(user[0]["content"]["text"], "what is in a.txt?");
    let thought = lines.updates_of("agent_thought_chunk");
    assert_eq!(thought[0]["content"]["text"], "Let me look.");
    let read = lines.updates_of("tool_call");
    assert_eq!((&read[0]["kind"], &read[0]["status"]), (&json!("read"), &json!("completed")));
    let order: Vec<&str> = updates.iter().map(|u| u["sessionUpdate"].as_str().unwrap()).collect();
    let position = |tag: &str| order.iter().position(|t| *t == tag).unwrap();
    assert!(position("user_message_chunk") < position("tool_call"), "{order:?}");
    assert!(lines.agent_text().starts_with("It says hello."), "{}", lines.agent_text());
    assert_eq!(lines.response("prompt", 0)["stopReason"], "end_turn");
    assert!(lines.agent_text().ends_with("Loaded and answered."));
    assert_eq!(lines.error("load")["code"], -32002);
    // The prompt went on in the same session.
    let thread = env.run(&["thread", &id]).expect_code(0).stdout.clone();
    assert!(thread.contains("Loaded and answered."), "{thread}");
}

#[test]
fn the_editors_session_follows_a_continuation_into_the_successor() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let cont = json!({ "tool_calls": [{
        "id": "cont_1",
        "name": "continue_session",
        "arguments": {
            "reason": "topic_change",
            "title": "Lisbon hotel",
            "description": "Finding a hotel near the river",
            "handoff": { "purpose": "Find a hotel in Lisbon.", "currentRequest": "A hotel near the river." }
        }
    }] });
    let script = env.script("s.json", json!([cont, text("Hotel Tejo."), text("Still here.")]));
    let cwd = work(&env);
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": cwd},
            {"op": "prompt", "text": "now a hotel"},
            {"op": "prompt", "text": "and breakfast?"},
        ]}),
    );
    let editor_id = lines.response("new", 0)["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(lines.response("prompt", 0)["stopReason"], "end_turn");
    assert_eq!(lines.response("prompt", 1)["stopReason"], "end_turn");
    let titles: Vec<&Value> = lines.updates_of("session_info_update").into_iter().map(|u| &u["title"]).collect();
    assert!(titles.contains(&&json!("Lisbon hotel")), "{titles:?}");
    assert!(lines.agent_text().contains("Continued in session"), "{}", lines.agent_text());
    // Every update kept the id the editor knows.
    assert!(lines.of_kind("update").iter().all(|l| l["update"]["sessionId"] == editor_id.as_str()));
    // The second prompt went to the successor.
    let sessions = env.run(&["sessions", "list", "--json"]).json();
    let successor = sessions.as_array().unwrap().iter().find(|s| s["title"] == "Lisbon hotel").unwrap();
    let thread = env.run(&["thread", successor["id"].as_str().unwrap()]).expect_code(0).stdout.clone();
    assert!(thread.contains("and breakfast?") && thread.contains("Still here."), "{thread}");
}

#[test]
fn modes_are_the_permission_modes_and_plan_mode_only_reads_until_the_plan_is_approved() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let write = || calls(&[("w1", "write_file", json!({"path": "x.txt", "content": "x"}))]);
    let script = env.script(
        "s.json",
        json!([
            write(),
            text("I would write x.txt."),
            text("Plan: write x.txt."),
            calls(&[("w2", "write_file", json!({"path": "x.txt", "content": "x"}))]),
            text("Wrote x.txt."),
        ]),
    );
    let cwd = work(&env);
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({"permissions": ["reject_once", "allow_always"], "steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": cwd},
            {"op": "set_mode", "modeId": "bypass"},
            {"op": "set_mode", "modeId": "plan"},
            {"op": "prompt", "text": "write x"},
            {"op": "prompt", "text": "what is the plan?"},
        ]}),
    );
    let modes: Vec<&str> = lines.response("new", 0)["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["default", "accept-edits", "plan"], "bypass only when seri was started in it");
    assert_eq!(lines.error("set_mode")["code"], -32602);
    // Plan mode refused the write without asking; after each answer the
    // editor is asked whether to carry the plan out: no, then yes with
    // edits accepted, and the write runs unasked.
    let asked = lines.of_kind("permission");
    assert_eq!(asked.len(), 2, "{asked:#?}");
    for question in &asked {
        assert_eq!(question["request"]["toolCall"]["kind"], "switch_mode");
        assert_eq!(question["request"]["toolCall"]["title"], "Carry out this plan?");
    }
    assert_ne!(asked[0]["request"]["toolCall"]["toolCallId"], asked[1]["request"]["toolCall"]["toolCallId"]);
    let ended = lines.updates_of("tool_call_update");
    let status = |id: &str| ended.iter().find(|u| u["toolCallId"] == id).map(|u| u["status"].clone());
    assert_eq!(status("w1"), Some(json!("failed")));
    assert_eq!(status("w2"), Some(json!("completed")));
    assert_eq!(std::fs::read_to_string(env.work().join("x.txt")).unwrap(), "x");
    let changed: Vec<&Value> = lines.updates_of("current_mode_update").iter().map(|u| &u["currentModeId"]).collect();
    assert_eq!(changed, [&json!("plan"), &json!("accept-edits")]);
    assert_eq!(lines.response("prompt", 0)["stopReason"], "end_turn");
    assert_eq!(lines.response("prompt", 1)["stopReason"], "end_turn");
    assert!(lines.agent_text().ends_with("Wrote x.txt."), "{}", lines.agent_text());
    let commands = lines.updates_of("available_commands_update");
    assert!(commands[0]["availableCommands"].as_array().unwrap().iter().any(|c| c["name"] == "compact"));
}

#[test]
fn bad_input_gets_the_protocols_errors_and_the_agent_keeps_serving() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("hi")]));
    let mut child = env
        .seri()
        .args(["--script", path_str(&script), "acp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    let mut send = |lines: &[String], answers: &mut Vec<Value>| {
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
        for _ in lines {
            let line = stdout.next().unwrap().unwrap();
            let value: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout holds only JSON ({e}): {line}"));
            answers.push(value);
        }
    };
    // Malformed JSON first: answered, and the agent still serves.
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
    send(&["{not json".to_owned(), hello.to_string()], &mut answers);
    send(
        &[
            json!({"jsonrpc": "2.0", "id": 2, "method": "no/such_method", "params": {}}).to_string(),
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": 7}}).to_string(),
            json!({"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}})
                .to_string(),
            json!({"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": []}})
                .to_string(),
        ],
        &mut answers,
    );
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "the agent ends quietly when the editor closes its input");
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).unwrap_or_else(|| panic!("{answers:#?}"));
    assert_eq!(by_id(Value::Null)["error"]["code"], -32700);
    assert_eq!(by_id(json!(1))["result"]["agentInfo"]["name"], "seri");
    assert_eq!(by_id(json!(2))["error"]["code"], -32601);
    assert_eq!(by_id(json!(3))["error"]["code"], -32602);
    assert_eq!(by_id(json!(4))["error"]["code"], -32602);
    assert!(by_id(json!(4))["error"]["message"].as_str().unwrap().contains("absolute"));
    assert_eq!(by_id(json!(5))["error"]["code"], -32002);
}

#[test]
fn acpx_runs_a_prompt_through_seri_approving_and_denying() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([calls(&[("w1", "write_file", json!({"path": "by-acpx.txt", "content": "yes\n"}))]), text("Wrote it.")]),
    );
    let agent = format!("{} --script {} acp", env!("CARGO_BIN_EXE_seri"), path_str(&script));
    let acpx = |policy: &str| {
        let output = Command::new("node")
            .arg(modules.join("acpx/dist/cli.js"))
            .args(["--agent", &agent, policy, "--format", "json", "exec", "write the file"])
            .current_dir(env.work())
            .env_clear()
            .env("SERI_HOME", env.home())
            .env("HOME", env.dir.path())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        (output.status.code(), stdout, String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (code, stdout, stderr) = acpx("--approve-all");
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let frames: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(frames.iter().any(|f| f["result"]["stopReason"] == "end_turn"), "{stdout}");
    assert!(frames.iter().any(|f| f["method"] == "session/request_permission"), "{stdout}");
    assert_eq!(std::fs::read_to_string(env.work().join("by-acpx.txt")).unwrap(), "yes\n");

    std::fs::remove_file(env.work().join("by-acpx.txt")).unwrap();
    let (code, stdout, stderr) = acpx("--deny-all");
    // acpx says a denied permission with its exit code 5.
    assert_eq!(code, Some(5), "{stdout}\n{stderr}");
    assert!(!env.work().join("by-acpx.txt").exists());
    let listed = env.run(&["sessions", "list", "--json"]).json();
    assert_eq!(listed.as_array().unwrap().len(), 2, "each exec made an ordinary session: {listed}");
}

#[test]
fn a_delegated_runs_question_is_asked_in_the_editors_session() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let file = json!({
        "turns": [
            calls(&[("d1", "delegate", json!({"task": "Write the child file"}))]),
            text("The child wrote it."),
        ],
        "children": [
            { "turns": [calls(&[("w1", "write_file", json!({"path": "child.txt", "content": "from the child\n"}))]), text("Written.")] }
        ]
    });
    let script = env.dir.path().join("s.json");
    std::fs::write(&script, file.to_string()).unwrap();
    let cwd = work(&env);
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({"permissions": ["allow_once"], "steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": cwd},
            {"op": "prompt", "text": "delegate it"},
        ]}),
    );
    let asked = lines.of_kind("permission");
    assert_eq!(asked.len(), 1, "{:#?}", lines.0);
    assert_eq!(asked[0]["request"]["sessionId"], lines.response("new", 0)["sessionId"]);
    assert_eq!(asked[0]["request"]["toolCall"]["content"][0]["type"], "diff");
    assert_eq!(std::fs::read_to_string(env.work().join("child.txt")).unwrap(), "from the child\n");
    assert_eq!(lines.response("prompt", 0)["stopReason"], "end_turn");
}

#[test]
fn a_mode_chosen_during_a_turn_answers_its_questions_and_is_kept_after() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let slow = json!({
        "chunks": ["Writing ", "it ", "now."],
        "delay_ms": 300,
        "tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "calm.txt", "content": "ok\n"}}]
    });
    let script = env.script("s.json", json!([slow, text("Done.")]));
    let cwd = work(&env);
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": cwd},
            {"op": "prompt", "text": "write calm.txt", "wait": false},
            {"op": "sleep", "ms": 150},
            {"op": "set_mode", "modeId": "accept-edits"},
            {"op": "await"},
        ]}),
    );
    assert!(lines.of_kind("permission").is_empty(), "accept-edits lets the write run: {:#?}", lines.0);
    assert_eq!(std::fs::read_to_string(env.work().join("calm.txt")).unwrap(), "ok\n");
    assert_eq!(lines.updates_of("current_mode_update")[0]["currentModeId"], "accept-edits");
    let session = lines.response("new", 0)["sessionId"].as_str().unwrap().to_owned();
    let shown = env.run(&["sessions", "show", &session, "--json"]).expect_code(0).json();
    assert_eq!(shown["permissionMode"], "accept-edits", "recorded once the turn ended: {shown}");
}

#[test]
fn the_editors_mcp_servers_start_for_its_session() {
    let Some(modules) = modules() else { return };
    let Some(everything) = crate::mcp::everything() else { return };
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([
            calls(&[("m1", "mcp__everything__echo", json!({"message": "from the editor's server"}))]),
            text("Echoed.")
        ]),
    );
    let cwd = work(&env);
    let server = json!({"name": "everything", "command": "node", "args": [path_str(&everything)], "env": []});
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": cwd, "mcpServers": [server]},
            {"op": "prompt", "text": "echo it"},
            {"op": "new", "cwd": cwd, "mcpServers": [{"name": "old", "type": "sse", "url": "http://127.0.0.1:9/sse", "headers": []}]},
        ]}),
    );
    assert_eq!(lines.response("initialize", 0)["agentCapabilities"]["mcpCapabilities"]["http"], true);
    let ended = lines.updates_of("tool_call_update");
    let echoed = ended.iter().find(|u| u["toolCallId"] == "m1").unwrap_or_else(|| panic!("{:#?}", lines.0));
    assert_eq!(echoed["status"], "completed", "{echoed}");
    let said = echoed["content"][0]["content"]["text"].as_str().unwrap_or_default();
    assert!(said.contains("from the editor's server"), "{echoed}");
    assert!(lines.error("new")["message"].as_str().unwrap().contains("not SSE"));
}

#[test]
fn the_info_commands_answer_without_a_model_call() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let script = env.script("s.json", json!([text("The model's first answer.")]));
    let cwd = work(&env);
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": cwd},
            {"op": "prompt", "text": "/context"},
            {"op": "prompt", "text": "/config"},
            {"op": "prompt", "text": "hello"},
        ]}),
    );
    let names: Vec<&str> = lines.updates_of("available_commands_update")[0]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["compact", "context", "config", "memory"]);
    let said = lines.agent_text();
    assert!(said.contains("next request, estimated") && said.contains("system prompt"), "{said}");
    assert!(said.contains("provider"), "{said}");
    // The first model answer went to the third prompt: the commands called no model.
    assert!(said.ends_with("The model's first answer."), "{said}");
    for n in 0..3 {
        assert_eq!(lines.response("prompt", n)["stopReason"], "end_turn");
    }
}

#[test]
fn the_model_option_lists_the_providers_models_and_switches_the_session() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let (base, _) = crate::slash::models_server(&["qwen2.5-7b-instruct", "llama3.1:8b"]);
    let config = json!({
        "provider": "openai-compatible",
        "model": "qwen2.5-7b-instruct",
        "context": {"window": 32000},
        "providers": {"openai-compatible": {"baseUrl": base}},
    });
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let cwd = work(&env);
    // No --script here: the provider is the configured local server.
    let lines = client(
        &env,
        &modules,
        &["acp"],
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": cwd},
            {"op": "sleep", "ms": 500},
            {"op": "set_config", "configId": "model", "value": "llama3.1:8b"},
            {"op": "set_config", "configId": "colour", "value": "red"},
        ]}),
    );
    let options = lines.response("set_config", 0)["configOptions"].as_array().unwrap().clone();
    let model = options.iter().find(|o| o["id"] == "model").unwrap_or_else(|| panic!("{options:?}"));
    assert_eq!(model["currentValue"], "llama3.1:8b", "{model}");
    let offered: Vec<&str> =
        model["options"].as_array().unwrap().iter().map(|o| o["value"].as_str().unwrap()).collect();
    assert_eq!(offered, ["llama3.1:8b", "qwen2.5-7b-instruct"], "{model}");
    assert!(lines.error("set_config")["message"].as_str().unwrap().contains("mode and model"));
    let session = lines.response("new", 0)["sessionId"].as_str().unwrap().to_owned();
    let shown = env.run(&["sessions", "show", &session, "--json"]).expect_code(0).json();
    assert_eq!(shown["modelOverride"]["model"], "llama3.1:8b", "{shown}");
}

/// `seri acp` on raw stdio: lines written, answers read by id.
struct Raw {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Raw {
    fn start(env: &Env, args: &[&str]) -> Self {
        let mut child =
            env.seri().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        Raw { child, stdin, stdout }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin.as_mut().unwrap(), "{message}").unwrap();
    }

    /// Lines until the answer to `id`; the notifications before it.
    fn answer(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let line = self.stdout.next().unwrap().unwrap();
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["id"] == id && value.get("method").is_none() {
                return (value, before);
            }
            before.push(value);
        }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id).0
    }
}

#[test]
fn without_a_key_initialize_says_which_variable_to_set() {
    let env = Env::new();
    let mut raw = Raw::start(&env, &["acp"]);
    let hello = raw.request(1, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(hello["result"]["authMethods"][0]["id"], "env:ANTHROPIC_API_KEY", "{hello}");
    let refused = raw.request(2, "authenticate", json!({"methodId": "env:ANTHROPIC_API_KEY"}));
    assert_eq!(refused["error"]["code"], -32000);
    assert!(refused["error"]["message"].as_str().unwrap().contains("ANTHROPIC_API_KEY is not set"), "{refused}");
    let cwd = work(&env);
    let early = raw.request(3, "session/new", json!({"cwd": cwd, "mcpServers": []}));
    assert_eq!(early["error"]["code"], -32000, "a session needs the key first: {early}");
    drop(raw.stdin.take());
    assert!(raw.child.wait().unwrap().success());
    // With the key in its environment, nothing to authenticate.
    let mut command = env.seri();
    command.env("ANTHROPIC_API_KEY", "sk-test").args(["acp"]).stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let hello: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(hello["result"]["authMethods"], json!([]), "{hello}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn an_editor_that_leaves_mid_turn_ends_it_as_a_cancel_and_other_folders_are_refused() {
    let env = Env::new();
    let chunks: Vec<String> = (0..50).map(|i| format!("w{i} ")).collect();
    let script = env.script(
        "s.json",
        json!([calls(&[("b1", "bash", json!({"command": "echo started"}))]), { "chunks": chunks, "delay_ms": 100 }]),
    );
    let cwd = work(&env);
    let mut raw = Raw::start(&env, &["--script", path_str(&script), "--yes", "acp"]);
    raw.request(1, "initialize", json!({"protocolVersion": 1}));
    let created = raw.request(2, "session/new", json!({"cwd": cwd, "mcpServers": []}));
    let session = created["result"]["sessionId"].as_str().unwrap().to_owned();
    let elsewhere = env.dir.path().to_str().unwrap().to_owned();
    let refused = raw.request(3, "session/load", json!({"sessionId": session, "cwd": elsewhere, "mcpServers": []}));
    assert_eq!(refused["error"]["code"], -32602);
    assert!(refused["error"]["message"].as_str().unwrap().contains("was started in"), "{refused}");
    raw.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}}));
    // A few chunks of the answer, then the editor is gone.
    let mut chunks_seen = 0;
    while chunks_seen < 3 {
        let line = raw.stdout.next().unwrap().unwrap();
        let value: Value = serde_json::from_str(&line).unwrap();
        if value["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            chunks_seen += 1;
        }
    }
    drop(raw.stdin.take());
    assert!(raw.child.wait().unwrap().success(), "seri acp exits 0 once the turn is settled");
    // The run is recorded cancelled, its call answered, the partial answer kept.
    let thread = env.run(&["thread", &session]).expect_code(0).stdout.clone();
    assert!(thread.contains("tool result bash") && thread.contains("w0 w1"), "{thread}");
    assert!(!thread.contains("w49"), "{thread}");
    let check = env.run(&["store", "check", "--json"]);
    check.expect_code(0);
}

#[test]
fn sessions_list_close_resume_fork_a_waiting_prompt_and_the_turn_limit() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let slow = json!({ "chunks": ["one ", "two ", "three"], "delay_ms": 200 });
    let script = env.script(
        "s.json",
        json!([
            slow,
            text("Second."),
            text("After resume."),
            text("In the fork."),
            calls(&[("l1", "list", json!({}))])
        ]),
    );
    let cwd = work(&env);
    let lines = client(
        &env,
        &modules,
        &["--script", path_str(&script), "--max-turns", "1", "acp"],
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": cwd},
            {"op": "prompt", "text": "first", "wait": false},
            {"op": "sleep", "ms": 100},
            {"op": "prompt", "text": "second"},
            {"op": "await"},
            {"op": "list", "cwd": cwd},
            {"op": "close"},
            {"op": "prompt", "text": "after close"},
            {"op": "resume", "cwd": cwd},
            {"op": "prompt", "text": "third"},
            {"op": "fork", "cwd": cwd},
            {"op": "prompt", "text": "fourth"},
            {"op": "prompt", "text": "list the files"},
        ]}),
    );
    let id = lines.response("new", 0)["sessionId"].as_str().unwrap().to_owned();
    // The second prompt waited for the first, and each got its own answer.
    assert!(lines.agent_text().starts_with("one two threeSecond."), "{}", lines.agent_text());
    assert_eq!(lines.response("prompt", 0)["stopReason"], "end_turn");
    assert_eq!(lines.response("prompt", 1)["stopReason"], "end_turn");
    let listed = &lines.response("list", 0)["sessions"];
    let mine =
        listed.as_array().unwrap().iter().find(|s| s["sessionId"] == id.as_str()).unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(mine["cwd"], cwd.as_str());
    // Closed, a session takes no prompt until it is resumed.
    assert_eq!(lines.error("prompt")["code"], -32002);
    assert_eq!(lines.response("prompt", 2)["stopReason"], "end_turn");
    assert!(lines.agent_text().contains("After resume.In the fork."), "{}", lines.agent_text());
    // The fork is seri's fork by reference, made by the editor.
    let fork = lines.response("fork", 0)["sessionId"].as_str().unwrap().to_owned();
    assert_ne!(fork, id);
    let shown = env.run(&["sessions", "show", &fork, "--json"]).expect_code(0).json();
    assert_eq!(
        (&shown["forkedFrom"]["sessionId"], &shown["forkedFrom"]["via"]),
        (&json!(id), &json!("acp")),
        "{shown}"
    );
    // --max-turns 1 and a turn that calls a tool: the turn limit, in the protocol's words.
    assert_eq!(lines.response("prompt", 4)["stopReason"], "max_turn_requests");
}

#[test]
fn an_editors_session_runs_the_session_start_hooks_and_the_model_reads_them() {
    let Some(modules) = modules() else { return };
    let env = Env::new();
    let hook = env.dir.path().join("start.sh");
    std::fs::write(&hook, "#!/bin/sh\ncat > /dev/null\necho 'Context: the editor opened this.'\n").unwrap();
    let mut permissions = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&hook, permissions).unwrap();
    let config = json!({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": path_str(&hook)}]}]}});
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let script = env.script("s.json", json!([text("Noted.")]));
    let lines = scenario(
        &env,
        &modules,
        &script,
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new", "cwd": work(&env)},
            {"op": "prompt", "text": "hello"},
        ]}),
    );
    assert_eq!(lines.agent_text(), "Noted.");
    let first = env.requests()[0]["messages"].to_string();
    assert!(first.contains("hello") && first.contains("Context: the editor opened this."), "{first}");
}
