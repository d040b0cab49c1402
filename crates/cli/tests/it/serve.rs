//! `seri serve` and `seri token create` through the binary: it listens on a
//! loopback port, writes `server.json`, answers with the profile's
//! configuration, refuses a public address unless told, and stops cleanly on
//! SIGTERM, settling the run in flight.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Env, path_str, text};

/// A plain HTTP/1.1 request over a fresh connection: status and body.
pub(crate) fn http(url: &str, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> (u16, String) {
    let address = url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

/// Starts `seri serve --port 0 ARGS` and returns it with the URL it printed.
pub(crate) fn serve(env: &Env, args: &[&str], token: &str) -> (Child, String) {
    serve_with(env, args, token, &[])
}

/// The same, with extra environment variables. The server's standard
/// error is read as it comes (a full pipe would block the server) and
/// shown with the test's output, so a failing test shows what it said.
#[allow(clippy::print_stderr, reason = "the server's own words, kept with the test's output")]
pub(crate) fn serve_with(env: &Env, args: &[&str], token: &str, vars: &[(&str, &str)]) -> (Child, String) {
    let mut command = env.seri();
    for (k, v) in vars {
        command.env(k, v);
    }
    let mut child = command
        .args(["serve", "--port", "0"])
        .args(args)
        .env("SERI_SERVER_TOKEN", token)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("seri serve: {line}");
        }
    });
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    (child, url)
}

pub(crate) fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let pid = i32::try_from(child.id()).unwrap();
    // SIGTERM, as a service manager or `kill` sends it.
    let status = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "seri serve did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_listens_writes_server_json_answers_and_stops_on_sigterm() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("Served.")]));
    let (mut child, url) = serve(&env, &["--script", path_str(&script)], "t0ken");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(env.home().join("server.json")).unwrap()).unwrap();
    assert_eq!(written, json!({ "url": url, "pid": child.id() }));

    let (status, body) = http(&url, "GET", "/api/health", None, None);
    assert_eq!((status, serde_json::from_str::<Value>(&body).unwrap()["ok"].clone()), (200, json!(true)));
    assert_eq!(http(&url, "GET", "/api/sessions", None, None).0, 401);
    let (status, body) = http(&url, "POST", "/api/sessions", Some("t0ken"), Some(&json!({})));
    assert_eq!(status, 201, "{body}");
    let session = serde_json::from_str::<Value>(&body).unwrap()["session"]["id"].as_str().unwrap().to_owned();
    let (status, body) =
        http(&url, "POST", &format!("/api/sessions/{session}/messages"), Some("t0ken"), Some(&json!({ "text": "Hi" })));
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["result"], "Served.");
    // The same store the CLI reads.
    let thread = env.run(&["thread", &session]);
    assert_eq!(thread.stdout, "[1] user: Hi\n[2] assistant: Served.\n");

    assert!(terminate(&mut child).success(), "a clean stop");
    assert!(!env.home().join("server.json").exists(), "server.json goes with the server");
}

#[test]
fn sigterm_mid_run_settles_the_run_and_hands_its_message_to_the_next_start() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([{ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "echo asked" } }] }]),
    );
    let (mut child, url) = serve(&env, &["--script", path_str(&script)], "t0ken");
    let (_, body) = http(&url, "POST", "/api/sessions", Some("t0ken"), Some(&json!({})));
    let session = serde_json::from_str::<Value>(&body).unwrap()["session"]["id"].as_str().unwrap().to_owned();
    let (status, _) = http(
        &url,
        "POST",
        &format!("/api/sessions/{session}/messages"),
        Some("t0ken"),
        Some(&json!({ "text": "Run it.", "wait": false })),
    );
    assert_eq!(status, 202);
    // The run now waits for someone to answer its bash question.
    let db = env.home().join("seri.db");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !env.run(&["thread", &session]).stdout.contains("tool call bash") {
        assert!(Instant::now() < deadline, "the call was never recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(terminate(&mut child).success());
    let thread = env.run(&["thread", &session]).stdout;
    // Stopped, not refused: the model is told seri stopped, and the
    // message goes back to the queue for the server's next start.
    assert!(thread.contains("tool result bash (error): stopped: seri was shutting down"), "{thread}");
    let db_now = rusqlite::Connection::open(&db).unwrap();
    let status: String = db_now.query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "cancelled");
    let job: (String, Option<String>) =
        db_now.query_row("SELECT state, claimed_by FROM run_jobs", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!(job, ("queued".to_owned(), None), "handed back");

    // Started again, the server answers the message it was stopped on.
    let script = env.script("again.json", json!([text("Answered after the restart.")]));
    let (mut child, _url) = serve(&env, &["--script", path_str(&script)], "t0ken");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !env.run(&["thread", &session]).stdout.contains("Answered after the restart.") {
        assert!(Instant::now() < deadline, "the handed-back message was never answered");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(terminate(&mut child).success());
    let state: String = db_now.query_row("SELECT state FROM run_jobs", [], |r| r.get(0)).unwrap();
    assert_eq!(state, "done");
}

#[test]
fn a_public_address_is_refused_unless_allowed() {
    let env = Env::new();
    let run = env.run(&["serve", "--host", "0.0.0.0", "--port", "0"]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("refusing to listen on 0.0.0.0") && run.stderr.contains("--allow-remote"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_created_token_speaks_for_its_agent_only() {
    let env = Env::new();
    let made = env.run(&["token", "create", "--agent", "ci-bot"]);
    made.expect_code(0);
    let token = made.stdout.trim().to_owned();
    assert!(token.starts_with("seri_") && token.len() == 5 + 64, "{token}");
    env.run(&["token", "create", "--agent", "not ok!"]).expect_code(2);
    let script = env.script("s.json", json!([text("Mine.")]));
    let (mut child, url) = serve(&env, &["--script", path_str(&script)], "t0ken");
    let (_, body) = http(&url, "POST", "/api/sessions", Some("t0ken"), Some(&json!({})));
    let local = serde_json::from_str::<Value>(&body).unwrap()["session"]["id"].as_str().unwrap().to_owned();
    let (status, body) = http(&url, "GET", "/api/sessions", Some(&token), None);
    assert_eq!((status, serde_json::from_str::<Value>(&body).unwrap()["sessions"].clone()), (200, json!([])));
    assert_eq!(http(&url, "GET", &format!("/api/sessions/{local}"), Some(&token), None).0, 404);
    assert!(terminate(&mut child).success());
}

/// A session's folder is data, never a grant: a client's `cwd` outside the
/// server's folders is refused, and a session recorded elsewhere (an
/// import's `/`) does not run, saying which folder and how to allow it.
#[test]
fn a_recorded_folder_is_never_a_grant_on_the_server() {
    let env = Env::new();
    let elsewhere = env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    // A session recorded in another folder, as an import records one.
    let first = env.script("a.json", json!([text("Noted.")]));
    let recorded = env
        .seri()
        .current_dir(&elsewhere)
        .args(["-p", "Hello from elsewhere.", "--script", path_str(&first), "--output-format", "json"])
        .output()
        .unwrap();
    assert!(recorded.status.success(), "{}", String::from_utf8_lossy(&recorded.stderr));
    let recorded: Value = serde_json::from_slice(&recorded.stdout).unwrap();
    let theirs = recorded["session_id"].as_str().unwrap().to_owned();
    let script = env.script("s.json", json!([text("Ran."), text("Ran too.")]));
    let (mut child, url) = serve(&env, &["--script", path_str(&script)], "t0ken");
    let (status, body) = http(&url, "POST", "/api/sessions", Some("t0ken"), Some(&json!({"cwd": "/"})));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("not a folder this server was given") && body.contains("--folder /"), "{body}");
    let posted = json!({"text": "Write everywhere.", "wait": true});
    let (status, body) = http(&url, "POST", &format!("/api/sessions/{theirs}/messages"), Some("t0ken"), Some(&posted));
    let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    assert!(status >= 400 || answer["status"] != "succeeded", "a session of another folder ran: {status} {body}");
    assert!(body.contains("not a folder this server was given"), "{status} {body}");
    assert!(terminate(&mut child).success());
    // Given with --folder, it runs.
    let (mut child, url) = serve(&env, &["--script", path_str(&script), "--folder", path_str(&elsewhere)], "t0ken");
    let (status, body) = http(&url, "POST", &format!("/api/sessions/{theirs}/messages"), Some("t0ken"), Some(&posted));
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["status"], "succeeded", "{body}");
    let made = json!({"cwd": path_str(&elsewhere)});
    assert_eq!(http(&url, "POST", "/api/sessions", Some("t0ken"), Some(&made)).0, 201);
    assert!(terminate(&mut child).success());
}

/// A connection served once (so surely accepted) and then held open.
fn held(url: &str) -> TcpStream {
    let address = url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    stream.write_all(format!("GET /api/health HTTP/1.1\r\nHost: {address}\r\n\r\n").as_bytes()).unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    stream
}

/// What a new connection is answered without sending a byte.
fn refusal(url: &str) -> String {
    let mut stream = TcpStream::connect(url.trim_start_matches("http://")).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[test]
fn the_connection_cap_is_the_flag_else_config_json_and_past_it_a_client_is_told_503() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(env.home().join("config.json"), r#"{"serve": {"maxConnections": 1}}"#).unwrap();
    let script = env.script("s.json", json!([]));
    let (mut child, url) = serve(&env, &["--script", path_str(&script)], "t0ken");
    let _one = held(&url);
    let answer = refusal(&url);
    assert!(answer.starts_with("HTTP/1.1 503") && answer.contains("too_busy"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 1"), "{answer}");
    assert!(terminate(&mut child).success());

    // The flag is over config.json.
    let (mut child, url) = serve(&env, &["--script", path_str(&script), "--max-connections", "2"], "t0ken");
    let (_one, _two) = (held(&url), held(&url));
    assert!(refusal(&url).starts_with("HTTP/1.1 503"));
    assert!(terminate(&mut child).success());

    let zero = env.run(&["serve", "--max-connections", "0"]);
    zero.expect_code(2);
}
