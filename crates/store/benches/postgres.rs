//! What the store costs on top of PostgreSQL, on the database
//! `SERI_TEST_POSTGRES_URL` names, each run into a fresh schema:
//!
//! - appending 10,000 events (the typical turn mix of `store.rs`), in
//!   batches of 100 and one transaction each, next to raw tokio-postgres
//!   inserts of the same rows into the same schema (a prepared insert, ids
//!   and JSON made per row, one transaction per batch). The session's seed
//!   holds a frozen system prompt of a real one's size. The store must
//!   reach 80% of raw, though it also takes the session's lock, reads the
//!   session's head, keeps its cached columns and snapshot current and
//!   announces the change (`NOTIFY`);
//! - the same one transaction each from a task of a multi-threaded tokio
//!   runtime, the store opened there (as `seri serve` and the CLI use it),
//!   next to the same raw inserts: goal ≥ 0.8× too;
//! - the same appended in batches of 100 next to one `COPY` of the same
//!   rows (binary, in one transaction, the newest-event trigger held aside
//!   and its row written once, as a bulk load would): goal ≥ 0.5×;
//! - `Store::copy_into` (`seri store migrate`) of a SQLite profile holding
//!   one 100,000-event session, next to one `COPY` of the same event rows,
//!   already in memory, into a fresh schema: goal ≤ 10×.
//!
//! `SERI_BENCH_QUICK=1` (`cargo xtask bench --quick`) runs each at a tenth
//! of the size, fewer times.
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

/// Events per append figure, and of the session migrated, and runs of
/// each (each figure is their median, with the slowest and fastest): full
/// size, or `SERI_BENCH_QUICK`'s.
fn sizes() -> (usize, usize, usize) {
    if std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1") {
        (1_000, 10_000, 3)
    } else {
        (10_000, 100_000, 5)
    }
}

fn main() {
    let Some(base) = std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) else {
        println!("PostgreSQL append: skipped (SERI_TEST_POSTGRES_URL is not set; cargo xtask bench sets it)");
        return;
    };
    let (events, migrated, runs) = sizes();
    let bodies = typical_bodies(events);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let served = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (mut batched, mut in_tasks, mut one_each_raws) = (Vec::new(), Vec::new(), Vec::new());
    for (label, batch) in [("batches of 100", 100), ("one transaction each", 1)] {
        let (mut raws, mut stores) = (Vec::new(), Vec::new());
        for run in 0..runs {
            raws.push(rate(runtime.block_on(raw_append(&fresh(&base, run, "raw"), &bodies, batch))));
            stores.push(rate(store_append(&fresh(&base, run, "store"), &bodies, batch)));
            if batch == 1 {
                let (url, bodies) = (fresh(&base, run, "served"), bodies.clone());
                let task = served.spawn(async move { store_append(&url, &bodies, 1) });
                in_tasks.push(rate(served.block_on(task).unwrap()));
            }
        }
        if batch == 1 {
            one_each_raws.clone_from(&raws);
        }
        if batch == 100 {
            batched.clone_from(&stores);
        }
        report(
            &format!("PostgreSQL append {}k events, {label} (goal ≥ 0.8×)", events / 1000),
            stores,
            &format!("raw tokio-postgres insert, {label}"),
            raws,
        );
    }
    report(
        &format!("PostgreSQL append {}k events, one transaction each, from tokio tasks (goal ≥ 0.8×)", events / 1000),
        in_tasks,
        "raw tokio-postgres insert, one transaction each",
        one_each_raws,
    );
    let copies: Vec<f64> = (0..runs)
        .map(|run| {
            let url = fresh(&base, run, "copy");
            let session = create_session(&open(&url)).to_string();
            let rows = event_rows(&session, &bodies);
            rate((rows.len(), runtime.block_on(copy_rows(&url, &rows))))
        })
        .collect();
    report(
        &format!("PostgreSQL append {}k events in batches of 100, against COPY (goal ≥ 0.5×)", events / 1000),
        batched,
        "one COPY of the same rows",
        copies,
    );
    migrate(&base, &runtime, migrated, runs.min(3));
}

/// `seri store migrate` of one long session against a `COPY` of its rows.
fn migrate(base: &str, runtime: &tokio::runtime::Runtime, events: usize, runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seri.db");
    let session = {
        let store = Store::open(&path).unwrap();
        let session = create_session(&store);
        let agent = store.agent(&AgentId::local());
        for chunk in typical_bodies(events).chunks(1_000) {
            agent.append(session, chunk.to_vec()).unwrap();
        }
        session
    };
    let rows = sqlite_rows(&path);
    let source = Store::open(&path).unwrap();
    let (mut migrates, mut copies) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let url = fresh(base, run, "migrate");
        let target = open(&url);
        let started = Instant::now();
        let report = source.copy_into(&target).unwrap();
        migrates.push(started.elapsed().as_secs_f64() * 1e3);
        assert_eq!(report.tables["session_events"].copied, events as u64);
        let url = fresh(base, run, "migrate_copy");
        create_session_row(&open(&url), &path, session);
        copies.push(runtime.block_on(copy_rows(&url, &rows)).as_secs_f64() * 1e3);
    }
    let spread = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let ((m, lo, hi), (c, clo, chi)) = (spread(&mut migrates), spread(&mut copies));
    println!(
        "bench: seri store migrate of one {}k-event session into PostgreSQL (median of {runs}: {lo:.0}–{hi:.0} ms; goal ≤ 10×) | {m:.0} ms | baseline one COPY of the same event rows ({clo:.0}–{chi:.0}) {c:.0} ms | ratio {:.2}",
        events / 1000,
        m / c
    );
}

/// One row of `session_events`, as the COPY baseline sends it.
struct EventRow {
    id: String,
    session: String,
    seq: i64,
    kind: String,
    format: i64,
    payload: String,
    at: i64,
}

/// `bodies` as the rows an append of them writes into `session`.
fn event_rows(session: &str, bodies: &[EventBody]) -> Vec<EventRow> {
    let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    (1..)
        .zip(bodies)
        .map(|(seq, body)| EventRow {
            id: uuid_v7_text(seq),
            session: session.to_owned(),
            seq,
            kind: body.kind().to_owned(),
            format: i64::from(EVENT_FORMAT_VERSION),
            payload: body.to_payload().to_string(),
            at,
        })
        .collect()
}

/// Every event row of the SQLite store at `path`, in order.
fn sqlite_rows(path: &Path) -> Vec<EventRow> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT id, session_id, seq, type, format_version, payload, created_at FROM session_events \
             ORDER BY session_id, seq",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(EventRow {
            id: r.get(0)?,
            session: r.get(1)?,
            seq: r.get(2)?,
            kind: r.get(3)?,
            format: r.get(4)?,
            payload: r.get(5)?,
            at: r.get(6)?,
        })
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// The session row of `session` in the SQLite store at `path`, copied
/// into `target` (the COPY baseline's events need it).
fn create_session_row(target: &Store, path: &Path, session: seri_core::SessionId) {
    let source = Store::open(path).unwrap();
    let agent = source.agent(&AgentId::local());
    let seed = agent.seed(session).unwrap();
    target.agent(&AgentId::local()).create_session(&seed).unwrap();
}

/// The baseline of bulk loads: `rows` with one binary `COPY` in one
/// transaction, the newest-event trigger held aside and its row written
/// once, as a bulk load does.
async fn copy_rows(url: &str, rows: &[EventRow]) -> Duration {
    use tokio_postgres::types::{ToSql, Type};
    let (mut client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    let driver = tokio::spawn(connection);
    let started = Instant::now();
    let tx = client.transaction().await.unwrap();
    tx.batch_execute("ALTER TABLE session_events DISABLE TRIGGER session_events_move_the_last_event").await.unwrap();
    let sink = tx
        .copy_in("COPY session_events (id, session_id, seq, type, format_version, payload, created_at) FROM STDIN (FORMAT binary)")
        .await
        .unwrap();
    let types = [Type::TEXT, Type::TEXT, Type::INT8, Type::TEXT, Type::INT8, Type::TEXT, Type::INT8];
    let writer = tokio_postgres::binary_copy::BinaryCopyInWriter::new(sink, &types);
    futures_util::pin_mut!(writer);
    for row in rows {
        let values: [&(dyn ToSql + Sync); 7] =
            [&row.id, &row.session, &row.seq, &row.kind, &row.format, &row.payload, &row.at];
        writer.as_mut().write(&values).await.unwrap();
    }
    writer.finish().await.unwrap();
    tx.batch_execute(
        "UPDATE session_last_events l SET seq = e.seq, created_at = e.created_at \
         FROM (SELECT session_id, seq, created_at FROM session_events ORDER BY seq DESC LIMIT 1) e \
         WHERE l.session_id = e.session_id; \
         ALTER TABLE session_events ENABLE TRIGGER session_events_move_the_last_event",
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let elapsed = started.elapsed();
    drop(client);
    let _ = driver.await;
    elapsed
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
