//! Writers racing on one database, on each backend: two threads sharing a
//! store, two threads with a store each, and two processes. Every event
//! lands, seqs stay gapless, and no writer sees SQLITE_BUSY or a duplicate
//! seq.
//!
//! The second process is this test binary again, started with
//! [`CHILD_DB`] set so that only [`appender_child_process_role`] does anything.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use seri_core::{AgentId, SessionId};
use seri_store::{SeqRange, Store, StoreOptions};

use crate::support::*;

/// Names the database the child process appends to (a store URL).
const CHILD_DB: &str = "SERI_STORE_TEST_CHILD_DB";
/// Names the session the child process appends to.
const CHILD_SESSION: &str = "SERI_STORE_TEST_CHILD_SESSION";
/// Events each writer appends.
const PER_WRITER: usize = 150;

/// Appends `PER_WRITER` events labelled `label-0`, `label-1`, …, alternating
/// single-event transactions and batches of three.
fn append_many(store: &Store, session: SessionId, label: &str) {
    let agent = store.agent(&AgentId::local());
    let mut i = 0;
    while i < PER_WRITER {
        let batch = if (i / 3) % 2 == 0 { 1 } else { 3.min(PER_WRITER - i) };
        let bodies = (i..i + batch).map(|n| user(&format!("{label}-{n}")));
        let events = agent.append(session, bodies).unwrap_or_else(|e| panic!("{label} failed to append: {e}"));
        assert_eq!(events.len(), batch);
        i += batch;
    }
}

/// Checks that the session holds exactly the labelled events, seqs 1..N,
/// each writer's events in the order it wrote them.
fn check_landed(store: &Store, session: SessionId, labels: &[&str]) {
    let events = store.agent(&AgentId::local()).events(session, SeqRange::ALL).unwrap();
    let total = labels.len() * PER_WRITER;
    assert_eq!(seqs(&events), (1..=total as u64).collect::<Vec<_>>(), "seqs are 1..N without gaps");
    let found: BTreeSet<String> = texts(&events).into_iter().collect();
    let expected: BTreeSet<String> =
        labels.iter().flat_map(|l| (0..PER_WRITER).map(move |n| format!("{l}-{n}"))).collect();
    assert_eq!(found, expected, "every event landed exactly once");
    for label in labels {
        let own: Vec<usize> = texts(&events)
            .iter()
            .filter_map(|t| t.strip_prefix(&format!("{label}-")).map(|n| n.parse().unwrap()))
            .collect();
        assert_eq!(own, (0..PER_WRITER).collect::<Vec<_>>(), "{label}'s events are in its order");
    }
}

/// A store URL of a fresh, empty database of `backend`, under `dir`.
fn fresh_url(backend: Backend, dir: &Path) -> String {
    match backend {
        Backend::Sqlite => format!("sqlite:{}", dir.join("seri.db").display()),
        Backend::Postgres => fresh_schema_url(&postgres_url().unwrap()),
    }
}

fn open(url: &str) -> Store {
    Store::open_url(Some(url), Path::new("unused.db"), StoreOptions::default()).unwrap()
}

fn new_session(url: &str) -> SessionId {
    let store = open(url);
    let agent = store.agent(&AgentId::local());
    let seed = agent.new_seed("/w");
    agent.create_session(&seed).unwrap();
    seed.id
}

#[test]
fn two_threads_sharing_one_store() {
    for backend in Backend::all() {
        let dir = tempfile::tempdir().unwrap();
        let url = fresh_url(backend, dir.path());
        let session = new_session(&url);
        let store = Arc::new(open(&url));
        let writers: Vec<_> = ["left", "right"]
            .into_iter()
            .map(|label| {
                let store = store.clone();
                std::thread::spawn(move || append_many(&store, session, label))
            })
            .collect();
        writers.into_iter().for_each(|w| w.join().unwrap());
        check_landed(&store, session, &["left", "right"]);
    }
}

#[test]
fn four_threads_with_a_store_each() {
    for backend in Backend::all() {
        let dir = tempfile::tempdir().unwrap();
        let url = fresh_url(backend, dir.path());
        let session = new_session(&url);
        let labels = ["a", "b", "c", "d"];
        let writers: Vec<_> = labels
            .into_iter()
            .map(|label| {
                let url = url.clone();
                std::thread::spawn(move || append_many(&open(&url), session, label))
            })
            .collect();
        writers.into_iter().for_each(|w| w.join().unwrap());
        check_landed(&open(&url), session, &labels);
    }
}

#[test]
fn two_processes() {
    for backend in Backend::all() {
        let dir = tempfile::tempdir().unwrap();
        two_processes_on(&fresh_url(backend, dir.path()));
    }
}

fn two_processes_on(url: &str) {
    let session = new_session(url);
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["concurrency::appender_child_process_role", "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD_DB, url)
        .env(CHILD_SESSION, session.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();

    // Start writing once the child has, so the two really overlap. The wait
    // is bounded so a child that dies early fails the test instead of hanging it.
    let store = open(url);
    let agent = store.agent(&AgentId::local());
    let start = Instant::now();
    while agent.event_count(session).unwrap() == 0 && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(2));
    }
    append_many(&store, session, "parent");

    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the child process failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("1 passed"), "the child role did not run");
    check_landed(&store, session, &["parent", "child"]);
}

/// The child half of [`two_processes`]; does nothing unless started by it.
#[test]
fn appender_child_process_role() {
    let (Ok(url), Ok(session)) = (std::env::var(CHILD_DB), std::env::var(CHILD_SESSION)) else {
        return;
    };
    let session: SessionId = session.parse().unwrap();
    append_many(&open(&url), session, "child");
}
