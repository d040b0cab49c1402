//! Many servers, one database: two `seri serve` processes (each with a
//! profile of its own, as on two machines) on one PostgreSQL database. A
//! WebSocket client of one hears what is written through the other
//! (`LISTEN/NOTIFY`), and a run left by a server killed mid-run is taken
//! over by the other once its claim lapses, its history paired: the
//! message posted once, the interrupted call settled, the answer given.
//! On SQLite (two servers on one file) and PostgreSQL alike, a newer
//! message never gets in ahead of an older one whose server was killed,
//! and a server stopped with SIGTERM hands its message to another.

use std::process::Child;
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as WsMessage;

use crate::serve::{http, serve_with, terminate};
use crate::support::*;

const TOKEN: &str = "sh4red";

/// A server on its own profile, on the shared database `url`.
fn server(url: &str, turns: Value, extra: &[&str]) -> (Env, Child, String) {
    let env = Env::new();
    let script = env.script("s.json", turns);
    // The servers stand for machines that share the database: each is
    // given the other's folders (every test profile's, below the
    // temporary folder), as servers of one team share a project's path.
    let shared = std::env::temp_dir();
    let mut args = vec!["--script", path_str(&script), "--yes", "--run-lease", "2", "--folder", path_str(&shared)];
    args.extend_from_slice(extra);
    let (child, address) = serve_with(&env, &args, TOKEN, &[("SERI_STORE_URL", url)]);
    (env, child, address)
}

fn post(url: &str, path: &str, body: Value) -> (u16, Value) {
    let (status, text) = http(url, "POST", path, Some(TOKEN), Some(&body));
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn events(url: &str, session: &str) -> Vec<Value> {
    let (status, text) = http(url, "GET", &format!("/api/sessions/{session}/events?limit=1000"), Some(TOKEN), None);
    assert_eq!(status, 200, "{text}");
    serde_json::from_str::<Value>(&text).unwrap()["events"].as_array().cloned().unwrap_or_default()
}

/// Waits (bounded, so a broken takeover fails instead of hanging) until
/// `done` holds for the session's events as `url` serves them.
fn wait_for_events(url: &str, session: &str, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let seen = events(url, session);
        if done(&seen) {
            return seen;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}: {seen:#?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn kind(event: &Value) -> &str {
    event["event"]["type"].as_str().unwrap_or("")
}

#[test]
fn a_client_of_one_server_hears_what_is_written_through_another() {
    let Some(url) = fresh_postgres_url() else { return };
    let (_a_env, mut a, a_url) = server(&url, json!([]), &[]);
    let (_b_env, mut b, b_url) = server(&url, json!([text("Answered by B.")]), &[]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let ws_url = format!("{}/api/ws?token={TOKEN}", a_url.replacen("http", "ws", 1));
        let (socket, _) = tokio_tungstenite::connect_async(ws_url).await.unwrap();
        let mut frames = Frames { socket };
        frames.send(json!({"type": "subscribe", "account": true})).await;
        assert_eq!(frames.next().await.unwrap()["type"], "subscribed");

        let (status, created) = post(&b_url, "/api/sessions", json!({"title": "Shared"}));
        assert_eq!(status, 201, "{created}");
        let id = created["session"]["id"].as_str().unwrap().to_owned();
        let heard = frames.until(|f| f["type"] == "account-change").await;
        assert_eq!(heard["reasons"], json!(["session-created"]), "{heard}");
        assert_eq!(heard["sessionIds"], json!([id]));

        frames.send(json!({"type": "subscribe", "sessionId": id})).await;
        frames.until(|f| f["type"] == "subscribed").await;
        let (status, answered) = post(&b_url, &format!("/api/sessions/{id}/messages"), json!({"text": "Hello B"}));
        assert_eq!((status, answered["result"].as_str()), (200, Some("Answered by B.")), "{answered}");
        let change =
            frames.until(|f| f["type"] == "session-change" && f["session"]["lastSeq"].as_u64().unwrap_or(0) >= 2).await;
        assert_eq!(change["sessionId"], id.as_str());
    });
    terminate(&mut a);
    terminate(&mut b);
}

/// A WebSocket client's frames.
struct Frames {
    socket: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
}

impl Frames {
    async fn send(&mut self, frame: Value) {
        self.socket.send(WsMessage::Text(frame.to_string().into())).await.unwrap();
    }

    /// The next frame; a deadline only so a broken server fails the test.
    async fn next(&mut self) -> Option<Value> {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(20), self.socket.next()).await.ok()??.ok()?;
            if let WsMessage::Text(text) = message {
                return serde_json::from_str(text.as_str()).ok();
            }
        }
    }

    /// The first frame `wanted` accepts.
    async fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let frame = self.next().await.expect("the server sent the frame awaited");
            if wanted(&frame) {
                return frame;
            }
        }
    }
}

#[test]
fn a_run_left_by_a_killed_server_is_taken_over_by_another_with_its_history_paired() {
    let Some(url) = fresh_postgres_url() else { return };
    // B starts the run and is killed inside its tool call; A finishes it.
    let slow = json!({"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "sleep 15"}}]});
    let (_b_env, mut b, b_url) = server(&url, json!([slow]), &[]);
    let (_a_env, mut a, a_url) = server(&url, json!([text("Taken over by A.")]), &[]);
    let (status, created) = post(&b_url, "/api/sessions", json!({}));
    assert_eq!(status, 201, "{created}");
    let id = created["session"]["id"].as_str().unwrap().to_owned();
    // A client of A watches the session: it streams B's run through A.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut frames = runtime.block_on(async {
        let ws_url = format!("{}/api/ws?token={TOKEN}", a_url.replacen("http", "ws", 1));
        let (socket, _) = tokio_tungstenite::connect_async(ws_url).await.unwrap();
        let mut frames = Frames { socket };
        frames.send(json!({"type": "subscribe", "sessionId": id})).await;
        frames.until(|f| f["type"] == "subscribed").await;
        frames
    });
    let (status, accepted) =
        post(&b_url, &format!("/api/sessions/{id}/messages"), json!({"text": "Run it", "wait": false}));
    assert_eq!(status, 202, "{accepted}");
    let b_run = accepted["runId"].as_str().unwrap().to_owned();
    let run_event =
        |f: &Value, run: &str, kind: &str| f["type"] == "run-event" && f["runId"] == run && f["event"]["type"] == kind;
    runtime.block_on(frames.until(|f| run_event(f, &b_run, "tool_started")));

    wait_for_events(&a_url, &id, "B's tool call", |seen| seen.iter().any(|e| kind(e) == "tool_call"));
    b.kill().unwrap(); // SIGKILL: B cannot renew its claim, or say anything.
    let _ = b.wait();

    let seen = wait_for_events(&a_url, &id, "A's answer", |seen| {
        seen.iter().any(|e| kind(e) == "message" && e["event"]["content"] == "Taken over by A.")
    });
    // B never said its run ended; A's client is told it did, as the store
    // recorded it, and hears A's run end too: nothing shows B's run running.
    let (ended, a_ended) = runtime.block_on(async {
        let mut heard: Vec<Value> = Vec::new();
        let a_run = |heard: &[Value]| {
            heard.iter().find(|f| f["type"] == "run-event" && f["runId"] != b_run.as_str()).map(|f| f["runId"].clone())
        };
        loop {
            let b_ended = heard.iter().find(|f| run_event(f, &b_run, "run_finished")).cloned();
            let a_ended = a_run(&heard).and_then(|run| {
                heard.iter().find(|f| run_event(f, run.as_str().unwrap_or(""), "run_finished")).cloned()
            });
            if let (Some(b_ended), Some(a_ended)) = (b_ended, a_ended) {
                return (b_ended, a_ended);
            }
            heard.push(frames.next().await.unwrap_or_else(|| panic!("A's client heard no end of B's run: {heard:#?}")));
        }
    });
    assert_eq!(
        (&ended["event"]["status"], &ended["event"]["turns"], &ended["sessionId"]),
        (&json!("interrupted"), &Value::Null, &json!(id)),
        "{ended}"
    );
    assert_eq!(a_ended["event"]["status"], "succeeded", "{a_ended}");
    assert_eq!(a_ended["event"]["result"], "Taken over by A.", "{a_ended}");
    let seqs: Vec<u64> = seen.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "gapless: {seen:#?}");
    let posted: Vec<&Value> =
        seen.iter().filter(|e| kind(e) == "message" && e["event"]["content"] == "Run it").collect();
    assert_eq!(posted.len(), 1, "the message was posted once: {seen:#?}");
    let results: Vec<&Value> =
        seen.iter().filter(|e| kind(e) == "tool_result" && e["event"]["toolCallId"] == "call_1").collect();
    assert_eq!(results.len(), 1, "the interrupted call has exactly one result: {seen:#?}");
    let answer_at = seen.iter().position(|e| e["event"]["content"] == "Taken over by A.").unwrap();
    let result_at = seen.iter().position(|e| kind(e) == "tool_result").unwrap();
    assert!(result_at < answer_at, "the call was settled before the answer: {seen:#?}");
    terminate(&mut a);
}

/// The stores the queue tests run on: an SQLite file two servers share (as
/// two processes of one machine do), and a PostgreSQL database when the
/// tests have one.
fn shared_stores() -> Vec<(String, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite:{}", dir.path().join("shared.db").display());
    let mut stores = vec![(sqlite, Some(dir))];
    stores.extend(fresh_postgres_url().map(|url| (url, None)));
    stores
}

fn message_texts(seen: &[Value]) -> Vec<String> {
    seen.iter()
        .filter(|e| kind(e) == "message")
        .map(|e| e["event"]["content"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn a_newer_message_waits_for_an_older_one_whose_server_was_killed() {
    for (url, _dir) in shared_stores() {
        // B posts X and is killed inside X's tool call. Y, posted to A
        // meanwhile, must not get in first: A takes X over (B's process is
        // gone, so at once), answers it, then answers Y.
        let slow = json!({"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "sleep 30"}}]});
        let (_b_env, mut b, b_url) = server(&url, json!([slow]), &[]);
        let (_a_env, mut a, a_url) = server(&url, json!([text("Answer to X."), text("Answer to Y.")]), &[]);
        let (status, created) = post(&b_url, "/api/sessions", json!({}));
        assert_eq!(status, 201, "{created}");
        let id = created["session"]["id"].as_str().unwrap().to_owned();
        let (status, accepted) =
            post(&b_url, &format!("/api/sessions/{id}/messages"), json!({"text": "X", "wait": false}));
        assert_eq!(status, 202, "{accepted}");
        wait_for_events(&a_url, &id, "B's tool call", |seen| seen.iter().any(|e| kind(e) == "tool_call"));
        b.kill().unwrap();
        let _ = b.wait();

        let (status, answered) = post(&a_url, &format!("/api/sessions/{id}/messages"), json!({"text": "Y"}));
        assert_eq!((status, answered["result"].as_str()), (200, Some("Answer to Y.")), "{answered}");
        let seen = events(&a_url, &id);
        assert_eq!(message_texts(&seen), ["X", "", "Answer to X.", "Y", "Answer to Y."], "{url}: {seen:#?}");
        let seqs: Vec<u64> = seen.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "gapless: {seen:#?}");

        // The job of X records the answer its client never heard.
        let store =
            seri_store::Store::open_url(Some(&url), std::path::Path::new("unused.db"), Default::default()).unwrap();
        let jobs = store.jobs().unwrap();
        let outcomes: Vec<(seri_store::JobStatus, &str)> = jobs
            .iter()
            .map(|j| {
                let outcome = j.outcome.as_ref().unwrap();
                (outcome.status, outcome.result.as_deref().unwrap_or(""))
            })
            .collect();
        let succeeded = seri_store::JobStatus::Succeeded;
        assert_eq!(outcomes, [(succeeded, "Answer to X."), (succeeded, "Answer to Y.")], "{jobs:#?}");
        terminate(&mut a);
    }
}

#[test]
fn a_server_stopped_with_sigterm_hands_its_message_to_another() {
    for (url, _dir) in shared_stores() {
        let slow = json!({"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "sleep 30"}}]});
        let (_b_env, mut b, b_url) = server(&url, json!([slow]), &[]);
        let (_a_env, mut a, a_url) = server(&url, json!([text("Taken over by A.")]), &[]);
        let (status, created) = post(&b_url, "/api/sessions", json!({}));
        assert_eq!(status, 201, "{created}");
        let id = created["session"]["id"].as_str().unwrap().to_owned();
        let waiting = {
            let (b_url, id) = (b_url.clone(), id.clone());
            std::thread::spawn(move || post(&b_url, &format!("/api/sessions/{id}/messages"), json!({"text": "Run it"})))
        };
        wait_for_events(&a_url, &id, "B's tool call", |seen| seen.iter().any(|e| kind(e) == "tool_call"));
        let status = terminate(&mut b);
        assert!(status.success(), "B stops cleanly: {status:?}");
        let (code, told) = waiting.join().unwrap();
        assert_eq!((code, told["error"]["code"].as_str()), (503, Some("handed_over")), "{told}");

        let seen = wait_for_events(&a_url, &id, "A's answer", |seen| {
            seen.iter().any(|e| kind(e) == "message" && e["event"]["content"] == "Taken over by A.")
        });
        assert_eq!(message_texts(&seen), ["Run it", "", "Taken over by A."], "{url}: {seen:#?}");
        // The 503 names the job as a field; any server says what became of it.
        let job = told["error"]["jobId"].as_str().unwrap_or_else(|| panic!("the 503 names no job: {told}"));
        let deadline = Instant::now() + Duration::from_secs(60);
        let done = loop {
            let (status, text) = http(&a_url, "GET", &format!("/api/jobs/{job}"), Some(TOKEN), None);
            assert_eq!(status, 200, "{text}");
            let job: Value = serde_json::from_str(&text).unwrap();
            if job["state"] == "done" {
                break job;
            }
            assert!(Instant::now() < deadline, "the job never ended: {job}");
            std::thread::sleep(Duration::from_millis(100));
        };
        assert_eq!(done["outcome"]["result"], "Taken over by A.", "{done}");
        assert_eq!((done["attempts"].as_u64(), done["outcome"]["status"].as_str()), (Some(0), Some("succeeded")));
        let results: Vec<&str> = seen
            .iter()
            .filter(|e| kind(e) == "tool_result")
            .map(|e| e["event"]["content"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(results.len(), 1, "{seen:#?}");
        assert!(results[0].starts_with("stopped: seri was shutting down"), "not a refusal: {}", results[0]);
        terminate(&mut a);
    }
}

#[test]
fn a_cli_message_waits_behind_one_a_killed_server_accepted() {
    for (url, _dir) in shared_stores() {
        // B accepts X and is killed inside X's tool call; a CLI then sends Z
        // to the session. Z waits: A, started later, answers X first.
        let slow = json!({"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "sleep 30"}}]});
        let (_b_env, mut b, b_url) = server(&url, json!([slow]), &[]);
        let (status, created) = post(&b_url, "/api/sessions", json!({}));
        assert_eq!(status, 201, "{created}");
        let id = created["session"]["id"].as_str().unwrap().to_owned();
        let (status, accepted) =
            post(&b_url, &format!("/api/sessions/{id}/messages"), json!({"text": "X", "wait": false}));
        assert_eq!(status, 202, "{accepted}");
        wait_for_events(&b_url, &id, "B's tool call", |seen| seen.iter().any(|e| kind(e) == "tool_call"));
        b.kill().unwrap();
        let _ = b.wait();

        let cli_env = Env::new();
        let cli_script = cli_env.script("cli.json", json!([text("Answer to Z.")]));
        let cli = cli_env
            .seri()
            // The session was made in the server's folder, not this CLI's.
            .args(["-r", &id, "-p", "Z", "--script", path_str(&cli_script), "--yes", "--allow-other-folder"])
            .args(["--output-format", "json"])
            .env("SERI_STORE_URL", &url)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (_a_env, mut a, a_url) = server(&url, json!([text("Answer to X.")]), &[]);
        let out = cli.wait_with_output().unwrap();
        let told: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(told["result"].as_str(), Some("Answer to Z."), "{told} {}", String::from_utf8_lossy(&out.stderr));
        let seen = events(&a_url, &id);
        assert_eq!(message_texts(&seen), ["X", "", "Answer to X.", "Z", "Answer to Z."], "{url}: {seen:#?}");
        terminate(&mut a);
    }
}

/// A `bash` call that makes `name` in the session's folder.
fn touch(id: &str, name: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "bash", "arguments": {"command": format!("touch {name} && echo made")}}]})
}

/// The content of each `bash` result among `seen`, in order.
fn bash_results(seen: &[Value]) -> Vec<String> {
    seen.iter()
        .filter(|e| kind(e) == "tool_result")
        .map(|e| e["event"]["content"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Whether `result` is that of a write refused by a read-only sandbox:
/// EACCES where Landlock is enforced, else a refusal naming the mode.
fn refused_read_only(result: &str, enforced: bool) -> bool {
    if enforced {
        result.contains("Permission denied")
    } else {
        result.contains("nothing ran: commands run sandboxed (read-only)")
    }
}

#[test]
fn a_sandbox_set_through_one_server_applies_on_another_after_a_restart_and_in_the_cli() {
    let enforced = seri_tools::sandbox::probe(false).is_ok();
    for (url, _dir) in shared_stores() {
        let (a_env, mut a, a_url) = server(&url, json!([]), &[]);
        let (_b_env, mut b, b_url) = server(&url, json!([touch("b1", "by-b"), text("B done.")]), &[]);
        let (status, created) = post(&a_url, "/api/sessions", json!({}));
        assert_eq!(status, 201, "{created}");
        let id = created["session"]["id"].as_str().unwrap().to_owned();
        let path = format!("/api/sessions/{id}/sandbox");
        let (status, body) = http(&a_url, "PUT", &path, Some(TOKEN), Some(&json!({"mode": "read-only"})));
        assert_eq!(status, 200, "{body}");
        // Every server shows it; this file's servers run workspace-write.
        for server_url in [&a_url, &b_url] {
            let (status, body) = http(server_url, "GET", &path, Some(TOKEN), None);
            let shown: Value = serde_json::from_str(&body).unwrap();
            assert_eq!((status, shown["mode"].as_str()), (200, Some("read-only")), "{url}: {body}");
            let (_, body) = http(server_url, "GET", &format!("/api/sessions/{id}"), Some(TOKEN), None);
            let read: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(read["session"]["sandboxMode"], "read-only", "{url}: {body}");
        }

        // (c) The other server runs the session's command under it.
        let (status, answered) = post(&b_url, &format!("/api/sessions/{id}/messages"), json!({"text": "Make it"}));
        assert_eq!((status, answered["result"].as_str()), (200, Some("B done.")), "{answered}");
        let results = bash_results(&events(&b_url, &id));
        assert!(refused_read_only(&results[0], enforced), "{url}: {results:?}");
        terminate(&mut b);

        // (a) A restarted server (the same profile) applies it too.
        terminate(&mut a);
        let script = a_env.script("again.json", json!([touch("a1", "by-a"), text("A done.")]));
        let shared = std::env::temp_dir();
        let args = ["--script", path_str(&script), "--yes", "--run-lease", "2", "--folder", path_str(&shared)];
        let (mut a, a_url) = serve_with(&a_env, &args, TOKEN, &[("SERI_STORE_URL", url.as_str())]);
        let (status, body) = http(&a_url, "GET", &path, Some(TOKEN), None);
        assert_eq!(status, 200, "{body}");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["mode"], "read-only", "{url}: after a restart");
        let (status, answered) = post(&a_url, &format!("/api/sessions/{id}/messages"), json!({"text": "Again"}));
        assert_eq!((status, answered["result"].as_str()), (200, Some("A done.")), "{answered}");
        let results = bash_results(&events(&a_url, &id));
        assert!(refused_read_only(&results[1], enforced), "{url}: {results:?}");
        terminate(&mut a);

        // (b) The CLI resuming the session applies it.
        let cli_env = Env::new();
        let cli_script = cli_env.script("cli.json", json!([touch("c1", "by-cli"), text("CLI done.")]));
        let out = cli_env
            .seri()
            .args(["-r", &id, "-p", "Once more", "--script", path_str(&cli_script), "--yes", "--allow-other-folder"])
            .args(["--output-format", "json"])
            .env("SERI_STORE_URL", &url)
            .output()
            .unwrap();
        let told: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(told["result"].as_str(), Some("CLI done."), "{told} {}", String::from_utf8_lossy(&out.stderr));
        let store =
            seri_store::Store::open_url(Some(&url), std::path::Path::new("unused.db"), Default::default()).unwrap();
        let stored = store.agent(&seri_core::AgentId::local()).events(id.parse().unwrap(), seri_store::SeqRange::ALL);
        let results: Vec<String> = stored
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.body {
                seri_core::EventBody::ToolResult(r) => Some(r.content),
                _ => None,
            })
            .collect();
        assert_eq!(results.len(), 3, "{results:?}");
        assert!(refused_read_only(&results[2], enforced), "{url}: the CLI's call: {results:?}");
        for name in ["by-a", "by-b", "by-cli"] {
            assert!(!a_env.work().join(name).exists(), "{url}: read-only made {name}");
        }
    }
}
