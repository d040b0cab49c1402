//! A PostgreSQL server that goes away and comes back: a CLI run whose
//! database restarts while a tool runs records the tool's result once the
//! database is back (it is not lost to a failed run and settled later as
//! "interrupted"), and the session's lease does not outlive the outage.
//!
//! The cluster is this test's own (initdb into a temporary folder), so
//! stopping it disturbs no other test; it runs wherever the PostgreSQL
//! half of the suite runs (`SERI_TEST_POSTGRES_URL` set).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// A PostgreSQL cluster of one test, stopped and removed when dropped.
struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    as_postgres: bool,
    options: String,
    url: String,
}

impl Cluster {
    fn start() -> Cluster {
        let bin = find_bin().expect("PostgreSQL's initdb and pg_ctl (the PostgreSQL half of the suite needs them)");
        let as_postgres = rustix::process::geteuid().is_root();
        let dir = tempfile::tempdir().unwrap();
        if as_postgres {
            assert!(Command::new("chown").arg("postgres:postgres").arg(dir.path()).status().unwrap().success());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let options = format!("-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off", dir.path().display());
        let url = format!("postgres://seri@127.0.0.1:{port}/postgres");
        let cluster = Cluster { bin, dir, as_postgres, options, url };
        let data = cluster.data();
        cluster
            .pg("initdb", &["-D", &data, "-U", "seri", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"]);
        cluster.start_again();
        cluster
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn start_again(&self) {
        let log = self.dir.path().join("log").display().to_string();
        self.pg("pg_ctl", &["-D", &self.data(), "-o", &self.options, "-l", &log, "-w", "start"]);
    }

    /// Every connection cut at once, as a crash or a restart does.
    fn stop(&self) {
        self.pg("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }

    fn pg(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap();
        assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// One of PostgreSQL's programs, run as `postgres` when the tests run as root.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        command.current_dir(self.dir.path()).stdin(Stdio::null());
        command
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.command("pg_ctl").args(["-D", &self.data(), "-m", "immediate", "-w", "stop"]).output();
    }
}

fn find_bin() -> Option<PathBuf> {
    let has = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|dir| has(dir))
        .collect();
    versions.sort();
    versions.pop().or_else(|| std::env::split_paths(&std::env::var_os("PATH")?).find(|dir| has(dir)))
}

fn store_events(url: &str) -> Vec<seri_core::Event> {
    let store = seri_store::Store::open_url(Some(url), Path::new("unused.db"), Default::default()).unwrap();
    let agent = store.agent(&seri_core::AgentId::local());
    let Some(session) = agent.most_recent_session(None).unwrap() else { return Vec::new() };
    agent.events(session.id, seri_store::SeqRange::ALL).unwrap()
}

/// A headless seri on `cluster`'s database (`--yes`, JSON out) whose model
/// calls `bash` with `command` and then says `answer`: each call runs it
/// with more arguments. The set-up every outage test of a run shares.
fn headless_with_a_slow_tool<'a>(
    env: &'a Env,
    cluster: &'a Cluster,
    command: &str,
    answer: &str,
) -> impl Fn(&[&str]) -> std::process::Child + 'a {
    let call = json!({"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": command}}]});
    let script = env.script("s.json", json!([call, text(answer)]));
    move |args: &[&str]| {
        env.seri()
            .args(["--script", path_str(&script), "--yes", "--output-format", "json"])
            .args(args)
            .env("SERI_STORE_URL", &cluster.url)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

/// Waits (a minute at most) until the run's tool call is recorded: the
/// moment to take the database away while the tool runs.
fn wait_for_the_tool_call(url: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !store_events(url).iter().any(|e| matches!(e.body, seri_core::EventBody::ToolCall(_))) {
        assert!(Instant::now() < deadline, "the tool call was never recorded");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_cli_run_outlives_its_database_restarting_while_a_tool_runs() {
    if postgres_url().is_none() {
        return;
    }
    let cluster = Cluster::start();
    let env = Env::new();
    let run = headless_with_a_slow_tool(&env, &cluster, "sleep 3; echo done", "Survived.");
    let child = run(&["-p", "Run the slow thing"]);
    // The database goes away while the tool runs, and comes back after the
    // tool has finished: its result waits for the database.
    wait_for_the_tool_call(&cluster.url);
    cluster.stop();
    std::thread::sleep(Duration::from_secs(5));
    cluster.start_again();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let told: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!((out.status.code(), told["result"].as_str()), (Some(0), Some("Survived.")), "{told} {stderr}");
    let results: Vec<String> = store_events(&cluster.url)
        .into_iter()
        .filter_map(|e| match e.body {
            seri_core::EventBody::ToolResult(r) => Some(r.content),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].contains("done"), "the finished tool's own result, not `interrupted`: {}", results[0]);

    // Nothing was left holding the session: the next run has it at once.
    let out = run(&["-c", "--no-wait", "-p", "Again?"]).wait_with_output().unwrap();
    let told: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!((out.status.code(), told["status"].as_str()), (Some(0), Some("succeeded")), "{told}");
}

/// A database that goes away for longer than a run waits for it
/// (`STORE_OUTAGE_PATIENCE`, a minute): the run fails, and the CLI still
/// answers a script reading its JSON with which session and why; once the
/// database is back nothing holds the session.
#[test]
fn a_cli_run_whose_database_stays_away_fails_with_its_report_and_holds_nothing() {
    if postgres_url().is_none() {
        return;
    }
    let cluster = Cluster::start();
    let env = Env::new();
    let run = headless_with_a_slow_tool(&env, &cluster, "sleep 1; echo done", "Unreached.");
    let mut child = run(&["-p", "Run the slow thing"]);
    wait_for_the_tool_call(&cluster.url);
    let session = store_events(&cluster.url)[0].session_id;
    cluster.stop();
    // Bounded: a CLI that never gives up fails the test instead of hanging it.
    let deadline = Instant::now() + Duration::from_secs(300);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the CLI was still waiting for the database after five minutes");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let told: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(1), "{told} {stderr}");
    assert_eq!(told["status"], "failed", "{told} {stderr}");
    assert_eq!(told["session_id"], session.to_string(), "{told}");
    let error = told["error"].as_str().unwrap_or_default();
    assert!(error.contains("PostgreSQL") || error.contains("database"), "the error names the store: {told}");

    // Back again: nothing holds the session, and the next run answers.
    cluster.start_again();
    let out = run(&["-c", "--no-wait", "-p", "Again?"]).wait_with_output().unwrap();
    let told: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(told["status"], "succeeded", "{told} {}", String::from_utf8_lossy(&out.stderr));
}
