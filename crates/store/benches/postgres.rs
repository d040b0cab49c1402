//! What the store costs on top of PostgreSQL: appending 10,000 events (the
//! typical turn mix of `store.rs`), in batches of 100 and one transaction
//! each, next to raw tokio-postgres inserts of the same rows into the same
//! schema (a prepared insert, ids and JSON made per row, one transaction
//! per batch), both on the database `SERI_TEST_POSTGRES_URL` names, each
//! into a fresh schema. The session's seed holds a frozen system prompt of
//! a real one's size. The store must reach 80% of raw, though it also
//! takes the write lock, reads the session's head, keeps its cached
//! columns and snapshot current and announces the change (`NOTIFY`).
//!
//! Without a database it says so and prints no figure; `cargo xtask bench`
//! starts a throw-away cluster and sets the URL.

// A benchmark reports on stdout; that is what `cargo xtask bench` reads.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use seri_core::event::EVENT_FORMAT_VERSION;
use seri_core::{AgentId, EventBody, FrozenPrompt};
use seri_store::{Store, StoreOptions};

mod common;

use common::{rate, report, typical_bodies};

/// Events per figure.
const EVENTS: usize = 10_000;
/// Runs per figure: each figure is their median, with the slowest and fastest.
const RUNS: usize = 5;

fn main() {
    let Some(base) = std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) else {
        println!("PostgreSQL append: skipped (SERI_TEST_POSTGRES_URL is not set; cargo xtask bench sets it)");
        return;
    };
    let bodies = typical_bodies(EVENTS);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    for (label, batch) in [("batches of 100", 100), ("one transaction each", 1)] {
        let (mut raws, mut stores) = (Vec::new(), Vec::new());
        for run in 0..RUNS {
            raws.push(rate(runtime.block_on(raw_append(&fresh(&base, run, "raw"), &bodies, batch))));
            stores.push(rate(store_append(&fresh(&base, run, "store"), &bodies, batch)));
        }
        report(
            &format!("PostgreSQL append 10k events, {label} (goal ≥ 0.8×)"),
            stores,
            &format!("raw tokio-postgres insert, {label}"),
            raws,
        );
    }
}

/// `base` on a fresh schema of its own.
fn fresh(base: &str, run: usize, what: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let join = if base.contains('?') { '&' } else { '?' };
    format!("{base}{join}options=-csearch_path%3Dbench_{what}_{run}_{nanos}")
}

fn open(url: &str) -> Store {
    Store::open_url(Some(url), Path::new("unused.db"), StoreOptions::default()).unwrap()
}

/// A session as a real one is created: its seed holds the frozen system
/// prompt (kilobytes), which an append must not pay for.
fn create_session(store: &Store) -> seri_core::SessionId {
    let agent = store.agent(&AgentId::local());
    let mut seed = agent.new_seed("/bench");
    seed.system_prompt = Some(FrozenPrompt { text: "You are seri. ".repeat(180), ..FrozenPrompt::default() });
    agent.create_session(&seed).unwrap();
    seed.id
}

/// The store: one session, `bodies` appended `batch` at a time.
fn store_append(url: &str, bodies: &[EventBody], batch: usize) -> (usize, Duration) {
    let store = open(url);
    let session = create_session(&store);
    let agent = store.agent(&AgentId::local());
    let batches: Vec<Vec<EventBody>> = bodies.chunks(batch).map(<[EventBody]>::to_vec).collect();
    let start = Instant::now();
    for chunk in batches {
        std::hint::black_box(agent.append(session, chunk).unwrap());
    }
    let elapsed = start.elapsed();
    assert_eq!(agent.event_count(session).unwrap(), bodies.len() as u64);
    (bodies.len(), elapsed)
}

/// The baseline: the same rows into the same schema (made by the store),
/// written by hand with tokio-postgres.
async fn raw_append(url: &str, bodies: &[EventBody], batch: usize) -> (usize, Duration) {
    let session = create_session(&open(url)).to_string();
    let (mut client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    let driver = tokio::spawn(connection);
    let insert = client
        .prepare(
            "INSERT INTO session_events (id, session_id, seq, type, format_version, payload, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .await
        .unwrap();
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let mut seq = 0i64;
    let start = Instant::now();
    for chunk in bodies.chunks(batch) {
        let tx = client.transaction().await.unwrap();
        for body in chunk {
            seq += 1;
            let id = uuid_v7_text(seq);
            let payload = body.to_payload().to_string();
            tx.execute(
                &insert,
                &[&id, &session, &seq, &body.kind(), &i64::from(EVENT_FORMAT_VERSION), &payload, &now()],
            )
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
    }
    let elapsed = start.elapsed();
    drop(client);
    let _ = driver.await;
    (bodies.len(), elapsed)
}

/// A unique id per row, as text, made as cheaply as the store's own.
fn uuid_v7_text(seq: i64) -> String {
    format!("01900000-0000-7000-8000-{seq:012x}")
}
