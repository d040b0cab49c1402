//! `seri sessions list --json` on a profile of 10,000 sessions, as a whole
//! process (start, open the profile, list, print), and on a profile whose
//! 10,000 sessions were imported from a legacy `sessions/` folder that is
//! still there (each file checked against its import record at start).
//! Goal: ≤ 50 ms. The baseline is the process floor, `seri --version`, so
//! the ratio says what listing costs on top of starting. Each figure is the
//! median of 7 runs, with the fastest and slowest; the commands take
//! turns.
//!
//! Two more figures, each against its baseline in the same rounds:
//! - the legacy profile's listing with its `sessions/` folder against the
//!   same listing with the folder moved away (goal ≤ 1.2×: a folder already
//!   imported costs a start little);
//! - `seri -p hi` with the scripted model (a whole one-turn run: open the
//!   profile, create a session, answer, record) against `seri --version`.
//!
//! `SERI_BENCH_QUICK=1` (`cargo xtask bench --quick`) uses 2,000 sessions
//! and 5 runs.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use seri_core::{AgentId, EventBody, FrozenPrompt, Message};
use seri_store::Profile;

fn quick() -> bool {
    std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1")
}

fn main() {
    let (sessions, runs) = if quick() { (2_000, 5) } else { (10_000, 7) };
    let dir = tempfile::tempdir().unwrap();
    // SERI_BENCH_KEEP=DIR builds both profiles in DIR (`home`, `legacy-home`)
    // and leaves them there, to profile one listing by hand
    // (`SERI_HOME=DIR/home perf record seri sessions list --json`).
    let kept = std::env::var_os("SERI_BENCH_KEEP").map(std::path::PathBuf::from);
    let home = kept.clone().unwrap_or_else(|| dir.path().to_path_buf()).join("home");
    let profile = Profile::at(&home);
    profile.create().unwrap();
    {
        let store = profile.open_store().unwrap();
        let agent = store.agent(&AgentId::local());
        // A seed of the size a real one has: the frozen prompt is most of it.
        let prompt = FrozenPrompt { text: "You are seri. ".repeat(180), ..FrozenPrompt::default() };
        for n in 0..sessions {
            let mut seed = agent.new_seed(format!("/work/project-{}", n % 40));
            seed.system_prompt = Some(prompt.clone());
            let id = agent.create_session(&seed).unwrap().id;
            let bodies = [
                EventBody::Message(Message::user(format!("Task {n}: fix the parser"))),
                EventBody::Message(Message::assistant("Done.")),
            ];
            agent.append(id, bodies).unwrap();
        }
    }
    // A profile whose sessions all came from a legacy folder, which is
    // still there: imported once (not measured), then listed, each file
    // stat-checked against its import record.
    let legacy_home = kept.unwrap_or_else(|| dir.path().to_path_buf()).join("legacy-home");
    let legacy_profile = Profile::at(&legacy_home);
    legacy_profile.create().unwrap();
    let legacy = legacy_profile.legacy_sessions_dir();
    std::fs::create_dir_all(&legacy).unwrap();
    for n in 0..sessions {
        let line = format!(
            "{{\"role\":\"user\",\"content\":\"old task {n}\"}}\n{{\"role\":\"assistant\",\"content\":\"ok\"}}\n"
        );
        std::fs::write(legacy.join(format!("s{n:05}.jsonl")), line).unwrap();
    }
    run(&legacy_home, &["sessions", "list", "--json"]);
    // A profile for one-turn runs, and the script that answers them.
    let scripted_home = dir.path().join("scripted-home");
    Profile::at(&scripted_home).create().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, r#"{"turns": [{"text": "Hello."}]}"#).unwrap();
    let script = script.to_str().unwrap();
    settle();
    let list = ["sessions", "list", "--json"];
    let scripted = ["-p", "hi", "--script", script];
    let [bare, with_legacy, one_turn, floor] = measure(
        runs,
        [
            (&home, list.as_slice()),
            (&legacy_home, list.as_slice()),
            (&scripted_home, scripted.as_slice()),
            (&home, ["--version"].as_slice()),
        ],
    );
    // The legacy profile's listing, its folder there and moved away, in turns.
    let moved = legacy_home.join("sessions-moved-away");
    let (mut with_folder, mut without_folder) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        with_folder.push(run(&legacy_home, &list));
        std::fs::rename(&legacy, &moved).unwrap();
        without_folder.push(run(&legacy_home, &list));
        std::fs::rename(&moved, &legacy).unwrap();
    }

    report(runs, &format!("seri sessions list --json, {sessions} sessions (goal ≤ 50 ms)"), bare, floor);
    report(
        runs,
        &format!("seri sessions list --json, {sessions} sessions from a legacy folder (stat-checked; goal ≤ 50 ms)"),
        with_legacy,
        floor,
    );
    report(runs, "seri -p hi, scripted model", one_turn, floor);
    let [with_folder, without_folder] = [with_folder, without_folder].map(|times| spread(runs, times));
    println!(
        "bench: start with a legacy sessions/ folder of {sessions} imported files, seri sessions list --json (median of {runs}: {:.1}–{:.1} ms; goal ≤ 1.2×) | {:.1} ms | baseline the same profile with the folder moved away ({:.1}–{:.1}) {:.1} ms | ratio {:.2}",
        with_folder.1,
        with_folder.2,
        with_folder.0,
        without_folder.1,
        without_folder.2,
        without_folder.0,
        with_folder.0 / without_folder.0
    );
}

/// Waits for the fixture just written (tens of megabytes) to reach the
/// disk, so that the kernel writing it back does not slow the runs measured.
fn settle() {
    let _ = Command::new("sync").status();
}

fn run(home: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_seri")).args(args).env("SERI_HOME", home).output().unwrap();
    let elapsed = started.elapsed();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    elapsed
}

/// Median, fastest and slowest of `runs` runs of each command, in
/// milliseconds. The commands take turns, a round at a time, so a moment
/// of load on a shared machine slows every figure of a round alike.
fn measure<const N: usize>(runs: usize, commands: [(&Path, &[&str]); N]) -> [(f64, f64, f64); N] {
    let mut times: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(runs));
    for _ in 0..runs {
        for ((home, args), times) in commands.iter().zip(&mut times) {
            times.push(run(home, args));
        }
    }
    times.map(|times| spread(runs, times))
}

/// The median, fastest and slowest of `runs` times, in milliseconds.
fn spread(runs: usize, mut times: Vec<Duration>) -> (f64, f64, f64) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    times.sort();
    (ms(times[runs / 2]), ms(times[0]), ms(times[runs - 1]))
}

fn report(runs: usize, what: &str, (m, lo, hi): (f64, f64, f64), (fm, flo, fhi): (f64, f64, f64)) {
    println!(
        "bench: {what}, whole process (median of {runs}: {lo:.1}–{hi:.1} ms) | {m:.1} ms | baseline seri --version ({flo:.1}–{fhi:.1}) {fm:.1} ms | ratio {:.2}",
        m / fm
    );
}
