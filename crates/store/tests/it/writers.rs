//! Writers of different sessions never wait for each other on PostgreSQL:
//! a write transaction locks each session it touches, not the store. On
//! SQLite the database has one writer by nature (`BEGIN IMMEDIATE` takes
//! the file's one write lock), and these tests say so too.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use seri_core::{AgentId, SessionId};
use seri_store::{SeqRange, Store, StoreErrorKind, StoreOptions};

use crate::support::{fresh_schema_url, postgres_url, texts, user};

fn open(url: &str, busy_timeout: Duration) -> Store {
    let options = StoreOptions { busy_timeout, ..StoreOptions::default() };
    Store::open_url(Some(url), Path::new("unused.db"), options).unwrap()
}

fn new_session(store: &Store) -> SessionId {
    let agent = store.agent(&AgentId::local());
    let seed = agent.new_seed("/w");
    agent.create_session(&seed).unwrap();
    seed.id
}

fn messages(store: &Store, session: SessionId) -> Vec<String> {
    texts(&store.agent(&AgentId::local()).events(session, SeqRange::ALL).unwrap())
}

/// Runs `sql` (one row, one BIGINT) as another client of `url` would.
fn raw_count(url: &str, sql: &str, param: &str) -> i64 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
        let driver = tokio::spawn(connection);
        let n: i64 = client.query_one(sql, &[&param]).await.unwrap().get(0);
        drop(client);
        let _ = driver.await;
        n
    })
}

/// How many transactions wait for `session`'s write lock.
fn waiting_for(url: &str, session: SessionId) -> i64 {
    // An advisory lock's 64-bit key is shown as its high and low halves.
    let sql = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
               AND ((classid::bigint << 32) | objid::bigint) \
                   = hashtextextended('seri:' || current_schema() || ':session:' || $1, 0)";
    raw_count(url, sql, &session.to_string())
}

#[test]
fn on_postgres_another_sessions_append_commits_while_one_write_transaction_is_open() {
    let Some(base) = postgres_url() else { return };
    let url = fresh_schema_url(&base);
    // A writer that waited for the held transaction would fail after this,
    // rather than hang the test.
    let store = open(&url, Duration::from_secs(20));
    let (a, b) = (new_session(&store), new_session(&store));
    let agent = &store.agent(&AgentId::local());
    let (held, holding) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let holder = scope.spawn(move || {
            agent.write(|tx| {
                tx.append(a, [user("a1")])?;
                held.send(()).unwrap();
                // Bounded, so a failing test ends rather than waits for ever.
                let _ = released.recv_timeout(Duration::from_secs(60));
                Ok::<_, seri_store::StoreError>(())
            })
        });
        holding.recv().unwrap();

        // Session b's append commits while a's transaction holds a's lock.
        agent.append(b, [user("b1")]).unwrap();
        assert_eq!(messages(&store, b), ["b1"], "b's append committed");
        assert!(messages(&store, a).is_empty(), "a's transaction is still open");

        // A second writer of a waits for the first, at a's lock.
        let second = scope.spawn(move || agent.append(a, [user("a2")]));
        let mut seen = 0;
        for _ in 0..2000 {
            seen = waiting_for(&url, a);
            if seen > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(seen, 1, "the second writer of a waits for a's lock");
        assert_eq!(waiting_for(&url, b), 0);

        release.send(()).unwrap();
        holder.join().unwrap().unwrap();
        let second = second.join().unwrap().unwrap();
        assert_eq!(second[0].seq.get(), 2, "the waiting writer appended after the first: seqs stay gapless");
    });
    assert_eq!(messages(&store, a), ["a1", "a2"]);
}

#[test]
fn on_sqlite_one_writer_at_a_time_is_the_databases_own_rule() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("seri.db").display());
    let holder_store = open(&url, Duration::from_secs(5));
    let (a, b) = (new_session(&holder_store), new_session(&holder_store));
    let other = open(&url, Duration::from_millis(50));
    let (held, holding) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let holder_store = &holder_store;
    std::thread::scope(|scope| {
        let holder = scope.spawn(move || {
            holder_store.agent(&AgentId::local()).write(|tx| {
                tx.append(a, [user("a1")])?;
                held.send(()).unwrap();
                let _ = released.recv_timeout(Duration::from_secs(60));
                Ok::<_, seri_store::StoreError>(())
            })
        });
        holding.recv().unwrap();
        // SQLite's file has one write lock: another session's writer waits
        // for it (here past its busy timeout).
        let error = other.agent(&AgentId::local()).append(b, [user("b1")]).unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Busy, "{error}");
        release.send(()).unwrap();
        holder.join().unwrap().unwrap();
    });
    other.agent(&AgentId::local()).append(b, [user("b1")]).unwrap();
    assert_eq!(messages(&other, a), ["a1"]);
    assert_eq!(messages(&other, b), ["b1"]);
}
