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
