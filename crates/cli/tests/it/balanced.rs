//! Two `seri serve` processes on one PostgreSQL database behind a real load
//! balancer, Debian's HAProxy: round robin, health-checked on
//! `/api/health`, WebSockets tunnelled. API clients and a headless
//! Chromium reach the servers only through it; the servers are told the
//! balancer's name (`--host-name`), so their `Host` and `Origin` checks
//! pass for what comes through it. One server is killed with SIGKILL inside
//! a run, and the other takes its runs over. Then the fault suite's
//! exactly-once checker reads the database: every accepted message posted
//! once and answered once, every tool call paired, no job stuck, and every
//! session answers a probe afterwards.
//!
//! HAProxy is Debian's `haproxy`: `cargo xtask ci` installs it and sets
//! `SERI_REQUIRE_HAPROXY=1`, so there a missing one fails. Elsewhere the
//! test is skipped without it (a line on stderr says so); without a
//! PostgreSQL URL it does nothing, like every PostgreSQL test; without
//! Chromium it runs without the browser (also said on stderr).

use std::fs::File;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use seri_store::{JobState, Store};

use crate::browser::{self, Browser};
use crate::faults::check::{self, Kind, Sent, Stored, Told};
use crate::faults::http;
use crate::faults::model::ModelServer;
use crate::faults::schedule::{Action, MessagePlan, token};
use crate::faults::store;
use crate::serve::terminate;
use crate::support::{Env, fresh_postgres_url, path_str};

const TOKEN: &str = "b4lanced";
/// The seed of the model's think times and of the messages' tokens.
const SEED: u64 = 35;
/// How long anything the test waits for may take before it fails.
const BOUND: Duration = Duration::from_secs(120);
/// Enter, as WebDriver's code point for it.
const ENTER: &str = "\u{e007}";

/// The balancer's configuration, as the README shows it: `front` is the
/// address it listens on (and the `Host` its health check sends, a name
/// the servers answer to), `servers` each server's name and address.
/// `stats` is the admin socket the test reads the servers' state from.
fn haproxy_config(front: &str, servers: &[(&str, &str)], stats: &Path) -> String {
    let mut config = format!(
        "global
    log stdout format raw local0 info
    stats socket {stats} mode 600 level admin
defaults
    mode http
    log global
    option httplog
    option log-health-checks
    timeout connect 2s
    timeout client  120s            # a message waits for its answer
    timeout server  120s
    timeout tunnel  1h              # WebSockets (/api/ws) stay open
    retries 3
    option redispatch               # a server that refuses: the next one
frontend seri
    bind {front}
    default_backend seri
backend seri
    balance roundrobin
    option httpchk
    http-check send meth GET uri /api/health ver HTTP/1.1 hdr Host {front}
    http-check expect status 200
",
        stats = stats.display()
    );
    for (name, address) in servers {
        config.push_str(&format!("    server {name} {address} check inter 500ms fall 2 rise 2\n"));
    }
    config
}

fn haproxy() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join("haproxy"))
        .find(|p| p.is_file())
}

#[allow(clippy::print_stderr, reason = "the note says why the test did nothing")]
fn haproxy_or_skip() -> Option<PathBuf> {
    let found = haproxy();
    if found.is_none() {
        assert!(
            std::env::var_os("SERI_REQUIRE_HAPROXY").is_none_or(|v| v != "1"),
            "SERI_REQUIRE_HAPROXY=1 but haproxy is not installed (apt-get install haproxy; `cargo xtask ci` installs it)"
        );
        eprintln!("skipped: no haproxy on this machine (apt-get install haproxy; `cargo xtask ci` installs it)");
    }
    found
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One `seri serve`, on a profile of its own (as on a machine of its
/// own), on the shared database; its stderr goes to a file.
struct Server {
    env: Env,
    child: Child,
    /// `127.0.0.1:PORT`.
    address: String,
    killed: bool,
}

impl Server {
    fn start(store_url: &str, model: &ModelServer, front: &str) -> Self {
        let env = Env::new();
        let config = json!({
            "provider": "openai-compatible",
            "model": "fq-model",
            "providers": {"openai-compatible": {"baseUrl": model.base_url, "apiKeyEnv": "FQ_KEY"}},
            "permissions": {"bash": "allow"},
        });
        std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
        let stderr = File::create(env.dir.path().join("serve.err")).unwrap();
        let mut child = env
            .seri()
            .args(["serve", "--port", "0", "--run-lease", "2", "--host-name", front])
            // Each server stands for a machine of the team: every test
            // profile's folder is one they share.
            .args(["--folder", path_str(&std::env::temp_dir())])
            .env("SERI_SERVER_TOKEN", TOKEN)
            .env("SERI_STORE_URL", store_url)
            .env("FQ_KEY", "fq-key")
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = lines.next().and_then(Result::ok).unwrap_or_default();
        // Drained to the end, so the server never writes into a closed pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let mut server = Self { env, child, address: String::new(), killed: false };
        match url.strip_prefix("http://") {
            Some(address) => server.address = address.to_owned(),
            None => panic!("seri serve did not start ({url:?}): {}", server.stderr()),
        }
        server
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.env.dir.path().join("serve.err")).unwrap_or_default()
    }

    /// SIGKILL: the server cannot hand anything over or say a word.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.killed = true;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !self.killed {
            terminate(&mut self.child);
        }
    }
}

/// HAProxy in the foreground on a configuration in a directory of its own,
/// its log (requests, health checks) in a file there; stopped when dropped.
struct Balancer {
    child: Child,
    dir: tempfile::TempDir,
    front: String,
}

/// One server as HAProxy's statistics show it.
#[derive(Debug)]
struct Seen {
    name: String,
    /// `UP`, `DOWN`, …
    status: String,
    /// The last health check's result: `L7OK` when it answered 200.
    check: String,
    /// How many connections it was given.
    sessions: u64,
}

impl Balancer {
    fn start(haproxy: &Path, front: &str, servers: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("haproxy.cfg");
        std::fs::write(&config, haproxy_config(front, servers, &dir.path().join("admin.sock"))).unwrap();
        let checked = Command::new(haproxy).arg("-c").arg("-f").arg(&config).output().unwrap();
        assert!(
            checked.status.success(),
            "haproxy refuses the configuration: {}{}",
            String::from_utf8_lossy(&checked.stdout),
            String::from_utf8_lossy(&checked.stderr)
        );
        let log = File::create(dir.path().join("haproxy.log")).unwrap();
        let child = Command::new(haproxy)
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        Self { child, dir, front: front.to_owned() }
    }

    fn url(&self) -> String {
        format!("http://{}", self.front)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("haproxy.log")).unwrap_or_default()
    }

    /// The servers as `show stat` on the admin socket reports them, or
    /// none while HAProxy is not listening yet.
    fn servers(&self) -> Vec<Seen> {
        let Ok(mut socket) = UnixStream::connect(self.dir.path().join("admin.sock")) else { return Vec::new() };
        let mut csv = String::new();
        if socket.write_all(b"show stat\n").is_err() || socket.read_to_string(&mut csv).is_err() {
            return Vec::new();
        }
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap_or_default().trim_start_matches("# ").split(',').collect();
        let column = |name: &str| header.iter().position(|h| *h == name);
        let (Some(sv), Some(st), Some(ck), Some(stot)) =
            (column("svname"), column("status"), column("check_status"), column("stot"))
        else {
            return Vec::new();
        };
        lines
            .map(|line| line.split(',').collect::<Vec<_>>())
            .filter(|row| row.len() > ck && !matches!(row[sv], "FRONTEND" | "BACKEND"))
            .map(|row| Seen {
                name: row[sv].to_owned(),
                status: row[st].to_owned(),
                check: row[ck].to_owned(),
                sessions: row[stot].parse().unwrap_or(0),
            })
            .collect()
    }

    /// Waits until `done` holds for the servers as HAProxy sees them.
    #[track_caller]
    fn wait_for(&self, what: &str, done: impl Fn(&[Seen]) -> bool) -> Vec<Seen> {
        let deadline = Instant::now() + BOUND;
        loop {
            let seen = self.servers();
            if !seen.is_empty() && done(&seen) {
                return seen;
            }
            assert!(Instant::now() < deadline, "HAProxy never saw {what}: {seen:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the test started. After a failure the balancer's log and each
/// server's stderr are copied to `target/balanced/` and their ends printed.
struct Cluster {
    balancer: Balancer,
    servers: Vec<Server>,
}

impl Drop for Cluster {
    #[allow(clippy::print_stderr, reason = "what a failure leaves, for whoever reads the failure")]
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let kept = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/balanced");
        let _ = std::fs::create_dir_all(&kept);
        let mut files = vec![("haproxy.log".to_owned(), self.balancer.log())];
        for (i, server) in self.servers.iter().enumerate() {
            files.push((format!("server-{}.err", ["a", "b"][i.min(1)]), server.stderr()));
        }
        for (name, text) in files {
            let _ = std::fs::write(kept.join(&name), &text);
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            eprintln!("--- {name} (last lines; all of it in {}) ---", kept.join(&name).display());
            for line in tail.into_iter().rev() {
                eprintln!("{line}");
            }
        }
    }
}

/// The messages of each API client, with the session (an index) they go to:
/// four clients, the last two sharing a session, each sending five
/// messages that run a slow tool, a quick one, or none, some waiting for
/// their answer and some not.
fn client_plans() -> Vec<(usize, Vec<MessagePlan>)> {
    let actions = [Action::SlowBash, Action::Plain, Action::Bash, Action::SlowBash, Action::Plain];
    (0..4u64)
        .map(|c| {
            let messages = (0..5u64)
                .map(|m| MessagePlan {
                    token: token(SEED, c * 16 + m),
                    action: actions[((c + m) % 5) as usize],
                    wait: (c + m) % 2 == 0,
                    pause_ms: 150 * ((c + m) % 3),
                })
                .collect();
            (c.min(2) as usize, messages)
        })
        .collect()
}

/// `POST …/messages` through the balancer; what the client was told.
fn send(url: &str, session: &str, message: &MessagePlan, probe: bool) -> Sent {
    let body = json!({"text": message.text(), "wait": message.wait});
    let reply = http::request(url, "POST", &format!("/api/sessions/{session}/messages"), TOKEN, Some(&body), BOUND);
    Sent {
        token: message.token.clone(),
        session: session.to_owned(),
        told: Told::Api { wait: message.wait, reply },
        probe,
    }
}

fn create_session(url: &str, n: usize) -> String {
    let body = json!({"title": format!("balanced {n}")});
    let reply = http::request(url, "POST", "/api/sessions", TOKEN, Some(&body), BOUND);
    let id = reply.json().and_then(|v| v["session"]["id"].as_str().map(str::to_owned));
    id.unwrap_or_else(|| panic!("cannot create a session through the balancer: {reply:?}"))
}

/// A job inside its tool call (its message posted, the call without a
/// result yet), in `session` if given, and the server that runs it (its
/// process id): killing that server now leaves a run half done for the
/// other to take over.
fn job_inside_a_call(db: &Store, session: Option<&str>) -> Option<(String, String)> {
    let stored = store::read(db).ok()?;
    db.jobs().ok()?.into_iter().find_map(|job| {
        let pid = job.claimed_by.as_deref()?.split(' ').nth(1)?.to_owned();
        let here = session.is_none_or(|s| s == job.session_id.to_string());
        let running = job.state == JobState::Running && job.posted_event_id.is_some();
        (here && running && in_a_call(&stored, &job.session_id.to_string())).then_some((job.id, pid))
    })
}

fn in_a_call(stored: &Stored, session: &str) -> bool {
    let Some(session) = stored.sessions.iter().find(|s| s.id == session) else { return false };
    session.events.iter().any(|e| match &e.kind {
        Kind::Call { id, .. } => {
            !session.events.iter().any(|r| matches!(&r.kind, Kind::Result { call_id } if call_id == id))
        }
        _ => false,
    })
}

/// Waits until the shared queue is drained: no job queued or running.
#[track_caller]
fn drain(db: &Store, when: &str) {
    let deadline = Instant::now() + BOUND;
    loop {
        let pending = store::jobs_pending(db).unwrap();
        if pending == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "{pending} jobs still pending {when}: {:#?}", db.jobs().unwrap());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The browser's side: a session made in the page, messages typed into it.
struct Page {
    browser: Browser,
    session: String,
    url: String,
}

impl Page {
    fn open(url: &str) -> Self {
        let browser = Browser::start();
        browser.sign_in(url, TOKEN);
        browser.click("#new-session");
        browser.wait_for(
            "the new session",
            "location.pathname.startsWith('/s/') && document.querySelector('#composer-input')",
        );
        let path = browser.js("return location.pathname", vec![]);
        let session = path.as_str().unwrap().trim_start_matches("/s/").to_owned();
        Self { browser, session, url: url.to_owned() }
    }

    fn say(&self, message: &MessagePlan) {
        self.browser.type_into("#composer-input", &format!("{}{ENTER}", message.text()));
    }

    /// How many times the transcript shows `token`'s answer, once it shows it.
    #[track_caller]
    fn answers(&self, token: &str) -> u64 {
        let expression = format!(
            "(document.querySelector('.transcript') || {{innerText: ''}}).innerText.split('ack {token}').length - 1"
        );
        let deadline = Instant::now() + BOUND;
        loop {
            let count = self.browser.js(&format!("return {expression}"), vec![]).as_u64().unwrap_or(0);
            if count > 0 {
                return count;
            }
            if Instant::now() > deadline {
                let body = self.browser.js("return document.body ? document.body.innerText : ''", vec![]);
                panic!("the page never showed the answer to {token}; it shows:\n{}", body.as_str().unwrap_or_default());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the page's status line shows no run going (no
    /// `Running bash…`, no `Working…`), as it is, not reloaded.
    #[track_caller]
    fn idle(&self) {
        let status = "document.querySelector('.run-status')";
        let deadline = Instant::now() + BOUND;
        loop {
            let phase = self.browser.js(&format!("return {status} ? {status}.dataset.phase : ''"), vec![]);
            if phase == "idle" {
                return;
            }
            if Instant::now() > deadline {
                let line = self.browser.js(&format!("return {status} ? {status}.textContent : ''"), vec![]);
                panic!("the page still shows a run going ({phase}): {line}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The page drawn again from what the servers hold.
    fn reload(&self) {
        self.browser.goto(&format!("{}/s/{}", self.url, self.session));
        self.browser.wait_for("the reloaded transcript", "document.querySelector('.transcript .msg')");
    }
}

#[test]
fn behind_haproxy_a_killed_servers_runs_are_taken_over_and_every_message_answered_once() {
    let Some(store_url) = fresh_postgres_url() else { return };
    let Some(haproxy) = haproxy_or_skip() else { return };
    let model = ModelServer::start(SEED, 0, 0).unwrap();
    let front = format!("127.0.0.1:{}", free_port());
    let servers = vec![Server::start(&store_url, &model, &front), Server::start(&store_url, &model, &front)];
    let backends: Vec<(&str, &str)> = vec![("a", &servers[0].address), ("b", &servers[1].address)];
    let balancer = Balancer::start(&haproxy, &front, &backends);
    let mut cluster = Cluster { balancer, servers };
    let url = cluster.balancer.url();
    // The health check is one the servers accept: both pass it.
    cluster.balancer.wait_for("both servers pass the health check", |seen| {
        seen.len() == 2 && seen.iter().all(|s| s.status == "UP" && s.check == "L7OK")
    });
    let db = store::open(Some(&store_url), Path::new("unused.db")).unwrap();

    let mut sessions: Vec<String> = (0..3).map(|n| create_session(&url, n)).collect();
    let page = browser::available().then(|| Page::open(&url));
    let browser_messages: Vec<MessagePlan> = [Action::SlowBash, Action::Bash]
        .into_iter()
        .enumerate()
        .map(|(i, action)| MessagePlan { token: token(SEED, 900 + i as u64), action, wait: true, pause_ms: 0 })
        .collect();
    if let Some(page) = &page {
        page.say(&browser_messages[0]);
    }

    let plans = client_plans();
    let (mut sent, taken_over) = std::thread::scope(|scope| {
        let clients: Vec<_> = plans
            .iter()
            .map(|(session, messages)| {
                let (url, session) = (&url, &sessions[*session]);
                scope.spawn(move || {
                    let mut sent = Vec::new();
                    for message in messages {
                        std::thread::sleep(Duration::from_millis(message.pause_ms));
                        sent.push(send(url, session, message, false));
                    }
                    sent
                })
            })
            .collect();

        // The server running the browser's message (or, without a browser,
        // any run) is killed inside the run, mid tool call, while the
        // browser waits for its answer through the balancer.
        let deadline = Instant::now() + BOUND;
        let browser_session = page.as_ref().map(|p| p.session.as_str());
        let (job, pid) = loop {
            if let Some(found) = job_inside_a_call(&db, browser_session) {
                break found;
            }
            assert!(Instant::now() < deadline, "no run reached its tool call: {:#?}", db.jobs().unwrap());
            std::thread::sleep(Duration::from_millis(50));
        };
        let before = cluster.balancer.servers();
        assert!(before.iter().all(|s| s.sessions > 0), "round robin gave each server connections: {before:?}");
        let killed = cluster.servers.iter().position(|s| s.pid() == pid).unwrap();
        cluster.servers[killed].kill();
        let name = ["a", "b"][killed];
        cluster.balancer.wait_for("the killed server down", |seen| {
            seen.iter().any(|s| s.name == name && s.status.starts_with("DOWN"))
        });

        if let Some(page) = &page {
            assert_eq!(page.answers(&browser_messages[0].token), 1);
            page.say(&browser_messages[1]);
            assert_eq!(page.answers(&browser_messages[1].token), 1);
        }
        let sent: Vec<Sent> = clients.into_iter().flat_map(|c| c.join().unwrap()).collect();
        (sent, (job, killed))
    });
    let (taken_over, killed) = taken_over;
    let survivor = cluster.servers[1 - killed].pid();

    drain(&db, "after the clients");
    if let Some(page) = &page {
        sessions.push(page.session.clone());
    }
    for (i, session) in sessions.iter().enumerate() {
        let probe =
            MessagePlan { token: token(SEED, 1_000 + i as u64), action: Action::Probe, wait: true, pause_ms: 0 };
        sent.push(send(&url, session, &probe, true));
    }
    drain(&db, "after the probes");

    let stored = store::read(&db).unwrap();
    let violations = check::check(&stored, &sent);
    assert!(
        violations.is_empty(),
        "{}\n\n{}",
        violations.iter().map(|v| format!("{}: {}", v.invariant.name(), v.detail)).collect::<Vec<_>>().join("\n"),
        check::dump(&stored, &sent)
    );
    // The run the killed server was in was taken over by the other and finished there.
    let jobs = db.jobs().unwrap();
    let job = jobs.iter().find(|j| j.id == taken_over).unwrap();
    let finished_by = job.claimed_by.as_deref().and_then(|c| c.split(' ').nth(1));
    assert_eq!(
        (job.state, job.attempts >= 1, finished_by),
        (JobState::Done, true, Some(survivor.as_str())),
        "{job:#?}"
    );
    assert_eq!(job.outcome.as_ref().map(|o| o.status), Some(seri_store::JobStatus::Succeeded), "{job:#?}");
    // Every message of the browser's is shown answered once, drawn again
    // from the database. Its first send was cut off by the kill (its job is
    // the one taken over): HAProxy closes the browser's kept-alive
    // connection without a word, and the same POST comes again (from
    // Chromium itself, or from the page, which would also post it again
    // after a 502), with the message's `Idempotency-Key`, so the server
    // answers it instead of taking a second message. The page
    // gave nothing back to send again, and, without a reload, shows no run
    // going: the killed server's run never sent its `run_finished`, but the
    // store recorded it `interrupted` when the survivor took its session
    // over, and said so to every server, which told its clients.
    if let Some(page) = &page {
        let draft = page.browser.js("return document.querySelector('#composer-input').value", vec![]);
        assert_eq!(draft, "", "nothing to send again");
        page.idle();
        page.reload();
        for message in &browser_messages {
            assert_eq!(page.answers(&message.token), 1, "{}", message.token);
        }
    }
    drop(page);
    drop(cluster);
}

#[test]
fn a_host_name_given_to_serve_is_answered_and_others_are_still_refused() {
    let env = Env::new();
    let script = env.script("s.json", json!([]));
    let (mut child, url) = crate::serve::serve(
        &env,
        &["--script", path_str(&script), "--host-name", "Balancer.Example:8080", "--host-name", "seri.example"],
        TOKEN,
    );
    let address = url.trim_start_matches("http://");
    let health = |host: &str| {
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        write!(stream, "GET /api/health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response.split_whitespace().nth(1).unwrap_or_default().to_owned()
    };
    // The names given (a name without a port with any port), and its own.
    for host in ["balancer.example:8080", "seri.example", "seri.example:443", address] {
        assert_eq!(health(host), "200", "{host}");
    }
    for host in ["balancer.example:9090", "balancer.example", "evil.example:8080", "127.0.0.1"] {
        assert_eq!(health(host), "421", "{host}");
    }
    terminate(&mut child);

    for (bad, says) in [
        ("http://balancer.example", "is a URL"),
        ("balancer.example:0", "the port after `:`"),
        ("::1", "in brackets"),
        ("", "cannot be empty"),
    ] {
        let run = env.run(&["serve", "--port", "0", "--host-name", bad]);
        assert_eq!(run.code, 2, "{bad}: {run:?}");
        assert!(run.stderr.contains(says), "{bad}: {}", run.stderr);
    }
}
