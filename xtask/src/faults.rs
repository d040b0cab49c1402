//! `cargo xtask faults`: the fault-schedule suite. It draws random
//! schedules from a seed (kill -9 of CLIs and servers, SIGTERM, a store
//! that goes away and comes back, a misbehaving model, 2–8 concurrent
//! clients on one session and on several), runs each against real `seri`
//! processes within a time bound, and checks the exactly-once invariants
//! over the store afterwards (`faults/check.rs`). A failing schedule
//! prints its seed and the command that replays it alone.
//!
//! - `schedule.rs` draws a schedule from its seed (pure), with `prng.rs`.
//! - `model.rs` is the misbehaving OpenAI-compatible model server;
//!   `mcp.rs` the MCP server (`xtask faults-mcp`) seri starts for MCP calls.
//! - `run.rs` runs a schedule; `http.rs` is its API clients' HTTP.
//! - `store.rs` reads the store back; `check.rs` finds the violations.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod check;
mod http;
mod mcp;
mod model;
mod prng;
mod run;
mod schedule;
mod store;

use check::Invariant;
use schedule::{Backend, Options, Schedule, schedule_seeds};

pub(crate) const USAGE: &str = "usage: cargo xtask faults [--backend sqlite|postgres|both] [--count N] [--seed S]
                          [--replay SEED] [--no-repl] [--no-mcp] [--keep] [--dry-run]
                          [--time-limit SECS] [--jobs N]

  --backend  the store to run on (default: both; postgres starts a throw-away cluster)
  --count    schedules per backend (default 10; 1000 is the soak)
  --seed     the seed the schedules' seeds are drawn from (default: from the clock)
  --replay   run the one schedule SEED names (as a failing run printed it)
  --no-repl, --no-mcp   draw no REPL clients, no MCP servers
  --keep     keep every schedule's folder (a failing one's is always kept)
  --dry-run  print the schedules the seeds draw, and run nothing
  --time-limit  per backend, start no schedule after SECS seconds (CI's bound)
  --jobs     schedules run at once (default 1); on PostgreSQL each job has a cluster of its own,
             so one schedule's store outage never strikes another's. A schedule mostly waits
             (leases, restarts, the model's pauses): on 2 cores 3 jobs run the soak about
             2-3x faster; more load also makes the moments faults strike land differently";

/// The MCP server seri starts for the suite (`xtask faults-mcp`).
pub(crate) fn mcp_server() -> Result<(), String> {
    mcp::serve_stdio()
}

#[derive(Debug, PartialEq)]
struct Args {
    backends: Vec<Backend>,
    count: u64,
    seed: Option<u64>,
    replay: Option<u64>,
    options: Options,
    keep: bool,
    dry_run: bool,
    /// Per backend, no schedule starts once this much time has passed.
    time_limit: Option<Duration>,
    /// How many schedules run at once.
    jobs: usize,
}

/// A seed as printed (`0x…` hex) or in decimal.
fn parse_seed(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        backends: Backend::ALL.to_vec(),
        count: 10,
        seed: None,
        replay: None,
        options: Options { repl: true, mcp: true },
        keep: false,
        dry_run: false,
        time_limit: None,
        jobs: 1,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value\n\n{USAGE}"));
        match arg.as_str() {
            "--backend" => {
                let v = value("--backend")?;
                parsed.backends =
                    Backend::parse_list(&v).ok_or(format!("--backend: sqlite, postgres or both, not {v}"))?;
            }
            "--count" => {
                let v = value("--count")?;
                parsed.count = v.parse().map_err(|_| format!("--count takes a number, not {v}"))?;
            }
            "--seed" => {
                let v = value("--seed")?;
                parsed.seed = Some(parse_seed(&v).ok_or(format!("--seed takes a number, not {v}"))?);
            }
            "--replay" => {
                let v = value("--replay")?;
                parsed.replay = Some(parse_seed(&v).ok_or(format!("--replay takes a seed, not {v}"))?);
            }
            "--no-repl" => parsed.options.repl = false,
            "--no-mcp" => parsed.options.mcp = false,
            "--keep" => parsed.keep = true,
            "--dry-run" => parsed.dry_run = true,
            "--time-limit" => {
                let v = value("--time-limit")?;
                let secs: u64 = v.parse().map_err(|_| format!("--time-limit takes seconds, not {v}"))?;
                parsed.time_limit = Some(Duration::from_secs(secs));
            }
            "--jobs" => {
                let v = value("--jobs")?;
                parsed.jobs =
                    v.parse().ok().filter(|n| *n >= 1).ok_or(format!("--jobs takes a number from 1, not {v}"))?;
            }
            other => return Err(format!("unknown argument {other}\n\n{USAGE}")),
        }
    }
    Ok(parsed)
}

/// What one backend's schedules came to.
#[derive(Default)]
struct Tally {
    schedules: u64,
    /// Schedules the time limit left out.
    unrun: u64,
    failing: u64,
    errors: u64,
    messages: usize,
    time: Duration,
    violations: BTreeMap<Invariant, u64>,
    struck: BTreeMap<&'static str, u64>,
    provider: BTreeMap<&'static str, u64>,
    requests: u64,
    exercised: BTreeMap<String, u64>,
    /// (seed, first violation or error)
    failed: Vec<(u64, String)>,
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let args = parse(args)?;
    let master = args.seed.unwrap_or_else(clock_seed);
    let seeds = |backend| match args.replay {
        Some(seed) => vec![seed],
        None => schedule_seeds(master, backend, args.count),
    };
    if args.dry_run {
        for backend in &args.backends {
            for seed in seeds(*backend) {
                let schedule = Schedule::draw(seed, *backend, args.options);
                println!("{} 0x{seed:016x}\n  {}\n", backend.name(), schedule.describe().replace('\n', "\n  "));
            }
        }
        return Ok(());
    }
    let seri = build_seri(root)?;
    let xtask = std::env::current_exe().map_err(|e| format!("cannot find the xtask binary: {e}"))?;
    let scratch = std::env::temp_dir().join(format!("seri-faults-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let seri = snapshot(&seri, &scratch)?;
    match args.replay {
        Some(seed) => println!("xtask faults: replaying schedule 0x{seed:016x}"),
        None => println!(
            "xtask faults: {} schedule(s) per backend from seed 0x{master:016x}{} (cargo xtask faults --seed 0x{master:016x} runs them again)",
            args.count,
            if args.jobs > 1 { format!(", {} at once", args.jobs) } else { String::new() },
        ),
    }
    let started = Instant::now();
    let mut tallies: BTreeMap<Backend, Tally> = BTreeMap::new();
    for backend in &args.backends {
        let backend = *backend;
        let seeds = seeds(backend);
        let tally = tallies.entry(backend).or_default();
        let shared = Shared { seri: &seri, xtask: &xtask, scratch: &scratch, args: &args };
        run_backend(&shared, backend, &seeds, |n, schedule, outcome| {
            report_one(schedule, outcome, n, seeds.len());
            tally.add(schedule.seed, outcome);
            if outcome.error.is_none() && outcome.violations.is_empty() && !args.keep {
                let _ = std::fs::remove_dir_all(&outcome.dir);
            }
        })
        .map(|unrun| {
            if unrun > 0 {
                println!("{} time limit reached: {unrun} schedule(s) not run", backend.name());
            }
            tally.unrun += unrun;
        })?;
    }
    let _ = std::fs::remove_file(&seri);
    println!();
    println!("{}", summary(&tallies, started.elapsed()));
    if !args.keep && tallies.values().all(|t| t.failing == 0) {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let failing: u64 = tallies.values().map(|t| t.failing).sum();
    if failing == 0 { Ok(()) } else { Err(format!("{failing} schedule(s) broke an invariant or could not run")) }
}

/// What every job of a run shares.
struct Shared<'a> {
    seri: &'a Path,
    xtask: &'a Path,
    scratch: &'a Path,
    args: &'a Args,
}

/// Runs `seeds`' schedules on `backend`, `args.jobs` at once, handing each
/// outcome to `done` as it comes (with how many have come). Each job has
/// its own cluster on PostgreSQL: a schedule stops and starts its store.
/// The schedules the time limit left out.
fn run_backend(
    shared: &Shared<'_>,
    backend: Backend,
    seeds: &[u64],
    mut done: impl FnMut(usize, &Schedule, &run::Outcome),
) -> Result<u64, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let args = shared.args;
    let next = AtomicUsize::new(0);
    let backend_started = Instant::now();
    let (sender, outcomes) = std::sync::mpsc::channel::<Result<(Schedule, run::Outcome), String>>();
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.min(seeds.len()) {
            let sender = sender.clone();
            let next = &next;
            scope.spawn(move || {
                let cluster = match backend {
                    Backend::Postgres => match crate::postgres::Cluster::start_durable() {
                        Ok(cluster) => Some(cluster),
                        Err(e) => {
                            let _ = sender.send(Err(e));
                            return;
                        }
                    },
                    Backend::Sqlite => None,
                };
                let setup = run::Setup {
                    seri: shared.seri.to_owned(),
                    xtask: shared.xtask.to_owned(),
                    scratch: shared.scratch.to_owned(),
                    cluster: cluster.as_ref(),
                };
                loop {
                    if args.time_limit.is_some_and(|limit| backend_started.elapsed() >= limit) {
                        return;
                    }
                    let Some(seed) = seeds.get(next.fetch_add(1, Ordering::SeqCst)) else { return };
                    let schedule = Schedule::draw(*seed, backend, args.options);
                    let outcome = run::run_schedule(&setup, &schedule);
                    if sender.send(Ok((schedule, outcome))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(sender);
        let mut n = 0;
        let mut failure = None;
        for outcome in outcomes {
            match outcome {
                Ok((schedule, outcome)) => {
                    n += 1;
                    done(n, &schedule, &outcome);
                }
                Err(e) => failure = Some(e),
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok((seeds.len() - n) as u64),
        }
    })
}

impl Tally {
    fn add(&mut self, seed: u64, outcome: &run::Outcome) {
        self.schedules += 1;
        self.messages += outcome.messages;
        self.time += outcome.elapsed;
        self.requests += outcome.model.requests;
        for (name, n) in &outcome.model.faults {
            *self.provider.entry(name).or_default() += n;
        }
        for (what, n) in &outcome.exercised {
            *self.exercised.entry(what.clone()).or_default() += n;
        }
        for name in &outcome.struck {
            *self.struck.entry(name).or_default() += 1;
        }
        for v in &outcome.violations {
            *self.violations.entry(v.invariant).or_default() += 1;
        }
        if let Some(e) = &outcome.error {
            self.errors += 1;
            self.failed.push((seed, format!("harness: {}", check::clip(e))));
        } else if let Some(v) = outcome.violations.first() {
            self.failed.push((seed, format!("{}: {}", v.invariant.name(), check::clip(&v.detail))));
        }
        if outcome.error.is_some() || !outcome.violations.is_empty() {
            self.failing += 1;
        }
    }
}

/// Builds `seri` (the binary under test) and returns its path.
fn build_seri(root: &Path) -> Result<PathBuf, String> {
    println!("xtask faults: cargo build -p seri");
    let status = Command::new(crate::cargo())
        .args(["build", "--quiet", "-p", "seri"])
        .current_dir(root)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build -p seri failed ({status})"));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    Ok(target.join("debug").join("seri"))
}

/// A copy of the binary under test in `scratch`, so a build of the
/// workspace during a long run (another `cargo` on the same target
/// folder) cannot change which seri the schedules run.
fn snapshot(seri: &Path, scratch: &Path) -> Result<PathBuf, String> {
    let copy = scratch.join("seri");
    std::fs::copy(seri, &copy).map_err(|e| format!("cannot copy {} to {}: {e}", seri.display(), copy.display()))?;
    Ok(copy)
}

fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    prng::derive(nanos as u64, u64::from(std::process::id()))
}

fn report_one(schedule: &Schedule, outcome: &run::Outcome, n: usize, of: usize) {
    let backend = schedule.backend.name();
    let seconds = outcome.elapsed.as_secs_f64();
    let struck = if outcome.struck.is_empty() { "no fault struck".to_owned() } else { outcome.struck.join(", ") };
    let provider: u64 = outcome.model.faults.values().sum();
    if outcome.error.is_none() && outcome.violations.is_empty() {
        println!(
            "{backend} {n}/{of}  0x{:016x}  ok  {seconds:.1} s, {} messages, {struck}, {provider} provider faults",
            schedule.seed, outcome.messages
        );
        return;
    }
    println!("{backend} {n}/{of}  0x{:016x}  FAILED  {seconds:.1} s, {struck}", schedule.seed);
    if let Some(e) = &outcome.error {
        println!("    harness: {e}");
    }
    for v in &outcome.violations {
        println!("    {}: {}", v.invariant.name(), v.detail);
    }
    println!("    schedule: {}", schedule.describe().replace('\n', "\n              "));
    println!("    kept: {} (timeline.txt, server-*.err, home/logs/seri.log)", outcome.dir.display());
    println!("    replay: cargo xtask faults --replay 0x{:016x} --backend {backend}", schedule.seed);
}

/// The summary, like a bench's: one row a backend, then violations per
/// invariant, faults struck, and the failing seeds.
fn summary(tallies: &BTreeMap<Backend, Tally>, total: Duration) -> String {
    let mut rows: Vec<Vec<String>> = vec![
        [
            "backend",
            "schedules",
            "failing",
            "harness errors",
            "not run",
            "messages",
            "model requests",
            "time",
            "per schedule",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for (backend, t) in tallies {
        let mean = if t.schedules == 0 { 0.0 } else { t.time.as_secs_f64() / t.schedules as f64 };
        rows.push(vec![
            backend.name().to_owned(),
            t.schedules.to_string(),
            t.failing.to_string(),
            t.errors.to_string(),
            t.unrun.to_string(),
            t.messages.to_string(),
            t.requests.to_string(),
            format!("{:.0} s", t.time.as_secs_f64()),
            format!("{mean:.1} s"),
        ]);
    }
    let mut out = vec![table(&rows), String::new()];
    let mut rows =
        vec![std::iter::once("violations".to_owned()).chain(tallies.keys().map(|b| b.name().to_owned())).collect()];
    for invariant in Invariant::ALL {
        rows.push(
            std::iter::once(invariant.name().to_owned())
                .chain(tallies.values().map(|t| t.violations.get(&invariant).copied().unwrap_or(0).to_string()))
                .collect(),
        );
    }
    out.push(table(&rows));
    out.push(String::new());
    for (backend, t) in tallies {
        let list = |m: &BTreeMap<&str, u64>| {
            if m.is_empty() {
                "none".to_owned()
            } else {
                m.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
            }
        };
        out.push(format!("{} faults struck: {}", backend.name(), list(&t.struck)));
        out.push(format!("{} provider faults: {}", backend.name(), list(&t.provider)));
        let exercised: BTreeMap<&str, u64> = t.exercised.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        out.push(format!("{} exercised: {}", backend.name(), list(&exercised)));
    }
    let failed: Vec<String> = tallies
        .iter()
        .flat_map(|(b, t)| {
            t.failed.iter().map(move |(seed, why)| {
                format!("  cargo xtask faults --replay 0x{seed:016x} --backend {}  # {why}", b.name())
            })
        })
        .collect();
    if !failed.is_empty() {
        out.push(String::new());
        out.push("failing schedules (replay each alone; what it draws is the same, its timing may differ):".to_owned());
        out.extend(failed);
    }
    out.push(String::new());
    out.push(format!("xtask faults: {:.0} s in all", total.as_secs_f64()));
    out.join("\n")
}

fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
            cells.join("  ").trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, String> {
        parse(&list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn arguments() {
        let a = args(&["--backend", "sqlite", "--count", "3", "--seed", "0x10", "--no-repl"]).unwrap();
        assert_eq!(a.backends, [Backend::Sqlite]);
        assert_eq!((a.count, a.seed, a.replay, a.options.repl, a.options.mcp), (3, Some(16), None, false, true));
        let r = args(&["--replay", "12", "--backend", "both"]).unwrap();
        assert_eq!((r.replay, r.backends.len()), (Some(12), 2));
        assert!(args(&["--backend", "mysql"]).is_err());
        assert!(args(&["--count"]).is_err());
        assert!(args(&["--frobnicate"]).is_err());
        assert_eq!(args(&["--jobs", "3"]).unwrap().jobs, 3);
        assert_eq!(args(&[]).unwrap().jobs, 1);
        assert!(args(&["--jobs", "0"]).is_err());
    }

    #[test]
    fn the_summary_lists_every_invariant_per_backend() {
        let mut tallies = BTreeMap::new();
        let mut t = Tally { schedules: 2, failing: 1, ..Tally::default() };
        t.violations.insert(Invariant::Answered, 3);
        t.failed.push((0xab, "answered: FQ-x was never answered".to_owned()));
        tallies.insert(Backend::Sqlite, t);
        tallies.insert(Backend::Postgres, Tally::default());
        let text = summary(&tallies, Duration::from_secs(5));
        for invariant in Invariant::ALL {
            assert!(text.contains(invariant.name()), "{text}");
        }
        assert!(text.lines().any(|l| l.starts_with("answered ") && l.split_whitespace().nth(1) == Some("3")), "{text}");
        assert!(text.contains("cargo xtask faults --replay 0x00000000000000ab --backend sqlite"), "{text}");
    }
}
