//! The server under load: 50 concurrent clients send 20 messages each to 10
//! sessions over real HTTP on 127.0.0.1 (1,000 turns with the scripted
//! model), next to the same 1,000 turns submitted in-process to a runtime by
//! 50 concurrent tasks. Both do the whole work of a message: wait for the
//! session, post, build the request, call the model, record the answer.
//!
//! Printed: requests per second, and the 99th percentile of one message's
//! latency, each against its in-process baseline on the same backend:
//! SQLite, and PostgreSQL when `SERI_TEST_POSTGRES_URL` names a database
//! (`cargo xtask bench` starts a throw-away cluster for it). Then the
//! issue's figure: PostgreSQL's requests per second against SQLite's, in
//! the same run (goal ≥ 0.5×).
//!
//! Each figure is the median of 5 rounds; `SERI_BENCH_QUICK=1` (`cargo
//! xtask bench --quick`) runs 2.
//!
//! `SERI_BENCH_PROFILE=FILE` also appends to FILE, for each HTTP round,
//! where the time went: every `tracing` span the server, the queue, the
//! run loop and the store open (count, total and longest wall time, from
//! creation to close) and every event (count), by name.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code, unreachable_pub)]
#[path = "../tests/it/support.rs"]
mod support;

/// The test suite checks every answer against the OpenAPI document
/// (`tests/it/document.rs`); the benchmark measures the server alone.
mod document {
    pub(crate) type Findings = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

    pub(crate) fn checking(app: axum::Router, _findings: Findings) -> axum::Router {
        app
    }

    pub(crate) fn check_server_frame(_frame: &serde_json::Value) {}
}

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use seri_core::{FrozenPrompt, Message, SessionId};
use seri_runloop::{Command, Lane, Quiet};

const CLIENTS: usize = 50;
const MESSAGES: usize = 20;
const SESSIONS: usize = 10;

fn script() -> Value {
    Value::Array((0..CLIENTS * MESSAGES).map(|i| json!({ "text": format!("answer {i}") })).collect())
}

fn p99(mut latencies: Vec<Duration>) -> Duration {
    latencies.sort();
    latencies[(latencies.len() * 99 / 100).min(latencies.len() - 1)]
}

async fn over_http(url: Option<&str>, backend: &str) -> (f64, Duration) {
    let server = support::Server::on(script(), seri_server::ServerConfig::default(), url).await;
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(server.session().await);
    }
    profile::reset();
    let start = Instant::now();
    let clients = (0..CLIENTS).map(|c| {
        let (server, session) = (&server, sessions[c % SESSIONS].clone());
        async move {
            let mut latencies = Vec::new();
            for m in 0..MESSAGES {
                let sent = Instant::now();
                let answer = server.say(&session, &format!("client {c} message {m}")).await;
                assert_eq!(answer["status"], "succeeded");
                latencies.push(sent.elapsed());
            }
            latencies
        }
    });
    let latencies: Vec<Duration> = futures_util::future::join_all(clients).await.into_iter().flatten().collect();
    let elapsed = start.elapsed();
    profile::dump(&format!("{backend} over HTTP, {:.0} req/s", (CLIENTS * MESSAGES) as f64 / elapsed.as_secs_f64()));
    server.stop().await;
    ((CLIENTS * MESSAGES) as f64 / elapsed.as_secs_f64(), p99(latencies))
}

async fn in_process(url: Option<&str>) -> (f64, Duration) {
    let (_dir, runtime, cwd) = support::scripted_runtime_on(script(), url);
    let prompt = FrozenPrompt { text: "You are a test agent.".into(), files: Vec::new(), tools: Vec::new() };
    let sessions: Vec<SessionId> =
        (0..SESSIONS).map(|_| runtime.create_session(&cwd, prompt.clone()).unwrap().id).collect();
    let start = Instant::now();
    let tasks = (0..CLIENTS).map(|c| {
        let (runtime, session) = (runtime.clone(), sessions[c % SESSIONS]);
        tokio::spawn(async move {
            let mut latencies = Vec::new();
            for m in 0..MESSAGES {
                let sent = Instant::now();
                let message = Message::user(format!("client {c} message {m}"));
                let command = Command::Send { session_id: session, message, lane: Lane::Interactive, max_turns: None };
                runtime.submit(command, &Quiet).await.unwrap();
                latencies.push(sent.elapsed());
            }
            latencies
        })
    });
    let latencies: Vec<Duration> =
        futures_util::future::join_all(tasks).await.into_iter().flat_map(Result::unwrap).collect();
    ((CLIENTS * MESSAGES) as f64 / start.elapsed().as_secs_f64(), p99(latencies))
}

/// The median, lowest and highest of `values`.
fn spread(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[0], values[values.len() - 1])
}

/// On the runtime `seri serve` runs on.
fn main() {
    seri_server::runtime().unwrap().block_on(measure());
}

async fn measure() {
    profile::install();
    let rounds = if std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1") { 2 } else { 5 };
    let sqlite = bench_on("SQLite", rounds, || None).await;
    if std::env::var("SERI_TEST_POSTGRES_URL").is_ok_and(|u| !u.is_empty()) {
        let postgres = bench_on("PostgreSQL", rounds, support::fresh_postgres_url).await;
        println!(
            "bench: server throughput, PostgreSQL against SQLite, {CLIENTS} clients x {MESSAGES} messages on {SESSIONS} sessions (median of {rounds}; goal ≥ 0.5×) | {postgres:.0} req/s | baseline the same on SQLite {sqlite:.0} req/s | ratio {:.2}",
            postgres / sqlite
        );
    } else {
        println!("server load on PostgreSQL: skipped (SERI_TEST_POSTGRES_URL is not set; cargo xtask bench sets it)");
    }
}

/// `rounds` rounds of each, alternating, every round on fresh stores of
/// `backend`; the median requests per second over HTTP.
async fn bench_on(backend: &str, rounds: usize, fresh: impl Fn() -> Option<String>) -> f64 {
    let (mut rates, mut p99s, mut base_rates, mut base_p99s) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (baseline_rate, baseline_p99) = in_process(fresh().as_deref()).await;
        let (rate, latency) = over_http(fresh().as_deref(), backend).await;
        base_rates.push(baseline_rate);
        base_p99s.push(baseline_p99.as_secs_f64() * 1000.0);
        rates.push(rate);
        p99s.push(latency.as_secs_f64() * 1000.0);
    }
    let ((rate, rlo, rhi), (base, blo, bhi)) = (spread(rates), spread(base_rates));
    let ((p99, plo, phi), (bp99, bplo, bphi)) = (spread(p99s), spread(base_p99s));
    let what = format!("{backend}, {CLIENTS} clients x {MESSAGES} messages on {SESSIONS} sessions");
    println!(
        "bench: server throughput, {what} (median of {rounds}: {rlo:.0}–{rhi:.0} req/s) | {rate:.0} req/s | baseline in-process submits ({blo:.0}–{bhi:.0}) {base:.0} req/s | ratio {:.2}",
        rate / base
    );
    println!(
        "bench: server p99 latency, {what} (median of {rounds}: {plo:.1}–{phi:.1} ms) | {p99:.1} ms | baseline in-process p99 ({bplo:.1}–{bphi:.1}) {bp99:.1} ms | ratio {:.2}",
        p99 / bp99
    );
    rate
}

/// Where a round's wall time went, by `tracing` span (see the module's
/// documentation): installed only when `SERI_BENCH_PROFILE` names a file.
mod profile {
    use std::collections::BTreeMap;
    use std::io::Write as _;
    use std::sync::{Mutex, OnceLock};
    use std::time::{Duration, Instant};

    use tracing::span::{Attributes, Id};
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::{Context, SubscriberExt as _};
    use tracing_subscriber::registry::LookupSpan;

    /// Per name: how many, their total and their longest wall time.
    type Table = BTreeMap<String, (u64, Duration, Duration)>;

    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();

    /// When the round started, and this process's CPU time then.
    static STARTED: Mutex<Option<(Instant, Duration)>> = Mutex::new(None);

    /// This process's CPU time (user and system) so far, from `/proc`.
    fn cpu() -> Duration {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
        // utime and stime are the 14th and 15th fields; 100 ticks a second.
        Duration::from_millis((ticks(11) + ticks(12)) * 10)
    }

    struct Timings;

    impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Timings {
        fn on_new_span(&self, _: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
            if let Some(span) = ctx.span(id) {
                span.extensions_mut().insert(Instant::now());
            }
        }

        fn on_close(&self, id: Id, ctx: Context<'_, S>) {
            let Some(span) = ctx.span(&id) else { return };
            let Some(took) = span.extensions().get::<Instant>().map(Instant::elapsed) else { return };
            add(format!("span  {}", span.name()), took);
            // The store's work also by the step of a message it was for.
            if span.name().starts_with("store.") || span.name().starts_with("pg.") {
                let step =
                    span.scope().skip(1).map(|s| s.name()).find(|n| n.starts_with("job.") || n.starts_with("run."));
                add(format!("span  {} in {}", span.name(), step.unwrap_or("-")), took);
            }
        }

        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let meta = event.metadata();
            add(format!("event {}:{}", meta.file().unwrap_or("?"), meta.line().unwrap_or(0)), Duration::ZERO);
        }
    }

    fn add(name: String, took: Duration) {
        let Some(table) = TABLE.get() else { return };
        let mut table = table.lock().unwrap();
        let row = table.entry(name).or_default();
        row.0 += 1;
        row.1 += took;
        row.2 = row.2.max(took);
    }

    pub(crate) fn install() {
        if std::env::var_os("SERI_BENCH_PROFILE").is_none() {
            return;
        }
        TABLE.get_or_init(Mutex::default);
        // seri's own spans and events, at every level: the libraries' own are noise here.
        let ours = tracing_subscriber::filter::filter_fn(|meta| meta.target().starts_with("seri"));
        let subscriber = tracing_subscriber::registry().with(Timings.with_filter(ours));
        tracing::subscriber::set_global_default(subscriber).unwrap();
    }

    pub(crate) fn reset() {
        if let Some(table) = TABLE.get() {
            table.lock().unwrap().clear();
            *STARTED.lock().unwrap() = Some((Instant::now(), cpu()));
        }
    }

    pub(crate) fn dump(label: &str) {
        let (Some(table), Some(path)) = (TABLE.get(), std::env::var_os("SERI_BENCH_PROFILE")) else { return };
        let table = std::mem::take(&mut *table.lock().unwrap());
        let (wall, busy) = STARTED.lock().unwrap().map(|(at, cpu0)| (at.elapsed(), cpu() - cpu0)).unwrap_or_default();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let mut out = format!(
            "== {label}: {:.1} s wall, {:.1} s CPU in this process; load {}\n",
            wall.as_secs_f64(),
            busy.as_secs_f64(),
            load.trim()
        );
        out += &format!("{:>8} {:>10} {:>9} {:>9}  name\n", "count", "total ms", "mean ms", "max ms");
        for (name, (count, total, max)) in &table {
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            out += &format!(
                "{count:>8} {:>10.1} {:>9.3} {:>9.1}  {name}\n",
                ms(*total),
                ms(*total) / (*count).max(1) as f64,
                ms(*max)
            );
        }
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
        file.write_all(out.as_bytes()).unwrap();
    }
}
