//! A run whose process was killed never sends its `run_finished`: the
//! store says it ended (`interrupted`) once another run takes its session
//! over, and every server tells its WebSocket clients that watch the
//! session, so nothing shows the dead run running. On SQLite (the server's
//! own commits) and, with `SERI_TEST_POSTGRES_URL`, on PostgreSQL (every
//! server's, through `NOTIFY`).

use std::time::Duration;

use serde_json::{Value, json};
use seri_core::{AgentId, Lane, RunKindName, RunStatus, SessionId};
use seri_server::ServerConfig;
use seri_store::{LeaseOwner, LeaseRequest, RunRecord, Store};

use crate::support::{Server, fresh_postgres_url, text};

/// A process id that no process has now: a child that ran and was reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// What a server killed inside a run leaves in the store: the session's
/// lease held by a process of this host that is gone, and its run
/// recorded `running`.
fn leave_a_dead_run(store: &Store, session: SessionId) -> seri_core::RunId {
    let run = store.new_run_id();
    // A start time no process of that id will have again: gone, even if the id is reused.
    let dead = LeaseOwner { pid: dead_pid(), started: 1, ..LeaseOwner::this_process("killed") };
    let record = RunRecord {
        id: run,
        session_id: session,
        kind: RunKindName::Interactive,
        lane: Lane::Interactive,
        parent_run_id: None,
        status: RunStatus::Running,
        result: None,
        started_at: store.now(),
        finished_at: None,
    };
    store
        .agent(&AgentId::local())
        .write(|tx| {
            let request = LeaseRequest {
                session_id: session,
                run_id: Some(run),
                owner: &dead,
                ticket: None,
                ttl: Duration::from_secs(30),
            };
            tx.try_acquire_lease(&request)?;
            tx.start_run(&record)
        })
        .unwrap();
    run
}

#[tokio::test]
async fn a_client_is_told_that_a_run_whose_process_was_killed_ended_once_another_takes_its_session() {
    told_of_the_dead_run(None).await;
    if let Some(url) = fresh_postgres_url() {
        told_of_the_dead_run(Some(&url)).await;
    }
}

async fn told_of_the_dead_run(url: Option<&str>) {
    let server = Server::on(json!([text("Answered here.")]), ServerConfig::default(), url).await;
    let session = server.session().await;
    let id: SessionId = session.parse().unwrap();
    let dead = leave_a_dead_run(&server.store, id).to_string();
    let mut ws = server.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;

    // The next message's run takes the session from the dead process.
    let answer = server.say(&session, "Are you there?").await;
    assert_eq!((answer["status"].as_str(), answer["result"].as_str()), (Some("succeeded"), Some("Answered here.")));
    let answered = answer["runId"].as_str().unwrap().to_owned();
    let ended =
        |f: &Value, run: &str| f["type"] == "run-event" && f["runId"] == run && f["event"]["type"] == "run_finished";
    let mut frames = Vec::new();
    while !(frames.iter().any(|f| ended(f, &dead)) && frames.iter().any(|f| ended(f, &answered))) {
        let frame = ws.next().await.unwrap_or_else(|| panic!("the socket closed; heard {frames:#?}"));
        frames.push(frame);
    }
    let told: Vec<&Value> = frames.iter().filter(|f| ended(f, &dead)).collect();
    assert_eq!(told.len(), 1, "told once: {frames:#?}");
    let event = &told[0]["event"];
    assert_eq!(
        (&event["status"], &event["run_id"], &event["session_id"], &event["turns"], &event["usage"]),
        (&json!("interrupted"), &json!(dead), &json!(session), &Value::Null, &Value::Null),
        "{event}"
    );
    assert!(event["error"].as_str().is_some_and(|e| e.starts_with("interrupted")), "{event}");
    // What the client was told is what the store holds.
    let run = server.store.agent(&AgentId::local()).read(|r| r.run(dead.parse().unwrap())).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    server.stop().await;
}
