//! Resume: what it costs to pick a long session back up, as a whole
//! process, next to reading the same history from a JSONL file.
//!
//! Each run is a fresh child process (this binary again, with `--child`),
//! so time and peak memory are the process's own: open the store, load what
//! the request needs, fold, build the request and send it (the scripted
//! provider answers at once), record the turn. The baseline child reads the
//! same history from a `.jsonl` file, one event per line, and decodes each
//! payload with the decoder seri uses for a row. The children take turns, a
//! round at a time. Every figure is the median of five runs, with the
//! fastest and slowest beside it, and names its goal.
//!
//! Figures:
//! - a 100,000-event session on the compact strategy (compacted, its recap
//!   keeping the newest 400 events), against the JSONL parse: goal ≤ 1.0;
//! - the same session uncompacted on the continue strategy: goal ≤ 1.0;
//! - a compacted 50,000-event session against a compacted 500-event one,
//!   time and memory: goal ≤ 2.0 each;
//! - on PostgreSQL, when `SERI_TEST_POSTGRES_URL` names a database (`cargo
//!   xtask bench` starts a throw-away cluster), a compacted 100,000-event
//!   session against a compacted 500-event one, time: goal ≤ 2.0.
//!
//! `SERI_BENCH_QUICK=1` (`cargo xtask bench --quick`) builds the long
//! sessions at a fifth of their size.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod common;

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use seri_core::{AgentId, EventBody, FrozenPrompt, Message, SessionId};
use seri_prompt::ContextStrategy;
use seri_providers::{ProviderKind, Settings, build_provider};
use seri_runloop::{Lane, Quiet, RunSpec, Runtime, RuntimeParts, RuntimeSettings};
use seri_store::{Profile, SeqRange};
use seri_tools::{PermissionPolicy, Permissions, RunKind, ToolRegistry};

const RUNS: usize = 5;
const KEPT: u64 = 400;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        child(&args[at + 1..]);
        return;
    }
    // SERI_BENCH_KEEP=DIR builds the profiles in DIR, leaves them there and
    // prints how to run one child by hand (`perf record …`).
    if let Some(kept) = std::env::var_os("SERI_BENCH_KEEP") {
        let dir = PathBuf::from(kept);
        let big = Fixture::build(&dir, "big", 100_000);
        let exe = std::env::current_exe().unwrap();
        let exe = exe.display();
        println!("{exe} --child seri {} {} continue", big.root.display(), big.plain);
        println!("{exe} --child seri {} {} compact", big.root.display(), big.compacted);
        println!("{exe} --child jsonl {}", big.jsonl.display());
        return;
    }
    let scale = if std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1") { 5 } else { 1 };
    let dir = tempfile::tempdir().unwrap();
    let big = Fixture::build(dir.path(), "big", 100_000 / scale);
    let mid = Fixture::build(dir.path(), "mid", 50_000 / scale);
    let small = Fixture::build(dir.path(), "small", 500);
    // The fixtures are a hundred megabytes just written: let them reach the
    // disk, so that the kernel writing them back does not slow the runs.
    let _ = std::process::Command::new("sync").status();

    let (big_compacted, big_plain) = (big.compacted.to_string(), big.plain.to_string());
    let (mid_compacted, small_compacted) = (mid.compacted.to_string(), small.compacted.to_string());
    let [jsonl, compact, cont, mid_run, small_run] = runs([
        &["jsonl", path(&big.jsonl)],
        &["seri", path(&big.root), &big_compacted, "compact"],
        &["seri", path(&big.root), &big_plain, "continue"],
        &["seri", path(&mid.root), &mid_compacted, "compact"],
        &["seri", path(&small.root), &small_compacted, "compact"],
    ]);

    let (bigk, midk) = (100 / scale, 50 / scale);
    report(
        &format!("resume a compacted {bigk}k-event session, compact strategy"),
        &compact,
        &format!("jsonl parse of {bigk}k events"),
        &jsonl,
        "1.0",
    );
    report(
        &format!("resume a {bigk}k-event session, continue strategy"),
        &cont,
        &format!("jsonl parse of {bigk}k events"),
        &jsonl,
        "1.0",
    );
    report(&format!("resume compacted, {midk}k events"), &mid_run, "the same at 500 events", &small_run, "2.0");
    report_memory(
        &format!("resume a compacted {bigk}k-event session"),
        &compact,
        &format!("jsonl parse of {bigk}k events"),
        &jsonl,
        "1.0",
    );
    report_memory(
        &format!("resume a {bigk}k-event session, continue strategy"),
        &cont,
        &format!("jsonl parse of {bigk}k events"),
        &jsonl,
        "1.0",
    );
    report_memory(&format!("resume compacted, {midk}k events"), &mid_run, "the same at 500 events", &small_run, "2.0");

    match std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) {
        Some(base) => {
            let long = on_postgres(dir.path(), &base, "pg_big", 100_000 / scale);
            let short = on_postgres(dir.path(), &base, "pg_small", 500);
            let [long_run, short_run] = runs([
                &["seri", path(&long.0), &long.2.to_string(), "compact", &long.1],
                &["seri", path(&short.0), &short.2.to_string(), "compact", &short.1],
            ]);
            report(
                &format!("resume compacted on PostgreSQL, {bigk}k events"),
                &long_run,
                "the same at 500 events",
                &short_run,
                "2.0",
            );
        }
        None => {
            println!("resume on PostgreSQL: skipped (SERI_TEST_POSTGRES_URL is not set; cargo xtask bench sets it)")
        }
    }
}

/// A profile whose store is a fresh schema of the database `base` names,
/// holding one compacted session of `events`: the profile, the store's
/// URL and the session.
fn on_postgres(dir: &Path, base: &str, name: &str, events: u64) -> (PathBuf, String, SessionId) {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let join = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{join}options=-csearch_path%3Dbench_resume_{name}_{nanos}");
    let root = dir.join(name);
    let profile = Profile::at(&root);
    profile.create().unwrap();
    let store = profile.open_store_url(Some(&url), seri_store::StoreOptions::default()).unwrap();
    let agent = store.agent(&AgentId::local());
    let mut seed = agent.new_seed(path(dir));
    seed.system_prompt = Some(FrozenPrompt { text: "You are a benchmark.".into(), ..FrozenPrompt::default() });
    let id = agent.create_session(&seed).unwrap().id;
    common::append_history(&agent, id, events);
    agent.append(id, [EventBody::ContextCompacted(Box::new(common::recap(events, KEPT)))]).unwrap();
    (root, url, id)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// One profile holding the same history twice: once compacted, once not.
struct Fixture {
    root: PathBuf,
    jsonl: PathBuf,
    compacted: SessionId,
    plain: SessionId,
}

impl Fixture {
    fn build(dir: &Path, name: &str, events: u64) -> Self {
        let root = dir.join(name);
        let profile = Profile::at(&root);
        profile.create().unwrap();
        let store = profile.open_store().unwrap();
        let agent = store.agent(&AgentId::local());
        let mut jsonl = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("{name}.jsonl"))).unwrap());
        let mut ids = Vec::new();
        for compacted in [true, false] {
            let mut seed = agent.new_seed(path(dir));
            seed.system_prompt = Some(FrozenPrompt { text: "You are a benchmark.".into(), ..FrozenPrompt::default() });
            let id = agent.create_session(&seed).unwrap().id;
            common::append_history(&agent, id, events);
            if compacted {
                agent.append(id, [EventBody::ContextCompacted(Box::new(common::recap(events, KEPT)))]).unwrap();
                for event in agent.events(id, SeqRange::ALL).unwrap() {
                    let line = serde_json::json!({"seq": event.seq, "type": event.body.kind(), "payload": event.body.to_payload()});
                    writeln!(jsonl, "{line}").unwrap();
                }
            }
            ids.push(id);
        }
        jsonl.flush().unwrap();
        Self { root, jsonl: dir.join(format!("{name}.jsonl")), compacted: ids[0], plain: ids[1] }
    }
}

/// One measured child: its time and its peak resident memory.
#[derive(Clone, Copy)]
struct Sample {
    time: Duration,
    peak_kib: u64,
}

/// Runs each child `RUNS` times, each a fresh process, in turn (one of
/// each, then the next round), so that a machine busy for a moment slows
/// every figure of a round alike rather than one figure's runs.
fn runs<const N: usize>(children: [&[&str]; N]) -> [Vec<Sample>; N] {
    let exe = std::env::current_exe().unwrap();
    let mut samples: [Vec<Sample>; N] = std::array::from_fn(|_| Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        for (args, samples) in children.iter().zip(&mut samples) {
            let out = std::process::Command::new(&exe).arg("--child").args(*args).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            let mut parts = text.split_whitespace();
            let nanos: u64 = parts.next().unwrap().parse().unwrap();
            let peak_kib: u64 = parts.next().unwrap().parse().unwrap();
            samples.push(Sample { time: Duration::from_nanos(nanos), peak_kib });
        }
    }
    samples
}

/// The median, fastest and slowest of `values`.
fn stats(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[0], values[values.len() - 1])
}

fn report(what: &str, runs: &[Sample], baseline: &str, base: &[Sample], goal: &str) {
    let (m, lo, hi) = stats(runs.iter().map(|s| s.time.as_secs_f64() * 1e3).collect());
    let (bm, blo, bhi) = stats(base.iter().map(|s| s.time.as_secs_f64() * 1e3).collect());
    println!(
        "bench: {what}, whole process (median of {RUNS}: {lo:.1}–{hi:.1} ms; goal ≤ {goal}×) | {m:.1} ms | baseline {baseline} ({blo:.1}–{bhi:.1}) {bm:.1} ms | ratio {:.2}",
        m / bm
    );
}

fn report_memory(what: &str, runs: &[Sample], baseline: &str, base: &[Sample], goal: &str) {
    let mib = |s: &Sample| s.peak_kib as f64 / 1024.0;
    let (m, lo, hi) = stats(runs.iter().map(mib).collect());
    let (bm, blo, bhi) = stats(base.iter().map(mib).collect());
    println!(
        "bench: {what}, peak memory (median of {RUNS}: {lo:.1}–{hi:.1} MiB; goal ≤ {goal}×) | {m:.1} MiB | baseline {baseline} ({blo:.1}–{bhi:.1}) {bm:.1} MiB | ratio {:.2}",
        m / bm
    );
}

/// In the child: do the work, then print its time and the process's peak
/// resident memory (VmHWM).
fn child(args: &[String]) {
    let started = Instant::now();
    match args[0].as_str() {
        "jsonl" => parse_jsonl(Path::new(&args[1])),
        _ => resume(Path::new(&args[1]), args[2].parse().unwrap(), &args[3], args.get(4).map(String::as_str)),
    }
    let elapsed = started.elapsed();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0);
    println!("{} {peak}", elapsed.as_nanos());
}

/// The baseline: every line read, and its payload decoded by its type with
/// the decoder seri uses for a row ([`EventBody::from_payload`]): the same
/// work, from a file instead of a database.
fn parse_jsonl(file: &Path) {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        seq: u64,
        #[serde(rename = "type")]
        kind: &'a str,
        #[serde(borrow)]
        payload: &'a serde_json::value::RawValue,
    }
    let reader = std::io::BufReader::new(std::fs::File::open(file).unwrap());
    let mut events = Vec::new();
    for line in reader.lines() {
        let line = line.unwrap();
        let line: Line<'_> = serde_json::from_str(&line).unwrap();
        let body = EventBody::from_payload(line.kind, line.payload.get().as_bytes()).unwrap();
        events.push((line.seq, body));
    }
    std::hint::black_box(events);
}

/// seri: open the profile's store (or the one `url` names), resume the
/// session, one scripted turn.
fn resume(root: &Path, session: SessionId, strategy: &str, url: Option<&str>) {
    let profile = Profile::at(root);
    let store = Arc::new(profile.open_store_url(url, seri_store::StoreOptions::default()).unwrap());
    let script = root.join("script.json");
    std::fs::write(&script, r#"{"turns": [{"text": "Resumed."}]}"#).unwrap();
    let provider =
        build_provider(ProviderKind::Script, "", &Settings { script: Some(script), ..Settings::default() }, &|_| None)
            .unwrap();
    let strategy = if strategy == "compact" { ContextStrategy::Compact } else { ContextStrategy::Continue };
    let runtime = Runtime::new(RuntimeParts {
        store,
        agent: AgentId::local(),
        provider,
        tools: ToolRegistry::with_coding_tools(),
        memory_dir: profile.memory_dir(),
        permissions: Permissions::headless(PermissionPolicy::new()),
        settings: RuntimeSettings {
            strategy,
            // Wide enough that the turn never compacts: the figure is the resume.
            context_window: std::num::NonZeroU64::new(100_000_000),
            ..RuntimeSettings::default()
        },
        session_prompts: None,
    });
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (_cancel_tx, cancel) = tokio::sync::watch::channel(false);
    let event = runtime.post_user_message(session, Message::user("Where were we?")).unwrap();
    runtime.enqueue(RunSpec {
        session_id: session,
        kind: RunKind::Interactive,
        lane: Lane::Interactive,
        user_event_ids: vec![event],
        max_turns: 1,
        message: None,
    });
    let outcomes = tokio.block_on(runtime.drain(&Quiet, &cancel));
    assert_eq!(outcomes[0].result.as_deref(), Some("Resumed."), "{:?}", outcomes[0]);
}
