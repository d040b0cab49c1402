//! `seri` against a real llama.cpp `llama-server` (SmolLM2-135M-Instruct,
//! an 8192-token window: seri's own system prompt and tools take about
//! 6000), started by each test on 127.0.0.1.
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
