//! `seri sessions list --json` on a profile of 10,000 sessions, as a whole
//! process (start, open the profile, list, print), and on a profile whose
//! 10,000 sessions were imported from a legacy `sessions/` folder that is
//! still there (each file checked against its import record at start).
//! Goal: ≤ 50 ms. The baseline is the process floor, `seri --version`, so
//! the ratio says what listing costs on top of starting. Each figure is the
//! median of 7 runs, with the fastest and slowest; the three commands take
//! turns.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use seri_core::{AgentId, EventBody, FrozenPrompt, Message};
use seri_store::Profile;

const SESSIONS: usize = 10_000;
const RUNS: usize = 7;

fn main() {
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
        for n in 0..SESSIONS {
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
    for n in 0..SESSIONS {
        let line = format!(
            "{{\"role\":\"user\",\"content\":\"old task {n}\"}}\n{{\"role\":\"assistant\",\"content\":\"ok\"}}\n"
        );
        std::fs::write(legacy.join(format!("s{n:05}.jsonl")), line).unwrap();
    }
    run(&legacy_home, &["sessions", "list", "--json"]);
    settle();
    let list = ["sessions", "list", "--json"];
    let [bare, with_legacy, floor] =
        measure([(&home, list.as_slice()), (&legacy_home, list.as_slice()), (&home, ["--version"].as_slice())]);

    report(&format!("seri sessions list --json, {SESSIONS} sessions"), bare, floor);
    report(
        &format!("seri sessions list --json, {SESSIONS} sessions from a legacy folder (stat-checked)"),
        with_legacy,
        floor,
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

/// Median, fastest and slowest of `RUNS` runs of each command, in
/// milliseconds. The commands take turns, a round at a time, so a moment
/// of load on a shared machine slows every figure of a round alike.
fn measure<const N: usize>(commands: [(&Path, &[&str]); N]) -> [(f64, f64, f64); N] {
    let mut times: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        for ((home, args), times) in commands.iter().zip(&mut times) {
            times.push(run(home, args));
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    times.map(|mut times| {
        times.sort();
        (ms(times[RUNS / 2]), ms(times[0]), ms(times[RUNS - 1]))
    })
}

fn report(what: &str, (m, lo, hi): (f64, f64, f64), (fm, flo, fhi): (f64, f64, f64)) {
    println!(
        "bench: {what}, whole process (median of {RUNS}: {lo:.1}–{hi:.1} ms; goal ≤ 50 ms) | {m:.1} ms | baseline seri --version ({flo:.1}–{fhi:.1}) {fm:.1} ms | ratio {:.2}",
        m / fm
    );
}
