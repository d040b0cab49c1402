//! Running one schedule for real: a fresh profile, the misbehaving model,
//! `seri serve` processes and clients (API, CLI, REPL) on the store, the
//! drawn faults at their moments; then everything brought back, the queue
//! drained, a probe message per session (successors too), and the store
//! checked.
//!
//! Every wait is bounded, so a schedule ends within its bound whatever
//! seri does; a bound that is hit is itself a violation.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread::Scope;
use std::time::{Duration, Instant};

use serde_json::json;

use super::check::{self, Invariant, Sent, Told, Violation};
use super::http::{self, Reply};
use super::model::{ModelServer, ModelStats};
use super::prng::hash;
use super::schedule::{Action, Backend, ClientKind, ClientPlan, Fault, MessagePlan, Schedule, token};
use super::store;
use crate::postgres::Cluster;

/// The local agent's token on every server.
const TOKEN: &str = "fq-secret-token";
/// Seconds a server's claim on a job lasts: short, so takeovers are quick.
const RUN_LEASE: &str = "2";
/// How long a server may take to print its URL.
const SERVER_START: Duration = Duration::from_secs(30);
/// How long the clients may take after the schedule's span: every request
/// and CLI process ends by then (or is cut off, a time-bound violation).
const CLIENT_BOUND: Duration = Duration::from_secs(120);
/// How long the queue may take to drain once everything is back.
const DRAIN_BOUND: Duration = Duration::from_secs(120);
/// How long a probe may take.
const PROBE_BOUND: Duration = Duration::from_secs(90);

/// What every schedule shares: the binaries, a scratch folder, the cluster.
pub(crate) struct Setup<'a> {
    pub(crate) seri: PathBuf,
    pub(crate) xtask: PathBuf,
    pub(crate) scratch: PathBuf,
    pub(crate) cluster: Option<&'a Cluster>,
}

/// What a schedule came to.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) violations: Vec<Violation>,
    /// The harness itself failed (a server that never started…).
    pub(crate) error: Option<String>,
    pub(crate) elapsed: Duration,
    pub(crate) messages: usize,
    /// Faults that struck (a kill with nothing to kill does not).
    pub(crate) struck: Vec<&'static str>,
    pub(crate) model: ModelStats,
    /// Continuations, compactions, tool calls by tool, REPL messages.
    pub(crate) exercised: BTreeMap<String, u64>,
    pub(crate) dir: PathBuf,
}

/// A server slot: its process and URL while it is up.
#[derive(Default)]
struct Slot {
    child: Option<Child>,
    url: Option<String>,
}

/// A CLI or REPL process that runs now, for `kill -9`.
struct Running {
    pid: u32,
    killed: Arc<AtomicBool>,
}

/// One schedule's processes and shared state.
struct World<'a> {
    setup: &'a Setup<'a>,
    schedule: &'a Schedule,
    dir: PathBuf,
    home: PathBuf,
    work: PathBuf,
    store_url: Option<String>,
    started: Instant,
    servers: Mutex<Vec<Slot>>,
    clis: Mutex<Vec<Running>>,
    log: Mutex<Vec<String>>,
    struck: Mutex<Vec<&'static str>>,
    bound_hit: Mutex<Vec<String>>,
    /// Set once the schedule's faults are over: restarts stop retrying.
    restoring: AtomicBool,
    /// When the clients must be done.
    deadline: Instant,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl World<'_> {
    /// What is left of the clients' time (at least a second).
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now()).max(Duration::from_secs(1))
    }

    fn note(&self, what: impl AsRef<str>) {
        let line = format!("{:>7} ms  {}", self.started.elapsed().as_millis(), what.as_ref());
        lock(&self.log).push(line);
    }

    /// `seri` with a clean environment: the profile, the store, the model's key.
    fn seri(&self) -> Command {
        let mut command = Command::new(&self.setup.seri);
        command
            .current_dir(&self.work)
            .env_clear()
            .env("SERI_HOME", &self.home)
            .env("HOME", &self.dir)
            .env("FQ_KEY", "fq-key")
            .env("NO_COLOR", "1")
            .env("TERM", "dumb");
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        if let Some(url) = &self.store_url {
            command.env("SERI_STORE_URL", url);
        }
        command
    }

    fn err_file(&self, name: &str) -> Stdio {
        File::options()
            .create(true)
            .append(true)
            .open(self.dir.join(name))
            .map(Stdio::from)
            .unwrap_or_else(|_| Stdio::null())
    }

    /// Starts the server of `slot` and waits for its URL.
    fn start_server(&self, slot: usize) -> Result<(), String> {
        let mut child = self
            .seri()
            .args(["serve", "--port", "0", "--run-lease", RUN_LEASE])
            .env("SERI_SERVER_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(self.err_file(&format!("server-{slot}.err")))
            .spawn()
            .map_err(|e| format!("cannot start seri serve: {e}"))?;
        let (tx, rx) = mpsc::channel();
        if let Some(stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                let mut lines = BufReader::new(stdout).lines();
                if let Some(Ok(line)) = lines.next() {
                    let _ = tx.send(line);
                }
                // Drained to the end, so the server never writes into a closed pipe.
                for _ in lines {}
            });
        }
        match rx.recv_timeout(SERVER_START) {
            Ok(url) if url.starts_with("http://127.0.0.1:") => {
                self.note(format!("server {slot} up at {url} (pid {})", child.id()));
                let mut servers = lock(&self.servers);
                if let Some(s) = servers.get_mut(slot) {
                    *s = Slot { child: Some(child), url: Some(url) };
                }
                Ok(())
            }
            other => {
                let _ = child.kill();
                let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                let tail = tail(&self.dir.join(format!("server-{slot}.err")));
                Err(format!("seri serve (slot {slot}) did not start ({other:?}, {status}): {tail}"))
            }
        }
    }

    /// Starts `slot` again, retrying while the store may still be away.
    fn restart_server(&self, slot: usize) {
        for attempt in 0..30 {
            if lock(&self.servers).get(slot).is_some_and(|s| s.child.is_some()) {
                return;
            }
            match self.start_server(slot) {
                Ok(()) => return,
                Err(e) => self.note(format!("restart of server {slot}, attempt {attempt}: {e}")),
            }
            if self.restoring.load(Ordering::SeqCst) && attempt > 5 {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }

    fn urls(&self) -> Vec<String> {
        lock(&self.servers).iter().filter_map(|s| s.url.clone()).collect()
    }

    /// Takes the process out of the `pick`-th server that is up.
    fn take_server(&self, pick: u64) -> Option<(usize, Child)> {
        let mut servers = lock(&self.servers);
        let up: Vec<usize> = (0..servers.len()).filter(|i| servers[*i].child.is_some()).collect();
        let slot = *up.get((pick % up.len().max(1) as u64) as usize)?;
        let child = servers[slot].child.take()?;
        servers[slot].url = None;
        Some((slot, child))
    }

    /// Kills every process the schedule started that still runs.
    fn stop_everything(&self) {
        for running in lock(&self.clis).iter() {
            running.killed.store(true, Ordering::SeqCst);
            kill(running.pid, "-9");
        }
        let children: Vec<(usize, Child)> = {
            let mut servers = lock(&self.servers);
            servers.iter_mut().enumerate().filter_map(|(i, s)| s.child.take().map(|c| (i, c))).collect()
        };
        for (slot, mut child) in children {
            kill(child.id(), "-TERM");
            if !wait_for(&mut child, Duration::from_secs(15)) {
                self.note(format!("server {slot} did not stop on SIGTERM within 15 s; killed"));
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// `kill SIGNAL PID` (the workspace has no unsafe code for libc's kill).
fn kill(pid: u32, signal: &str) {
    let _ = Command::new("kill").args([signal, &pid.to_string()]).stderr(Stdio::null()).status();
}

/// Waits for `child` to exit, up to `bound`.
fn wait_for(child: &mut Child, bound: Duration) -> bool {
    let until = Instant::now() + bound;
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The last lines of a file, on one line.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    check::clip(&lines.into_iter().rev().collect::<Vec<_>>().join(" | "))
}

/// Runs `schedule` and checks what it left.
pub(crate) fn run_schedule(setup: &Setup<'_>, schedule: &Schedule) -> Outcome {
    let started = Instant::now();
    let dir = setup.scratch.join(format!("{}-{:016x}", schedule.backend.name(), schedule.seed));
    let mut outcome = Outcome { dir: dir.clone(), ..Outcome::default() };
    let _ = std::fs::remove_dir_all(&dir);
    let world = World {
        setup,
        schedule,
        home: dir.join("home"),
        work: dir.join("work"),
        dir,
        store_url: setup.cluster.map(|c| format!("{}&options=-csearch_path%3Dfq_{:016x}", c.url, schedule.seed)),
        started,
        servers: Mutex::new((0..schedule.servers).map(|_| Slot::default()).collect()),
        clis: Mutex::new(Vec::new()),
        log: Mutex::new(Vec::new()),
        struck: Mutex::new(Vec::new()),
        bound_hit: Mutex::new(Vec::new()),
        restoring: AtomicBool::new(false),
        deadline: started + Duration::from_millis(schedule.span_ms) + CLIENT_BOUND,
    };
    let result = execute(&world, &mut outcome);
    world.stop_everything();
    if let Err(e) = result {
        outcome.error = Some(e);
    }
    outcome.struck = lock(&world.struck).clone();
    outcome.violations.extend(
        lock(&world.bound_hit).iter().map(|what| Violation { invariant: Invariant::TimeBound, detail: what.clone() }),
    );
    let log = lock(&world.log).join("\n");
    let _ = std::fs::write(world.dir.join("timeline.txt"), format!("{}\n\n{log}\n", schedule.describe()));
    outcome.elapsed = started.elapsed();
    outcome
}

fn execute(world: &World<'_>, outcome: &mut Outcome) -> Result<(), String> {
    let schedule = world.schedule;
    for dir in [&world.home, &world.work] {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    // Compaction needs a window that fills: pad the answers to a quarter of it.
    let filler = schedule.compact_window.map_or(0, |w| (w / 3) as usize);
    let model = ModelServer::start(schedule.seed, schedule.provider_faults, filler)?;
    write_config(world, &model.base_url)?;
    for slot in 0..schedule.servers {
        world.start_server(slot)?;
    }
    let sessions = create_sessions(world)?;
    let store = store::open(world.store_url.as_deref(), &world.home)?;
    let sent: Vec<Sent> = std::thread::scope(|scope| {
        let clients: Vec<_> = schedule
            .clients
            .iter()
            .enumerate()
            .map(|(i, plan)| {
                let session = sessions.get(plan.session).cloned().unwrap_or_default();
                scope.spawn(move || run_client(world, i, plan, &session))
            })
            .collect();
        let faults = scope.spawn(|| strike_faults(world, scope));
        let mut sent = Vec::new();
        for client in clients {
            sent.extend(client.join().unwrap_or_default());
        }
        let _ = faults.join();
        sent
    });
    outcome.messages = sent.len();
    world.note("clients done; bringing everything back");
    restore(world)?;
    drain(world, &store, "after the schedule");
    let mut sent = sent;
    // Every session is probed, successors too: a process killed while it
    // answered in a successor leaves a call there that only the next run
    // of that session settles, and the successor must be usable as well.
    let mut probed = sessions.clone();
    for session in store::read(&store)?.sessions {
        if !probed.contains(&session.id) {
            probed.push(session.id);
        }
    }
    sent.extend(probe(world, &probed));
    drain(world, &store, "after the probes");
    let stored = store::read(&store)?;
    outcome.violations = check::check(&stored, &sent);
    if !outcome.violations.is_empty() {
        // The store as the checker read it (a PostgreSQL cluster is gone
        // after the run), and what each client was told.
        let _ = std::fs::write(world.dir.join("checked.txt"), check::dump(&stored, &sent));
    }
    outcome.exercised = check::exercised(&stored);
    let repl = sent.iter().filter(|s| matches!(&s.told, Told::Repl { killed: false, .. })).count();
    if repl > 0 {
        outcome.exercised.insert("repl messages".to_owned(), repl as u64);
    }
    outcome.model = model.stats();
    Ok(())
}

fn write_config(world: &World<'_>, base_url: &str) -> Result<(), String> {
    let schedule = world.schedule;
    let mut permissions = json!({"bash": "allow"});
    let mut config = json!({
        "provider": "openai-compatible",
        "model": "fq-model",
        "providers": {"openai-compatible": {"baseUrl": base_url, "apiKeyEnv": "FQ_KEY"}},
    });
    if let Some(window) = schedule.compact_window {
        config["context"] = json!({"strategy": "compact", "window": window});
    }
    if schedule.mcp {
        let xtask = world.setup.xtask.display().to_string();
        config["mcpServers"] = json!({"fq": {"command": xtask, "args": ["faults-mcp"]}});
        permissions["mcp__fq__*"] = json!("allow");
    }
    config["permissions"] = permissions;
    let path = world.home.join("config.json");
    std::fs::write(&path, config.to_string()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn create_sessions(world: &World<'_>) -> Result<Vec<String>, String> {
    let url = world.urls().into_iter().next().ok_or("no server is up to create the sessions")?;
    (0..world.schedule.sessions)
        .map(|n| {
            let body = json!({"cwd": world.work.display().to_string(), "title": format!("fault suite {n}")});
            let reply = http::request(&url, "POST", "/api/sessions", TOKEN, Some(&body), Duration::from_secs(30));
            let id = reply.json().and_then(|v| v["session"]["id"].as_str().map(str::to_owned));
            id.ok_or_else(|| format!("cannot create a session: {reply:?}"))
        })
        .collect()
}

/// Sleeps until `at_ms` after the start.
fn sleep_until(world: &World<'_>, at_ms: u64) {
    let at = world.started + Duration::from_millis(at_ms);
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

/// Whether the clients' time is up (then nothing more is sent, and the
/// schedule has broken its time bound).
fn out_of_time(world: &World<'_>) -> bool {
    let over = Instant::now() >= world.deadline;
    if over {
        lock(&world.bound_hit).push("a client still had messages to send at the clients' deadline".into());
    }
    over
}

fn run_client(world: &World<'_>, index: usize, plan: &ClientPlan, session: &str) -> Vec<Sent> {
    sleep_until(world, plan.start_ms);
    match plan.kind {
        ClientKind::Api => plan
            .messages
            .iter()
            .map(|m| {
                std::thread::sleep(Duration::from_millis(m.pause_ms));
                let told =
                    if out_of_time(world) { Told::NotSent("out of time".into()) } else { post(world, session, m) };
                Sent { token: m.token.clone(), session: session.to_owned(), told, probe: false }
            })
            .collect(),
        ClientKind::Cli => plan
            .messages
            .iter()
            .map(|m| {
                std::thread::sleep(Duration::from_millis(m.pause_ms));
                if out_of_time(world) {
                    let told = Told::NotSent("out of time".into());
                    return Sent { token: m.token.clone(), session: session.to_owned(), told, probe: false };
                }
                let text = m.text();
                let (exit, stdout, killed) = world_process(
                    world,
                    &format!("cli-{}.err", m.token),
                    &["-r", session, "-p", &text, "--output-format", "json"],
                    None,
                );
                Sent {
                    token: m.token.clone(),
                    session: session.to_owned(),
                    told: Told::Cli { exit, stdout, killed },
                    probe: false,
                }
            })
            .collect(),
        ClientKind::Repl => {
            let input: String = plan.messages.iter().map(|m| format!("{}\n", m.text())).collect();
            let (exit, stdout, killed) =
                world_process(world, &format!("repl-{index}.err"), &["-r", session], Some(input));
            plan.messages
                .iter()
                .map(|m| Sent {
                    token: m.token.clone(),
                    session: session.to_owned(),
                    told: Told::Repl { exit, stdout: stdout.clone(), killed },
                    probe: false,
                })
                .collect()
        }
    }
}

/// Posts one message to a server that is up (another one if the first
/// refuses the connection: nothing was sent then).
fn post(world: &World<'_>, session: &str, message: &MessagePlan) -> Told {
    let body = json!({"text": message.text(), "wait": message.wait});
    let path = format!("/api/sessions/{session}/messages");
    let until = Instant::now() + Duration::from_secs(10);
    let mut attempt = 0;
    loop {
        let urls = world.urls();
        if urls.is_empty() {
            if Instant::now() > until {
                world.note(format!("{}: no server up to post to", message.token));
                return Told::NotSent("no server was up".into());
            }
            std::thread::sleep(Duration::from_millis(200));
            continue;
        }
        let url = &urls[((hash(&message.token) + attempt) % urls.len() as u64) as usize];
        attempt += 1;
        world.note(format!("{} → {url} (wait {})", message.token, message.wait));
        let reply = http::request(url, "POST", &path, TOKEN, Some(&body), world.left());
        world.note(format!("{} ← {}", message.token, describe_reply(&reply)));
        match &reply {
            Reply::NoAnswer(why) if why.starts_with("connect:") && Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Reply::NoAnswer(why) if why.starts_with("timed out") => {
                lock(&world.bound_hit)
                    .push(format!("{}: no answer from {url} before the clients' deadline", message.token));
                return Told::Api { wait: message.wait, reply };
            }
            _ => return Told::Api { wait: message.wait, reply },
        }
    }
}

fn describe_reply(reply: &Reply) -> String {
    match reply {
        Reply::Answered { status, body } => format!("{status} {}", check::clip(body)),
        Reply::NoAnswer(why) => format!("no answer: {why}"),
    }
}

/// Runs `seri ARGS` (fed `input` on stdin, if any) to its end, up to the
/// client bound; returns its exit code (none when killed), stdout and
/// whether a fault (or the bound) killed it.
fn world_process(world: &World<'_>, err: &str, args: &[&str], input: Option<String>) -> (Option<i32>, String, bool) {
    let spawned = world
        .seri()
        .args(args)
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(world.err_file(err))
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            world.note(format!("cannot start seri {args:?}: {e}"));
            return (None, String::new(), false);
        }
    };
    let killed = Arc::new(AtomicBool::new(false));
    let pid = child.id();
    lock(&world.clis).push(Running { pid, killed: killed.clone() });
    world.note(format!("seri {} (pid {pid})", args.join(" ")));
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    let (tx, rx) = mpsc::channel();
    if let Some(mut stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            let _ = tx.send(text);
        });
    }
    let exited = wait_for(&mut child, world.left());
    if !exited {
        killed.store(true, Ordering::SeqCst);
        lock(&world.bound_hit).push(format!("seri {} did not end before the clients' deadline", args.join(" ")));
        let _ = child.kill();
    }
    let status = child.wait().ok();
    lock(&world.clis).retain(|r| r.pid != pid);
    let stdout = rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    let was_killed = killed.load(Ordering::SeqCst);
    let code = status.and_then(|s| s.code());
    world.note(format!(
        "pid {pid} ended: {code:?}{} {}",
        if was_killed { " (killed)" } else { "" },
        check::clip(&stdout)
    ));
    (if was_killed { None } else { code }, stdout, was_killed)
}

/// Strikes each fault at its moment; outages and restarts run beside it.
fn strike_faults<'scope, 'env>(world: &'scope World<'env>, scope: &'scope Scope<'scope, 'env>) {
    for timed in &world.schedule.faults {
        sleep_until(world, timed.at_ms);
        match timed.fault {
            Fault::KillCli { pick } => {
                let target = {
                    let clis = lock(&world.clis);
                    clis.get((pick % clis.len().max(1) as u64) as usize).map(|r| (r.pid, r.killed.clone()))
                };
                match target {
                    Some((pid, killed)) => {
                        killed.store(true, Ordering::SeqCst);
                        kill(pid, "-9");
                        world.note(format!("FAULT kill -9 cli pid {pid}"));
                        lock(&world.struck).push(timed.fault.name());
                    }
                    None => world.note("FAULT kill -9 cli: none running"),
                }
            }
            Fault::KillServer { pick, restart_after_ms } | Fault::TermServer { pick, restart_after_ms } => {
                let Some((slot, mut child)) = world.take_server(pick) else {
                    world.note(format!("FAULT {}: no server up", timed.fault.name()));
                    continue;
                };
                let term = matches!(timed.fault, Fault::TermServer { .. });
                world.note(format!("FAULT {} {slot} (pid {})", timed.fault.name(), child.id()));
                lock(&world.struck).push(timed.fault.name());
                scope.spawn(move || {
                    if term {
                        kill(child.id(), "-TERM");
                        if !wait_for(&mut child, Duration::from_secs(30)) {
                            world.note(format!("server {slot} did not stop on SIGTERM within 30 s; killed"));
                            let _ = child.kill();
                        }
                    } else {
                        let _ = child.kill();
                    }
                    let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                    world.note(format!("server {slot} ended: {status}"));
                    // Without a drawn restart, the last server still comes
                    // back after a while: clients need one to talk to.
                    let restart = restart_after_ms.or_else(|| world.urls().is_empty().then_some(3_000));
                    if let Some(ms) = restart {
                        std::thread::sleep(Duration::from_millis(ms));
                        world.restart_server(slot);
                    }
                });
            }
            Fault::StoreOutage { ms } => {
                lock(&world.struck).push(timed.fault.name());
                scope.spawn(move || store_outage(world, ms));
            }
            Fault::TerminateBackends => {
                let Some(cluster) = world.setup.cluster else { continue };
                let sql = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                           WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'";
                match cluster.psql(sql) {
                    Ok(()) => {
                        world.note("FAULT terminated every PostgreSQL backend");
                        lock(&world.struck).push(timed.fault.name());
                    }
                    Err(e) => world.note(format!("FAULT terminate backends failed: {e}")),
                }
            }
        }
    }
}

/// The store away for `ms`: SQLite's write lock held by another
/// connection, or the PostgreSQL cluster stopped.
fn store_outage(world: &World<'_>, ms: u64) {
    match (world.schedule.backend, world.setup.cluster) {
        (Backend::Postgres, Some(cluster)) => {
            match cluster.stop() {
                Ok(()) => world.note(format!("FAULT PostgreSQL stopped for {ms} ms")),
                Err(e) => world.note(format!("FAULT stopping PostgreSQL failed: {e}")),
            }
            std::thread::sleep(Duration::from_millis(ms));
            start_cluster(world, cluster);
        }
        _ => {
            let held = store::open(None, &world.home).and_then(|store| {
                world.note(format!("FAULT SQLite write lock held for {ms} ms"));
                store
                    .agent(&seri_core::AgentId::local())
                    .write(|_| {
                        std::thread::sleep(Duration::from_millis(ms));
                        Ok::<(), seri_store::StoreError>(())
                    })
                    .map_err(|e| e.to_string())
            });
            world.note(format!("SQLite write lock released: {held:?}"));
        }
    }
}

fn start_cluster(world: &World<'_>, cluster: &Cluster) {
    for attempt in 0..5 {
        match cluster.start_again() {
            Ok(()) => {
                world.note("PostgreSQL started again");
                return;
            }
            // Already running: another outage started it.
            Err(e) if e.contains("another server might be running") => return,
            Err(e) => world.note(format!("starting PostgreSQL, attempt {attempt}: {e}")),
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Brings every server back (the cluster is back: outages ended in the scope).
fn restore(world: &World<'_>) -> Result<(), String> {
    world.restoring.store(true, Ordering::SeqCst);
    if let Some(cluster) = world.setup.cluster
        && !cluster.is_ready()
    {
        start_cluster(world, cluster);
    }
    for slot in 0..world.schedule.servers {
        if lock(&world.servers).get(slot).is_some_and(|s| s.child.is_none()) {
            world.restart_server(slot);
        }
    }
    if world.urls().len() < world.schedule.servers {
        return Err("could not bring every server back".into());
    }
    Ok(())
}

/// Waits (bounded) until no job is queued or running.
fn drain(world: &World<'_>, store: &seri_store::Store, when: &str) {
    let until = Instant::now() + DRAIN_BOUND;
    loop {
        match store::jobs_pending(store) {
            Ok(0) => return,
            Ok(n) if Instant::now() > until => {
                lock(&world.bound_hit).push(format!("{n} job(s) still pending {DRAIN_BOUND:?} {when}"));
                return;
            }
            Err(e) if Instant::now() > until => {
                lock(&world.bound_hit).push(format!("the queue could not be read {when}: {e}"));
                return;
            }
            _ => std::thread::sleep(Duration::from_millis(300)),
        }
    }
}

/// One fresh message per session (the schedule's own, then every successor
/// made meanwhile), answered without provider faults: every session must
/// still be usable.
fn probe(world: &World<'_>, sessions: &[String]) -> Vec<Sent> {
    std::thread::scope(|scope| {
        let probes: Vec<_> =
            sessions.iter().enumerate().map(|(i, session)| scope.spawn(move || probe_one(world, i, session))).collect();
        probes.into_iter().filter_map(|p| p.join().ok()).collect()
    })
}

fn probe_one(world: &World<'_>, i: usize, session: &str) -> Sent {
    let token = token(world.schedule.seed, 100_000 + i as u64);
    let message = MessagePlan { token: token.clone(), action: Action::Probe, wait: true, pause_ms: 0 };
    let urls = world.urls();
    let reply = match urls.get(i % urls.len().max(1)) {
        Some(url) => {
            let body = json!({"text": message.text(), "wait": true});
            let path = format!("/api/sessions/{session}/messages");
            http::request(url, "POST", &path, TOKEN, Some(&body), PROBE_BOUND)
        }
        None => Reply::NoAnswer("no server is up".into()),
    };
    world.note(format!("probe {token} on {session} ← {}", describe_reply(&reply)));
    if let Reply::NoAnswer(why) = &reply
        && (why.starts_with("timed out"))
    {
        lock(&world.bound_hit).push(format!("the probe of {session} got no answer within {PROBE_BOUND:?}"));
    }
    Sent { token, session: session.to_owned(), told: Told::Api { wait: true, reply }, probe: true }
}
