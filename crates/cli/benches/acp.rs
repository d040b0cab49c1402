//! `seri acp`'s figures, each against a baseline measured in the same run:
//!
//! - From starting `seri acp` to its answer to `initialize`, the median of
//!   the runs, against starting `seri --version` until it exits (goal:
//!   ≤ 20 ms).
//! - How late a streamed chunk reaches the client: the scripted provider
//!   writes its answer in chunks a fixed delay apart, and each chunk's
//!   lateness is the time since the one before less that delay (the median
//!   over the chunks of several prompts). The baseline is the same answer
//!   through `seri -p --output-format stream-json`, the REPL's stream, so
//!   the ratio is what the protocol adds (goal: ≤ 1 ms more).
//!
//! `SERI_BENCH_QUICK=1` (`cargo xtask bench --quick`): fewer runs.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const SERI: &str = env!("CARGO_BIN_EXE_seri");
const CHUNKS: usize = 40;
const DELAY: Duration = Duration::from_millis(15);

fn quick() -> bool {
    std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1")
}

fn seri(home: &Path, work: &Path) -> Command {
    let mut command = Command::new(SERI);
    command.current_dir(work).env_clear().env("SERI_HOME", home).env("HOME", home);
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    command
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn line(what: &str, value: f64, baseline_what: &str, baseline: f64) {
    let ratio = if baseline > 0.0 { value / baseline } else { f64::NAN };
    println!("bench: {what} | {value:.2} ms | baseline {baseline_what} {baseline:.2} ms | ratio {ratio:.2}");
}

/// The lateness of each chunk after the first: the gap to the one before,
/// less the scripted delay.
fn lateness(arrivals: &[Instant]) -> Vec<f64> {
    arrivals.windows(2).map(|pair| millis(pair[1] - pair[0]) - millis(DELAY)).collect()
}

fn initialize_figure(home: &Path, work: &Path, script: &Path, runs: usize) {
    let mut started = Vec::new();
    for _ in 0..runs {
        let at = Instant::now();
        let mut child = seri(home, work)
            .args(["--script", script.to_str().unwrap(), "acp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
        writeln!(stdin, "{hello}").unwrap();
        let mut answer = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut answer).unwrap();
        started.push(millis(at.elapsed()));
        assert!(answer.contains("\"agentInfo\""), "{answer}");
        drop(stdin);
        child.wait().unwrap();
    }
    let mut version = Vec::new();
    for _ in 0..runs {
        let at = Instant::now();
        seri(home, work).arg("--version").stdout(Stdio::null()).status().unwrap();
        version.push(millis(at.elapsed()));
    }
    line("seri acp: start to the initialize answer", median(started), "seri --version", median(version));
}

/// One prompt through `seri acp`: the arrival of each answer chunk.
fn acp_chunks(home: &Path, work: &Path, script: &Path) -> Vec<Instant> {
    let mut child = seri(home, work)
        .args(["--script", script.to_str().unwrap(), "acp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let answer = |id: u64, lines: &mut std::io::Lines<_>, arrivals: &mut Vec<Instant>| loop {
        let line: String = lines.next().unwrap().unwrap();
        let value: Value = serde_json::from_str(&line).unwrap();
        if value["id"] == id {
            return value;
        }
        if value["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            arrivals.push(Instant::now());
        }
    };
    let mut arrivals = Vec::new();
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
        .unwrap();
    answer(1, &mut lines, &mut arrivals);
    let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": work, "mcpServers": []}});
    writeln!(stdin, "{new}").unwrap();
    let session = answer(2, &mut lines, &mut arrivals)["result"]["sessionId"].clone();
    let prompt = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}});
    writeln!(stdin, "{prompt}").unwrap();
    let done = answer(3, &mut lines, &mut arrivals);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    drop(stdin);
    child.wait().unwrap();
    arrivals
}

/// The same answer through `seri -p --output-format stream-json`.
fn stream_json_chunks(home: &Path, work: &Path, script: &Path) -> Vec<Instant> {
    let mut child = seri(home, work)
        .args(["--script", script.to_str().unwrap(), "-p", "go", "--output-format", "stream-json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut arrivals = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let value: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if value["type"] == "text_delta" {
            arrivals.push(Instant::now());
        }
    }
    assert!(child.wait().unwrap().success());
    arrivals
}

fn chunk_figure(home: &Path, work: &Path, script: &Path, runs: usize) {
    let (mut acp, mut stream) = (Vec::new(), Vec::new());
    // Alternated, so both see the machine in the same state.
    for _ in 0..runs {
        let arrived = acp_chunks(home, work, script);
        assert_eq!(arrived.len(), CHUNKS, "every chunk reached the client");
        acp.extend(lateness(&arrived));
        let arrived = stream_json_chunks(home, work, script);
        assert_eq!(arrived.len(), CHUNKS, "every chunk reached stream-json");
        stream.extend(lateness(&arrived));
    }
    line("seri acp: a chunk's lateness (median)", median(acp), "seri -p stream-json chunk's lateness", median(stream));
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let chunks: Vec<String> = (0..CHUNKS).map(|i| format!("word{i} ")).collect();
    let script = dir.path().join("script.json");
    let turn = json!({"chunks": chunks, "delay_ms": DELAY.as_millis() as u64});
    std::fs::write(&script, json!({"turns": [turn]}).to_string()).unwrap();
    let runs = if quick() { 5 } else { 20 };
    initialize_figure(&home, &work, &script, runs);
    chunk_figure(&home, &work, &script, if quick() { 3 } else { 10 });
}
