//! `seri import` of a 1 GiB Claude Code session file, as a whole process:
//! its peak memory against the same import of a 16 MiB file of the same
//! lines (goal: memory bounded by the longest line and a few dozen bytes an
//! entry, never by the file: the ratio stays far below the 64× between the
//! files' sizes), and against the file's own size.
//!
//! The file is one session of turns (a question, an answer, a tool call, a
//! result of a few KiB) with a branch left behind every 500 turns (a
//! question asked again from earlier, as a rewind leaves it), so both
//! readings, the branches and the batched writes are measured. Peak memory
//! is the process's high-water mark (`VmHWM`), read from `/proc` as it
//! runs.
//!
//! `SERI_BENCH_QUICK=1` (`cargo xtask bench --quick`) imports 256 MiB.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn quick() -> bool {
    std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1")
}

const MIB: u64 = 1024 * 1024;

fn main() {
    let big = if quick() { 256 * MIB } else { 1024 * MIB };
    let small = 16 * MIB;
    let dir = tempfile::tempdir().unwrap();
    let (small_file, big_file) = (dir.path().join("small.jsonl"), dir.path().join("big.jsonl"));
    let small_bytes = write_session(&small_file, small);
    let big_bytes = write_session(&big_file, big);
    let _ = Command::new("sync").status();

    let (small_peak, small_time) = import(&dir.path().join("small-home"), &small_file);
    let (big_peak, big_time) = import(&dir.path().join("big-home"), &big_file);
    let mib = |bytes: u64| bytes as f64 / MIB as f64;
    println!(
        "bench: seri import of a {:.0} MiB Claude Code file, peak memory (took {:.1} s) | {:.1} MiB | baseline the same import of a {:.0} MiB file ({:.1} s) {:.1} MiB | ratio {:.2}",
        mib(big_bytes),
        big_time.as_secs_f64(),
        mib(big_peak),
        mib(small_bytes),
        small_time.as_secs_f64(),
        mib(small_peak),
        big_peak as f64 / small_peak as f64
    );
    println!(
        "bench: seri import of a {:.0} MiB Claude Code file, peak memory against the file | {:.1} MiB | baseline the file's size {:.1} MiB | ratio {:.3}",
        mib(big_bytes),
        mib(big_peak),
        mib(big_bytes),
        big_peak as f64 / big_bytes as f64
    );
}

/// Writes a Claude Code session of about `size` bytes to `path`; its size.
fn write_session(path: &Path, size: u64) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    let session = "5e551011-0000-4000-8000-00000000beef";
    let mut written = 0u64;
    let mut parent: Option<String> = None;
    let mut earlier: Option<String> = None;
    let mut turn = 0u64;
    let line = |out: &mut BufWriter<std::fs::File>, text: String| {
        out.write_all(text.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
        text.len() as u64 + 1
    };
    while written < size {
        turn += 1;
        let id = |n: u64| format!("00000000-0000-4000-8000-{:012x}", turn * 4 + n);
        let time = format!("2026-12-02T{:02}:{:02}:{:02}.000Z", (turn / 3600) % 24, (turn / 60) % 60, turn % 60);
        // Every 500th question is asked again from the turn before: the
        // first asking is a branch left behind.
        let parent_of_question = if turn.is_multiple_of(500) { earlier.clone() } else { parent.clone() };
        let parent_json = |p: &Option<String>| p.as_ref().map_or("null".to_owned(), |p| format!("\"{p}\""));
        let common = |uuid: &str, parent: &Option<String>| {
            format!(
                r#""parentUuid":{},"isSidechain":false,"uuid":"{uuid}","timestamp":"{time}","sessionId":"{session}","cwd":"/work/project","version":"2.1.197""#,
                parent_json(parent)
            )
        };
        let question = id(0);
        written += line(
            &mut out,
            format!(
                r#"{{"type":"user",{},"message":{{"role":"user","content":"Turn {turn}: look at the parser and fix the failing case."}}}}"#,
                common(&question, &parent_of_question)
            ),
        );
        let text = id(1);
        written += line(
            &mut out,
            format!(
                r#"{{"type":"assistant",{},"message":{{"id":"msg_{turn}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"I'll read the file first."}}]}}}}"#,
                common(&text, &Some(question.clone()))
            ),
        );
        let call = id(2);
        written += line(
            &mut out,
            format!(
                r#"{{"type":"assistant",{},"message":{{"id":"msg_{turn}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"tool_use","id":"toolu_{turn}","name":"Read","input":{{"file_path":"/work/project/src/parser.rs"}}}}]}}}}"#,
                common(&call, &Some(text))
            ),
        );
        let result = id(3);
        let content = "fn parse(input: &str) -> Result<Ast, Error> { /* … */ }\\n".repeat(20 + (turn % 80) as usize);
        written += line(
            &mut out,
            format!(
                r#"{{"type":"user",{},"message":{{"role":"user","content":[{{"tool_use_id":"toolu_{turn}","type":"tool_result","content":"{content}","is_error":false}}]}}}}"#,
                common(&result, &Some(call))
            ),
        );
        earlier = parent.replace(result);
    }
    out.flush().unwrap();
    written
}

/// Runs `seri import FILE` on a fresh profile: its peak memory in bytes
/// and how long it took.
fn import(home: &Path, file: &Path) -> (u64, Duration) {
    let errors = home.with_extension("stderr");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_seri"))
        .arg("import")
        .arg(file)
        .env("SERI_HOME", home)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&errors).unwrap())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    loop {
        if let Some(hwm) = std::fs::read_to_string(&status).ok().and_then(|status| high_water_mark(&status)) {
            peak = peak.max(hwm);
        }
        if let Some(exit) = child.try_wait().unwrap() {
            assert!(exit.success(), "seri import failed: {}", std::fs::read_to_string(&errors).unwrap_or_default());
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    (peak, started.elapsed())
}

/// `VmHWM` of a `/proc/PID/status`, in bytes.
fn high_water_mark(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
