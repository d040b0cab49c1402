//! The shared queue as one server works it: a job waiting for its turn in
//! its session looks at the store again when a job of *its* session ends
//! here, not when any job does, counted on PostgreSQL
//! ([`seri_store::Store::work`]).

use std::time::{Duration, Instant};

use serde_json::json;
use seri_server::ServerConfig;

use crate::support::{Server, fresh_postgres_url};

/// How often a waiting job looks at the store at most, whatever rings:
/// the queue's poll, clamped (`crates/runloop/src/jobs.rs`).
const LOOK_EVERY: Duration = Duration::from_millis(250);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_of_another_session_ending_do_not_wake_a_sessions_waiting_jobs() {
    let Some(url) = fresh_postgres_url() else { return };
    const WAITING: usize = 3;
    const ANSWERED: usize = 6;
    // B's answers while nothing waits, then the request that hangs (session
    // A's first message, until cancelled), then B's answers while A's wait,
    // then A's waiting ones.
    let answer = |i: usize| json!({ "text": format!("answer {i}") });
    let mut turns: Vec<_> = (0..=ANSWERED).map(answer).collect();
    turns.push(json!({ "text": "Thinking it over", "hang": true }));
    turns.extend((0..ANSWERED + WAITING).map(answer));
    let server = Server::on(json!(turns), ServerConfig::default(), Some(&url)).await;
    let (a, b) = (server.session().await, server.session().await);
    // Whoever watches A hears B's changes in both phases alike.
    let mut watcher = server.ws().await;
    watcher.subscribe(json!({ "type": "subscribe", "sessionId": a })).await;
    // What B's messages cost while nothing waits.
    server.say(&b, "warm up").await;
    let alone = {
        let before = server.store.work().unwrap();
        for i in 0..ANSWERED {
            server.say(&b, &format!("alone {i}")).await;
        }
        server.store.work().unwrap() - before
    };
    let server = std::sync::Arc::new(server);
    let first = {
        let (server, a) = (server.clone(), a.clone());
        tokio::spawn(async move {
            server.post(&format!("/api/sessions/{a}/messages"), json!({ "text": "first" })).send().await
        })
    };
    // A's first message has its model's request (the hanging turn)…
    watcher.collect_until(|f| f["type"] == "run-event" && f["event"]["type"] == "text_delta").await;
    // …and WAITING more wait behind it.
    let waiting: Vec<_> = (0..WAITING)
        .map(|i| {
            let (server, a) = (server.clone(), a.clone());
            let post = server.post(&format!("/api/sessions/{a}/messages"), json!({ "text": format!("then {i}") }));
            tokio::spawn(async move { post.send().await })
        })
        .collect();
    while server.store.jobs().unwrap().len() < 1 + WAITING {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // B's messages, one after the other, while A's wait.
    let (before, started) = (server.store.work().unwrap(), Instant::now());
    for i in 0..ANSWERED {
        server.say(&b, &format!("message {i}")).await;
    }
    let (work, took) = (server.store.work().unwrap() - before, started.elapsed());
    // B's jobs cost what they cost alone; A's waiting jobs look only at
    // their own poll, never once per job of B that ends. (Before, every job
    // ending here woke every waiting job of every session: WAITING looks
    // per message.)
    let polls = WAITING as u64 * (took.as_millis() / LOOK_EVERY.as_millis() + 2) as u64;
    assert!(
        work.transactions <= alone.transactions + polls,
        "{ANSWERED} messages of B cost {work:?} in {took:?} while A's {WAITING} wait (which may look {polls} times), \
         {alone:?} alone"
    );
    // Cancelling A's hanging run lets its waiting messages be answered.
    server.post_json(&format!("/api/sessions/{a}/cancel"), json!({})).await;
    let _ = first.await.unwrap();
    for waiting in waiting {
        let _ = waiting.await.unwrap();
    }
    std::sync::Arc::into_inner(server).unwrap().stop().await;
}
