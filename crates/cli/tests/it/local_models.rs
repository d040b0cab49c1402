//! `seri` against a real llama.cpp `llama-server` (SmolLM2-135M-Instruct,
//! an 8192-token window: seri's own system prompt and tools take about
//! 2,100 of its tokens), started by each test on 127.0.0.1.
//!
//! `cargo xtask llama` builds the server and fetches the model (`cargo
//! xtask ci` does it first): `SERI_TEST_LLAMA_SERVER`, `SERI_TEST_LLAMA_MODEL`.
//! Without them a test says so and passes, unless `SERI_REQUIRE_LLAMA=1`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::support::{Env, path_str, text};

const WINDOW: u64 = 8192;

struct LlamaServer {
    child: Child,
    port: u16,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LlamaServer {
    #[allow(clippy::print_stderr, reason = "the note says why the test did nothing")]
    fn start() -> Option<LlamaServer> {
        let server = std::env::var_os("SERI_TEST_LLAMA_SERVER").filter(|v| !v.is_empty());
        let model = std::env::var_os("SERI_TEST_LLAMA_MODEL").filter(|v| !v.is_empty());
        let (Some(server), Some(model)) = (server, model) else {
            let required = std::env::var_os("SERI_REQUIRE_LLAMA").is_some_and(|v| v == "1");
            assert!(
                !required,
                "SERI_REQUIRE_LLAMA=1 but SERI_TEST_LLAMA_SERVER or SERI_TEST_LLAMA_MODEL is not set: run `cargo xtask llama`"
            );
            eprintln!("skipped: no llama-server (run `cargo xtask llama` and set SERI_TEST_LLAMA_SERVER/_MODEL)");
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(server)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-c", &WINDOW.to_string()])
            .args(["--parallel", "1", "--threads", "2", "--no-webui"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = LlamaServer { child, port };
        // Bounded: a server that never comes up fails the test, not hangs it.
        for _ in 0..600 {
            if server.healthy() {
                return Some(server);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("llama-server did not answer /health within a minute");
    }

    fn healthy(&self) -> bool {
        let Ok(mut socket) = TcpStream::connect(("127.0.0.1", self.port)) else { return false };
        let request = format!("GET /health HTTP/1.1\r\nhost: 127.0.0.1:{}\r\nconnection: close\r\n\r\n", self.port);
        let mut answer = String::new();
        socket.write_all(request.as_bytes()).is_ok()
            && socket.read_to_string(&mut answer).is_ok()
            && answer.starts_with("HTTP/1.1 200")
    }

    /// A profile whose `openai-compatible` provider is this server, with no key.
    fn configure(&self, env: &Env, strategy: &str) {
        let config = json!({
            "provider": "openai-compatible",
            "model": "smollm2",
            "providers": {"openai-compatible": {"baseUrl": format!("http://127.0.0.1:{}/v1", self.port)}},
            "context": {"strategy": strategy},
        });
        std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    }
}

/// Flags that keep a small model's turn short and safe.
const SHORT: &[&str] = &["--output-format", "json", "--max-output-tokens", "24", "--temperature", "0", "--yes"];

#[test]
fn a_session_with_tool_calls_recorded_by_the_script_is_answered_on_llama_server() {
    let Some(server) = LlamaServer::start() else { return };
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([{ "tool_calls": [{ "id": "c1", "name": "list", "arguments": { "path": "." } }] }, text("Listed.")]),
    );
    env.run(&["-p", "List the files.", "--provider", "script", "--script", path_str(&script), "--yes"]).expect_code(0);
    server.configure(&env, "continue");
    let mut args = vec!["-c", "-p", "Thanks. Now say hello.", "--max-turns", "1"];
    args.extend_from_slice(SHORT);
    let run = env.run(&args);
    // A small model may answer or call a tool; either way the server took
    // the history (it refused it with a 500 before).
    let status = run.json()["status"].clone();
    assert!(status == json!("succeeded") || status == json!("max_turns"), "{}\n{}", run.stdout, run.stderr);
    // The window was asked of the server and is remembered, with its origin.
    let config = env.run(&["config"]);
    config.expect_code(0);
    let row = config.stdout.lines().find(|l| l.starts_with("context.window")).unwrap_or_default().to_owned();
    assert!(row.contains("8192") && row.contains("llama.cpp /props"), "{}", config.stdout);
    assert!(env.home().join("windows.json").is_file());
}

#[test]
fn a_message_over_the_window_is_an_overflow_on_both_strategies() {
    let Some(server) = LlamaServer::start() else { return };
    // About 12000 tokens: past the window whatever the history.
    let huge = "hello ".repeat(12_000);
    for strategy in ["continue", "compact"] {
        let env = Env::new();
        server.configure(&env, strategy);
        let mut args = vec!["-p", huge.as_str(), "--max-turns", "1"];
        args.extend_from_slice(SHORT);
        let run = env.run(&args);
        run.expect_code(1);
        let said = format!("{}{}", run.stdout, run.stderr);
        // llama-server's own words name the request's size and the window.
        assert!(said.contains("exceeds the available context size (8192 tokens)"), "{strategy}: {said}");
        assert!(!said.contains("connection dropped"), "{strategy}: not a network fault: {said}");
        assert!(!said.contains("retrying"), "{strategy}: an overflow is never retried as a fault: {said}");
        // Compaction was tried (compact), then a successor (both): a first
        // message alone has nothing older to fold or leave behind.
        assert!(said.contains("continuing into a successor failed too"), "{strategy}: {said}");
        assert!(said.contains("do not fit the window even without the history before it"), "{strategy}: {said}");
    }
}

/// Flags for a turn on the small model that may not act: no `--yes`, so a
/// tool call it makes up is refused rather than run.
const SHORT_SAFE: &[&str] = &["--output-format", "json", "--max-output-tokens", "24", "--temperature", "0"];

/// About 40,000 characters of notes: more of the model's tokens than the
/// 8,192-token window holds on their own, and more bytes than a small
/// window's projection budget (a byte per token of window), so a successor
/// leaves them out. (15,000 characters with seri's prompt and tools were a
/// request of about 6,000 tokens.)
fn long_notes() -> String {
    (1..=600)
        .map(|i| format!("Note {i}: ferry {i} leaves pier {} of the Lisbon river port at dawn.\n", i % 7))
        .collect()
}

/// The call id of the continuation edge into `successor`: `seri-overflow-…`
/// when seri continued on its own.
fn edge_call_id(env: &Env, successor: &str) -> String {
    rusqlite::Connection::open(env.home().join("seri.db"))
        .unwrap()
        .query_row(
            "SELECT tool_call_id FROM session_continuations WHERE successor_session_id = ?1",
            [successor],
            |row| row.get(0),
        )
        .unwrap()
}

/// The message the successor answers is the person's, copied, and the
/// model answered it there.
fn assert_answered_in(env: &Env, successor: &str, message: &str) {
    let thread = env.run(&["thread", successor]).stdout;
    // The first line of each event (a multi-line text goes on indented).
    let lines: Vec<&str> = thread.lines().filter(|l| l.starts_with('[')).collect();
    assert!(lines.first().is_some_and(|l| l.starts_with("[1] system: <continuation>")), "{thread}");
    assert_eq!(lines.get(1).copied(), Some(format!("[2] user: {message}").as_str()), "{thread}");
    assert!(lines.get(2).is_some_and(|l| l.starts_with("[3] assistant")), "the model's turn: {thread}");
}

#[test]
fn on_the_continue_strategy_a_real_overflow_is_answered_in_a_successor() {
    let Some(server) = LlamaServer::start() else { return };
    let env = Env::new();
    // The long exchange is recorded by the script; the overflow is llama-server's own.
    let script = env.script("s.json", json!([text("Noted.")]));
    let notes = long_notes();
    let run =
        env.run(&["-p", &notes, "--provider", "script", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    let predecessor = run.json()["session_id"].as_str().unwrap().to_owned();
    server.configure(&env, "continue");
    let message = "Thanks. Now say hello.";
    let mut args = vec!["-c", "-p", message, "--max-turns", "3"];
    args.extend_from_slice(SHORT_SAFE);
    let run = env.run(&args);
    let out = run.json();
    let successor = out["continued_to_session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no successor:\n{}\n{}", run.stdout, run.stderr))
        .to_owned();
    assert!(out["status"] == "succeeded" || out["status"] == "max_turns", "{}\n{}", run.stdout, run.stderr);
    assert_answered_in(&env, &successor, message);
    // The events say which path was taken: the agent's own continuation in
    // the turn that offered only continue_session, or seri's.
    let said = env.run(&["thread", &predecessor]).stdout;
    if edge_call_id(&env, &successor).starts_with("seri-overflow-") {
        assert!(said.contains("with the handoff below written by seri rather than by the agent"), "{said}");
        let projection = env.run(&["thread", &successor, "--to", "1"]).stdout;
        assert!(projection.contains("seri wrote this handoff, not the agent"), "{projection}");
    } else {
        assert!(said.contains("seri offered the agent one turn with only `continue_session`"), "{said}");
    }
    // The notes stayed behind: the successor's projection left them out.
    let projection = env.run(&["thread", &successor, "--to", "1"]).stdout;
    assert!(!projection.contains("Note 200: ferry 200"), "{projection}");
}

#[test]
fn on_the_compact_strategy_a_turn_compaction_cannot_save_goes_on_in_a_successor_with_the_recap() {
    let Some(server) = LlamaServer::start() else { return };
    let env = Env::new();
    // The session's system prompt is frozen with a long AGENTS.md: with it no
    // compaction of the history brings a request under the window.
    let agents = env.work().join("AGENTS.md");
    std::fs::write(&agents, long_notes()).unwrap();
    // A recap the summarizer wrote (scripted here), as the headless tests
    // make one: a bill over half the window compacts before the next
    // request, keeping the newest 150 tokens. (The bills are ones the
    // requests could have had: a bill of more tokens than characters
    // teaches nothing.)
    let flags = ["--provider", "script", "--context-strategy", "compact", "--context-window", "60000"];
    let usage = |input: u64| json!({ "input": input, "cache_read": 0, "cache_write": 0, "output": 50 });
    let words = " lorem ipsum dolor sit amet".repeat(15);
    let turn = |i: u64, input: u64| json!({ "text": format!("Answer {i}:{words}"), "usage": usage(input) });
    let recap = "## Goal\nAnswer the numbered questions.\n\n## Progress\n- Four answers given.\n\n## Blockers\n(none)\n\n## Next steps\n- Answer the next one.";
    let mut session: Option<String> = None;
    for (i, input) in [(1, 12_000), (2, 13_000), (3, 14_000), (4, 35_000), (5, 12_000)] {
        let turns = if i == 5 { json!([{ "text": recap }, turn(i, input)]) } else { json!([turn(i, input)]) };
        let script = env.script(&format!("s{i}.json"), turns);
        let question = format!("Question {i}:{words}");
        let mut args = vec!["-p", question.as_str(), "--script", path_str(&script), "--output-format", "json"];
        args.extend(flags);
        let resume = session.clone();
        if let Some(id) = &resume {
            args.extend(["--resume", id.as_str()]);
        }
        let run = env.run_with(&args, &[("SERI_KEEP_TOKENS", "150")]);
        run.expect_code(0);
        session.get_or_insert_with(|| run.json()["session_id"].as_str().unwrap().to_owned());
    }
    let predecessor = session.unwrap();
    let thread = env.run(&["thread", &predecessor]).stdout;
    assert!(thread.contains("compaction: recap of seq 1 to"), "{thread}");
    // The successor freezes its own prompt from the files as they are then.
    std::fs::write(&agents, "Answer briefly.\n").unwrap();
    server.configure(&env, "compact");
    let message = "Thanks. Now say hello.";
    let mut args = vec!["--resume", predecessor.as_str(), "-p", message, "--max-turns", "3"];
    args.extend_from_slice(SHORT_SAFE);
    let run = env.run(&args);
    let out = run.json();
    let successor = out["continued_to_session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no successor:\n{}\n{}", run.stdout, run.stderr))
        .to_owned();
    assert!(out["status"] == "succeeded" || out["status"] == "max_turns", "{}\n{}", run.stdout, run.stderr);
    assert_answered_in(&env, &successor, message);
    // seri continued on its own, with the summarizer's recap as the handoff.
    assert!(edge_call_id(&env, &successor).starts_with("seri-overflow-"));
    let said = env.run(&["thread", &predecessor]).stdout;
    assert!(said.contains("with a handoff taken from the summarizer's latest recap"), "{said}");
    let projection = env.run(&["thread", &successor, "--to", "1"]).stdout;
    // (The scripted recap's, or one the overflow retry's compaction wrote.)
    assert!(projection.contains("taken from the summarizer's recap of seq "), "{projection}");
    assert!(!projection.contains("seri wrote this handoff"), "{projection}");
}
