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

#[path = "../tests/it/claude_code_file.rs"]
mod claude_code_file;

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
    let small_bytes = claude_code_file::write(&small_file, small);
    let big_bytes = claude_code_file::write(&big_file, big);
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
