//! A thousand sessions through one `seri serve`, driven from outside: this
//! process is the load client, the server is the real binary in a process
//! of its own, and the model is the scripted provider answering each
//! request after a fixed latency (`delay_ms`), so what is measured is what
//! seri adds on top of a model's own time.
//!
//! For each backend (SQLite, and PostgreSQL when `SERI_TEST_POSTGRES_URL`
//! names a database: `cargo xtask bench` starts a throw-away cluster), the
//! same sessions go through three rounds:
//!
//! - **HTTP**: every session posts its turns one after the other with
//!   `wait` (the answer is the response); the sessions' first messages are
//!   spread over one model latency, so the load offered is steady:
//!   sessions ÷ latency messages per second. The throughput printed is
//!   against the most that schedule allows (each answer the moment its
//!   model's latency is over).
//! - **WebSocket**: the same, posted with `wait: false`; the answer is
//!   learnt from the `run_finished` frame of a socket that follows the
//!   session (a `resync` frame makes that session's client read its job
//!   instead, and is counted).
//! - **Saturation**: a second server whose model answers at once, every
//!   session posting as fast as answers come: the most messages per second.
//!
//! In every round, `SERI_LOAD_SOCKETS` WebSockets (100) watch the sessions,
//! each following its share. Printed per round: throughput, the overhead
//! over the model's latency at p50/p95/p99, the server's CPU per message
//! (and PostgreSQL's processes' CPU), the server's peak RSS, resyncs; then
//! every session's thread is read back: each message answered exactly once.
//! The `bench:` lines hold the figures against the goals (p99
//! overhead ≤ 20 ms, RSS ≤ 200 MiB) and the offered load.
//!
//! Parameters: `SERI_LOAD_SESSIONS` (1,000), `SERI_LOAD_TURNS` (3),
//! `SERI_LOAD_LATENCY_MS` (2,000), `SERI_LOAD_SOCKETS` (100);
//! `SERI_BENCH_QUICK=1` (`cargo xtask bench --quick`) runs 200 sessions of
//! 2 turns.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

const SERI: &str = env!("CARGO_BIN_EXE_seri");
const TOKEN: &str = "load-bench-token";
/// The goals.
const GOAL_P99_MS: f64 = 20.0;
const GOAL_RSS_MIB: f64 = 200.0;

/// What one run of the bench puts through the server.
#[derive(Debug, Clone, Copy)]
struct Load {
    sessions: usize,
    turns: usize,
    latency: Duration,
    sockets: usize,
}

impl Load {
    fn from_env() -> Self {
        let quick = std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1");
        let var = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
        Load {
            sessions: usize::try_from(var("SERI_LOAD_SESSIONS", if quick { 200 } else { 1000 })).unwrap(),
            turns: usize::try_from(var("SERI_LOAD_TURNS", if quick { 2 } else { 3 })).unwrap(),
            latency: Duration::from_millis(var("SERI_LOAD_LATENCY_MS", 2000)),
            sockets: usize::try_from(var("SERI_LOAD_SOCKETS", 100)).unwrap(),
        }
    }
}

/// `seri serve` in a process of its own, on a profile of its own.
struct Server {
    child: Child,
    url: String,
    http: reqwest::Client,
    _home: tempfile::TempDir,
}

impl Server {
    /// A server whose scripted model answers each request after `latency`,
    /// with enough answers for `answers` requests.
    fn start(latency: Duration, answers: usize, connections: usize, store_url: Option<&str>) -> Server {
        let home = tempfile::tempdir().unwrap();
        let delay = u64::try_from(latency.as_millis()).unwrap();
        let turns: Vec<Value> = (0..answers).map(|_| json!({"chunks": ["ok"], "delay_ms": delay})).collect();
        let script = home.path().join("script.json");
        std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
        let mut command = Command::new(SERI);
        command
            .args(["serve", "--port", "0", "--provider", "script", "--script"])
            .arg(&script)
            // Every client of the bench has one address, as behind a load
            // balancer: they may all open their connections at once.
            .args(["--max-unauthenticated-per-client", &connections.to_string()])
            .env("SERI_HOME", home.path())
            .env("HOME", home.path())
            .env("SERI_SERVER_TOKEN", TOKEN)
            .env_remove("SERI_STORE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(url) = store_url {
            command.env("SERI_STORE_URL", url);
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "seri serve said {url:?}");
        let http = reqwest::Client::builder().pool_max_idle_per_host(usize::MAX).build().unwrap();
        Server { child, url, http, _home: home }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let sent = self.http.post(format!("{}{path}", self.url)).bearer_auth(TOKEN).json(&body).send().await;
        let response = sent.unwrap_or_else(|e| panic!("POST {path}: {e:?}"));
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> Value {
        let response = self.http.get(format!("{}{path}", self.url)).bearer_auth(TOKEN).send().await.unwrap();
        response.json().await.unwrap_or(Value::Null)
    }

    async fn sessions(&self, n: usize) -> Vec<String> {
        let mut ids = Vec::with_capacity(n);
        for _ in 0..n {
            let (status, created) = self.post("/api/sessions", json!({})).await;
            assert_eq!(status, 201, "{created}");
            ids.push(created["session"]["id"].as_str().unwrap().to_owned());
        }
        ids
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a watching socket hears of a session its client waits on.
#[derive(Debug)]
enum Heard {
    Finished(Instant),
    Resync,
}

/// The watching sockets: each follows every `sockets`-th session, and
/// tells the session's waiting client what it heard.
struct Watchers {
    frames: Arc<AtomicU64>,
    resyncs: Arc<AtomicU64>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Watchers {
    async fn start(
        server: &Server,
        sessions: &[String],
        sockets: usize,
    ) -> (Watchers, HashMap<String, mpsc::UnboundedReceiver<Heard>>) {
        let (frames, resyncs) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let mut waiting = HashMap::new();
        let mut tasks = Vec::new();
        let url = format!("{}/api/ws?token={TOKEN}", server.url.replacen("http", "ws", 1));
        for socket_index in 0..sockets.max(1) {
            let (mut socket, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
            let mut tell = HashMap::new();
            for (_, id) in sessions.iter().enumerate().filter(|(i, _)| i % sockets.max(1) == socket_index) {
                let frame = json!({"type": "subscribe", "sessionId": id});
                socket.send(Message::Text(frame.to_string().into())).await.unwrap();
                let (sender, receiver) = mpsc::unbounded_channel();
                tell.insert(id.clone(), sender);
                waiting.insert(id.clone(), receiver);
            }
            // Every subscription in force before any message is posted: a
            // run must not finish before its socket hears of it.
            let mut acknowledged = 0;
            while acknowledged < tell.len() {
                let Some(Ok(Message::Text(text))) = socket.next().await else { panic!("a watching socket closed") };
                let frame: Value = serde_json::from_str(text.as_str()).unwrap();
                assert_eq!(frame["type"], "subscribed", "{frame}");
                acknowledged += 1;
            }
            let (frames, resyncs) = (frames.clone(), resyncs.clone());
            tasks.push(tokio::spawn(async move {
                while let Some(Ok(message)) = socket.next().await {
                    let Message::Text(text) = message else { continue };
                    let at = Instant::now();
                    frames.fetch_add(1, Ordering::Relaxed);
                    let Ok(frame) = serde_json::from_str::<Value>(text.as_str()) else { continue };
                    let session = frame["sessionId"].as_str().unwrap_or_default();
                    let heard = match (frame["type"].as_str(), frame["event"]["type"].as_str()) {
                        (Some("run-event"), Some("run_finished")) => Heard::Finished(at),
                        (Some("resync"), _) => {
                            resyncs.fetch_add(1, Ordering::Relaxed);
                            Heard::Resync
                        }
                        _ => continue,
                    };
                    if let Some(sender) = tell.get(session) {
                        let _ = sender.send(heard);
                    }
                }
            }));
        }
        (Watchers { frames, resyncs, tasks }, waiting)
    }
}

impl Drop for Watchers {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The CPU a set of processes used, in seconds: `/proc/PID/stat`'s user and
/// system time.
fn cpu_seconds(pids: &[u32]) -> f64 {
    let ticks: f64 = pids
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|stat| {
            // The fields after the command's name, which may hold spaces.
            let rest = stat.rsplit_once(')')?.1;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            Some(fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?)
        })
        .sum();
    ticks / clock_ticks()
}

fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        let out = Command::new("getconf").arg("CLK_TCK").output().ok();
        out.and_then(|o| String::from_utf8(o.stdout).ok()).and_then(|s| s.trim().parse().ok()).unwrap_or(100.0)
    })
}

/// The PostgreSQL server's processes now running.
fn postgres_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "postgres"))
        .collect()
}

/// The server's peak resident memory, in MiB.
fn peak_rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(f64::NAN);
    kib / 1024.0
}

fn percentile(sorted: &[f64], p: usize) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

/// How one session's client learns that its message was answered.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Transport {
    /// The response of a `wait` post.
    Http,
    /// A watching socket's `run_finished` frame.
    WebSocket,
}

/// What one round measured.
struct Round {
    messages: usize,
    wall: Duration,
    overheads: Vec<f64>,
    server_cpu: f64,
    database_cpu: f64,
    resyncs: u64,
    frames: u64,
}

/// One round: every session posts `load.turns` messages, its first after
/// its share of one latency, each after the answer to the one before.
async fn round(server: &Server, sessions: &[String], load: Load, transport: Transport, postgres: bool) -> Round {
    let (watchers, mut waiting) = Watchers::start(server, sessions, load.sockets).await;
    let database = if postgres { postgres_pids() } else { Vec::new() };
    let (cpu0, db0) = (cpu_seconds(&[server.pid()]), cpu_seconds(&database));
    let start = Instant::now();
    let spread = load.latency;
    let clients = sessions.iter().enumerate().map(|(i, id)| {
        let mut heard = waiting.remove(id).unwrap();
        let offset = spread.mul_f64(i as f64 / sessions.len() as f64);
        async move {
            tokio::time::sleep(offset).await;
            let mut overheads = Vec::with_capacity(load.turns);
            for turn in 0..load.turns {
                let text = format!("message {turn} of session {i}");
                let sent = Instant::now();
                let answered = match transport {
                    Transport::Http => {
                        let (status, answer) =
                            server.post(&format!("/api/sessions/{id}/messages"), json!({ "text": text })).await;
                        assert_eq!((status, answer["status"].as_str()), (200, Some("succeeded")), "{answer}");
                        Instant::now()
                    }
                    Transport::WebSocket => {
                        let body = json!({ "text": text, "wait": false });
                        let (status, accepted) = server.post(&format!("/api/sessions/{id}/messages"), body).await;
                        assert_eq!(status, 202, "{accepted}");
                        match heard.recv().await.unwrap() {
                            Heard::Finished(at) => at,
                            Heard::Resync => {
                                let job = accepted["jobId"].as_str().unwrap().to_owned();
                                loop {
                                    let state = server.get(&format!("/api/jobs/{job}")).await;
                                    if state["state"] == "done" {
                                        break Instant::now();
                                    }
                                    tokio::time::sleep(Duration::from_millis(20)).await;
                                }
                            }
                        }
                    }
                };
                overheads.push((answered - sent).saturating_sub(load.latency).as_secs_f64() * 1000.0);
            }
            overheads
        }
    });
    let mut overheads: Vec<f64> = futures_util::future::join_all(clients).await.into_iter().flatten().collect();
    let wall = start.elapsed();
    overheads.sort_by(f64::total_cmp);
    Round {
        messages: sessions.len() * load.turns,
        wall,
        overheads,
        server_cpu: cpu_seconds(&[server.pid()]) - cpu0,
        // The database's processes started during the round count whole.
        database_cpu: if postgres { cpu_seconds(&postgres_pids()) - db0 } else { 0.0 },
        resyncs: watchers.resyncs.load(Ordering::Relaxed),
        frames: watchers.frames.load(Ordering::Relaxed),
    }
}

/// Reads every session's thread back: each holds `expected` messages of
/// the person's and as many answers, or the bench fails naming the first
/// session that does not.
async fn exactly_once(server: &Server, sessions: &[String], expected: usize) {
    for id in sessions {
        let response = server.http.get(format!("{}/api/sessions/{id}/thread", server.url)).bearer_auth(TOKEN);
        let thread = response.send().await.unwrap().text().await.unwrap();
        let count = |role: &str| thread.lines().filter(|l| l.contains(&format!("] {role}: "))).count();
        assert_eq!(
            (count("user"), count("assistant")),
            (expected, expected),
            "session {id}: every message answered exactly once"
        );
    }
}

fn report(label: &str, load: Load, round: &Round, rss: f64) {
    let rate = round.messages as f64 / round.wall.as_secs_f64();
    let per_message = |seconds: f64| seconds * 1000.0 / round.messages as f64;
    println!(
        "load {label}: {} messages in {:.1} s ({rate:.0}/s); overhead p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms; \
         server CPU {:.2} ms/message, database processes {:.2} ms/message; peak RSS {rss:.0} MiB; \
         {} frames to {} sockets, {} resyncs",
        round.messages,
        round.wall.as_secs_f64(),
        percentile(&round.overheads, 50),
        percentile(&round.overheads, 95),
        percentile(&round.overheads, 99),
        per_message(round.server_cpu),
        per_message(round.database_cpu),
        round.frames,
        load.sockets,
        round.resyncs,
    );
}

fn bench_line(what: &str, value: f64, unit: &str, baseline_what: &str, baseline: f64) {
    let ratio = if baseline > 0.0 { value / baseline } else { f64::NAN };
    println!("bench: {what} | {value:.1} {unit} | baseline {baseline_what} {baseline:.1} {unit} | ratio {ratio:.2}");
}

async fn backend(name: &str, store_url: Option<&str>, load: Load) {
    let postgres = store_url.is_some();
    let what = format!("load {} sessions, {name}", load.sessions);
    // The most this schedule allows: every message answered the moment
    // its model's latency is over.
    let offered = (load.sessions * load.turns) as f64 / (load.latency.as_secs_f64() * (load.turns + 1) as f64);
    // Two rounds of the same sessions on one server, then a saturation round on another.
    let connections = load.sessions + load.sockets + 64;
    let server = Server::start(load.latency, load.sessions * load.turns * 2 + 16, connections, store_url);
    let sessions = server.sessions(load.sessions).await;
    for (done, transport) in [Transport::Http, Transport::WebSocket].into_iter().enumerate() {
        let measured = round(&server, &sessions, load, transport, postgres).await;
        let label = format!("{name}, {transport:?}");
        report(&label, load, &measured, peak_rss_mib(server.pid()));
        exactly_once(&server, &sessions, load.turns * (done + 1)).await;
        let transport = if transport == Transport::Http { "HTTP" } else { "WebSocket" };
        bench_line(
            &format!("{what}, {transport}: p99 overhead"),
            percentile(&measured.overheads, 99),
            "ms",
            "goal",
            GOAL_P99_MS,
        );
        let rate = measured.messages as f64 / measured.wall.as_secs_f64();
        bench_line(&format!("{what}, {transport}: throughput"), rate, "msg/s", "offered", offered);
    }
    bench_line(&format!("{what}: server peak RSS"), peak_rss_mib(server.pid()), "MiB", "goal", GOAL_RSS_MIB);
    drop(server);
    let saturated = Server::start(Duration::ZERO, load.sessions * load.turns + 16, connections, store_url);
    let sessions = saturated.sessions(load.sessions).await;
    let fast = Load { latency: Duration::ZERO, ..load };
    let measured = round(&saturated, &sessions, fast, Transport::Http, postgres).await;
    report(&format!("{name}, saturation"), fast, &measured, peak_rss_mib(saturated.pid()));
    exactly_once(&saturated, &sessions, load.turns).await;
    let rate = measured.messages as f64 / measured.wall.as_secs_f64();
    println!("load {name}, saturation: {rate:.0} messages/s (the issue's goal: 860 on SQLite, 530 on PostgreSQL)");
}

fn main() {
    // A thousand clients and a hundred sockets need more descriptors than
    // a shell's usual 1,024.
    seri_server::raise_descriptor_limit();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let load = Load::from_env();
    println!(
        "load: {} sessions × {} turns, model latency {} ms, {} watching sockets",
        load.sessions,
        load.turns,
        load.latency.as_millis(),
        load.sockets
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        backend("sqlite", None, load).await;
        match std::env::var("SERI_TEST_POSTGRES_URL") {
            Ok(url) => backend("postgresql", Some(&fresh_schema(&url)), load).await,
            Err(_) => println!("load: SERI_TEST_POSTGRES_URL is not set, so no PostgreSQL figures"),
        }
    });
}

/// A schema of its own in the database `url` names (as the tests make
/// theirs), so the bench never reads another run's rows.
fn fresh_schema(url: &str) -> String {
    let join = if url.contains('?') { '&' } else { '?' };
    format!("{url}{join}options=-csearch_path%3Dseri_load_{}", std::process::id())
}
