//! Two servers on one PostgreSQL database, in one process: any server
//! serves any client. A WebSocket client of server B streams a run server
//! A runs and answers its question through B; B lists the question while
//! it waits, and no more once it is answered.

use serde_json::{Value, json};
use seri_server::ServerConfig;

use crate::support::{Server, fresh_postgres_url, text};

/// A fresh schema on the suite's PostgreSQL database, or `None` (skip)
/// when there is none and none is required.
#[allow(clippy::print_stderr, reason = "the note says why the test did nothing")]
fn shared_database() -> Option<String> {
    let url = fresh_postgres_url();
    if url.is_none() {
        let required = std::env::var_os("SERI_REQUIRE_POSTGRES").is_some_and(|v| v == "1");
        assert!(!required, "SERI_REQUIRE_POSTGRES=1 but SERI_TEST_POSTGRES_URL is not set: run `cargo xtask postgres`");
        eprintln!("skipped: two servers need one PostgreSQL database (run `cargo xtask postgres test`)");
    }
    url
}

fn bash(id: &str, command: &str) -> Value {
    json!({ "tool_calls": [{ "id": id, "name": "bash", "arguments": { "command": command } }] })
}

#[tokio::test]
async fn a_client_of_one_server_streams_a_run_another_runs_and_answers_its_question() {
    let Some(url) = shared_database() else { return };
    let turns = json!([bash("b1", "echo allowed"), text("Done.")]);
    let a = Server::on(turns.clone(), ServerConfig::default(), Some(&url)).await;
    let b = Server::on(turns, ServerConfig::default(), Some(&url)).await;
    let session = a.session().await;
    let mut ws = b.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;

    // A runs the message it was sent; B's client hears the run and its question.
    let waiting = a.say(&session, "Run it.");
    let answering = async {
        let frames = ws.collect_until(|f| f["type"] == "approval-requested").await;
        let streamed: Vec<&Value> = frames.iter().filter(|f| f["type"] == "run-event").collect();
        assert!(!streamed.is_empty(), "B's client streams A's run: {frames:?}");
        let asked = frames.last().unwrap().clone();
        assert_eq!((asked["callId"].as_str(), asked["tool"].as_str()), (Some("b1"), Some("bash")));
        assert_eq!(asked["arguments"], json!({ "command": "echo allowed" }));
        let run = asked["runId"].as_str().unwrap().to_owned();
        assert!(streamed.iter().all(|f| f["runId"] == run.as_str()), "{streamed:?}");

        // B lists the question A's run asks, and answers it there.
        let listed = b.get_json(&format!("/api/sessions/{session}/approvals")).await;
        assert_eq!(listed["approvals"], json!([asked]));
        let wrong = b.post(&format!("/api/runs/{run}/approvals/nope"), json!({ "allow": true })).send().await.unwrap();
        assert_eq!(wrong.status(), 404, "no server has that question");
        let answered = b.post_json(&format!("/api/runs/{run}/approvals/b1"), json!({ "allow": true })).await;
        assert_eq!(answered, json!({ "answered": true }));
        run
    };
    let (answer, run) = tokio::join!(waiting, answering);
    assert_eq!(answer["result"], "Done.");
    assert_eq!(answer["runId"], run.as_str());
    let thread = b.thread(&session).await;
    assert!(thread.contains("tool result bash: exit code: 0\n  stdout:\n  allowed"), "{thread}");

    // The question waits no more, on B either.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let listed = b.get_json(&format!("/api/sessions/{session}/approvals")).await;
        if listed == json!({ "approvals": [] }) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "B still lists an answered question: {listed}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let again = b.post(&format!("/api/runs/{run}/approvals/b1"), json!({ "allow": true })).send().await.unwrap();
    assert_eq!(again.status(), 404, "an answered question is answered once");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_post_retried_on_another_server_is_answered_when_the_store_tells_its_job_ended() {
    let Some(url) = shared_database() else { return };
    // No poll worth the name: only the store telling that A's job ended
    // can end B's wait in time.
    let config = ServerConfig { job_poll: std::time::Duration::from_secs(3600), ..ServerConfig::default() };
    let turns = json!([bash("b1", "echo allowed"), text("Done.")]);
    let a = Server::on(turns.clone(), config.clone(), Some(&url)).await;
    let b = Server::on(turns, config, Some(&url)).await;
    let session = a.session().await;
    let mut ws = a.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;
    let path = format!("/api/sessions/{session}/messages");
    let body = json!({ "text": "Run it." });
    let post = |server: &Server| server.post(&path, body.clone()).header("Idempotency-Key", "k-1").send();

    // A runs the message; its run waits on a question until it is answered.
    let first = post(&a);
    let rest = async {
        let asked = ws.collect_until(|f| f["type"] == "approval-requested").await.pop().unwrap();
        // The client lost A's answer and posts again, to B: B waits on A's job.
        let before = b.store.work().unwrap();
        let again = post(&b);
        let answer = async {
            // B found the job under the key, and read it again once listening.
            while b.store.work().unwrap().transactions < before.transactions + 2 {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            // Time for a poll to show itself: reading the job on a timer
            // would count more reads the longer the run takes; told, B
            // reads it as often whatever the run takes.
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            let run = asked["runId"].as_str().unwrap();
            a.post_json(&format!("/api/runs/{run}/approvals/b1"), json!({ "allow": true })).await
        };
        let (again, answered) = tokio::join!(again, answer);
        assert_eq!(answered, json!({ "answered": true }));
        (again.unwrap(), b.store.work().unwrap() - before)
    };
    let (first, (again, waited)) = tokio::join!(first, rest);
    let first = first.unwrap();
    assert_eq!((first.status().as_u16(), again.status().as_u16()), (200, 200));
    let (first, again): (Value, Value) = (first.json().await.unwrap(), again.json().await.unwrap());
    assert_eq!(first["result"], "Done.", "{first}");
    assert_eq!(again, first, "B answers what A answered");
    // B read the job three times: found under its key, read again once
    // listening, and once more when the store told it ended.
    assert_eq!(waited.transactions, 3, "{waited:?}");
    a.stop().await;
    b.stop().await;
}
