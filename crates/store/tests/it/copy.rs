//! `Store::copy_into`: a profile's history copied into another store (a
//! PostgreSQL database, or another file), whole, idempotently, verified,
//! and refused without a trace when both sides were written since.

use seri_core::{AgentId, SessionInfo};
use seri_store::{CheckMode, SeqRange, SessionQuery, StoreErrorKind};

use crate::support::*;

/// A source with the tables a person's profile has: sessions, events, a
/// continuation, runs, a trajectory, a checkpoint, a setting, a token.
fn populated() -> Fixture {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/work");
    local.append(id, [user("Plan the migration"), assistant_with_usage("Here is a plan", 1_200)]).unwrap();
    local.append(id, [status(Some("Migration"), Some("to postgres")), tool_call("c1", "read")]).unwrap();
    local.append(id, [tool_result("c1", "read", "contents")]).unwrap();
    local.write(|tx| continue_session(tx, id, "call_1", "Deploy", None)).unwrap();
    for n in 0..40 {
        local.append(id, [user(&format!("turn {n}"))]).unwrap();
    }
    let fork = local.fork_session(id, Some(seri_core::Seq(2)), seri_core::ForkVia::Cli).unwrap().id;
    local.append(fork, [user("the other way")]).unwrap();
    local.set_setting("trajectory", "on").unwrap();
    fx.store.record_server_token(&AgentId::local(), "ab12").unwrap();
    fx
}

fn views(fx: &Fixture) -> Vec<SessionInfo> {
    let local = fx.local();
    let mut all: Vec<SessionInfo> =
        local.list_sessions(&SessionQuery::default()).unwrap().iter().map(|s| local.info(s.id).unwrap()).collect();
    all.sort_by_key(|i| i.id);
    all
}

#[test]
fn a_copy_holds_everything_the_source_did_and_a_second_copy_adds_nothing() {
    for backend in Backend::all() {
        let source = populated();
        let target = Fixture::on(backend);
        let report = source.store.copy_into(&target.store).unwrap();
        let events = report.tables["session_events"];
        assert_eq!(events.copied, 2 + 2 + 1 + 2 + 40 + 1, "{report}");
        assert_eq!(report.tables["sessions"].copied, 3);
        assert_eq!(report.tables["session_forks"].copied, 1);
        assert_eq!(report.tables["session_continuations"].copied, 1);
        assert_eq!(report.tables["settings"].copied, 1);
        assert_eq!(report.tables["server_tokens"].copied, 1);
        assert_eq!(report.sessions_verified, 3);
        assert_eq!(views(&source), views(&target), "every session folds the same");
        assert_eq!(target.store.server_token_agent("ab12").unwrap(), Some(AgentId::local()));
        assert!(target.store.check_cached_columns(CheckMode::Report).unwrap().mismatches.is_empty());

        let again = source.store.copy_into(&target.store).unwrap();
        assert_eq!(again.copied(), 0, "{again}");
        assert_eq!(again.tables["session_events"].already_there, events.copied);
        assert_eq!(views(&source), views(&target));
    }
}

#[test]
fn a_target_written_since_keeps_its_new_events_and_takes_the_sources_new_sessions() {
    for backend in Backend::all() {
        let source = populated();
        let target = Fixture::on(backend);
        source.store.copy_into(&target.store).unwrap();
        let first = source.local().list_sessions(&SessionQuery::default()).unwrap()[0].id;
        target.local().append(first, [user("written on the new store")]).unwrap();
        let later = source.session(&source.local(), "/later");
        source.local().append(later, [user("a new session on the old store")]).unwrap();
        let report = source.store.copy_into(&target.store).unwrap();
        assert_eq!(report.tables["sessions"].copied, 1, "{report}");
        assert_eq!(report.tables["session_events"].copied, 1);
        let kept = target.local().events(first, SeqRange::ALL).unwrap();
        assert_eq!(texts(&kept).last().map(String::as_str), Some("written on the new store"));
    }
}

#[test]
fn both_stores_written_at_the_same_seq_stops_the_copy_and_copies_nothing() {
    for backend in Backend::all() {
        let source = populated();
        let target = Fixture::on(backend);
        source.store.copy_into(&target.store).unwrap();
        let first = source.local().list_sessions(&SessionQuery::default()).unwrap()[0].id;
        target.local().append(first, [user("here")]).unwrap();
        source.local().append(first, [user("there")]).unwrap();
        let newcomer = source.session(&source.local(), "/new");
        let error = source.store.copy_into(&target.store).unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Corrupt);
        let text = error.to_string();
        assert!(text.contains(&format!("session_id {first}")), "{text}");
        assert!(text.contains("both stores were written to since the last copy"), "{text}");
        // Rolled back: the new session did not arrive either.
        assert!(target.local().info(newcomer).is_err());
    }
}

#[test]
fn a_store_is_not_copied_into_itself() {
    let fx = populated();
    let error = fx.store.copy_into(&fx.store).unwrap_err();
    assert!(error.to_string().contains("both the source and the target"), "{error}");
}

/// A store a copy goes into, and how to reach under it: the SQLite file or
/// the PostgreSQL URL (a fresh schema).
struct Target {
    store: seri_store::Store,
    raw: Raw,
    _dir: tempfile::TempDir,
}

enum Raw {
    Sqlite(std::path::PathBuf),
    Postgres(String),
}

impl Target {
    fn on(backend: Backend) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (store, raw) = match backend {
            Backend::Sqlite => {
                let path = dir.path().join("target.db");
                (seri_store::Store::open(&path).unwrap(), Raw::Sqlite(path))
            }
            Backend::Postgres => {
                let url = fresh_schema_url(&postgres_url().expect("SERI_TEST_POSTGRES_URL"));
                let store = seri_store::Store::open_url(
                    Some(&url),
                    &dir.path().join("unused.db"),
                    seri_store::StoreOptions::default(),
                )
                .unwrap();
                (store, Raw::Postgres(url))
            }
        };
        Self { store, raw, _dir: dir }
    }

    /// Runs `sql` as another client would; the first column of the first
    /// row it returns, as a number.
    fn sql(&self, sql: &str) -> Option<i64> {
        match &self.raw {
            Raw::Sqlite(path) => {
                let conn = rusqlite::Connection::open(path).unwrap();
                let (batch, last) = sql.rsplit_once(';').unwrap_or(("", sql));
                conn.execute_batch(batch).unwrap();
                let last = last.trim();
                if last.is_empty() {
                    return None;
                }
                conn.query_row(last, [], |r| r.get::<_, i64>(0)).ok()
            }
            Raw::Postgres(url) => {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                runtime.block_on(async {
                    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
                    let driver = tokio::spawn(connection);
                    let messages = client.simple_query(sql).await.unwrap();
                    let first = messages.iter().find_map(|m| match m {
                        tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).and_then(|v| v.parse().ok()),
                        _ => None,
                    });
                    drop(client);
                    let _ = driver.await;
                    first
                })
            }
        }
    }

    /// Counts, from now on, every row written into `session_last_events`
    /// (inserted or updated), in a table of the test's own.
    fn count_last_event_writes(&self) {
        match self.raw {
            Raw::Sqlite(_) => self.sql(
                "CREATE TABLE test_last_event_writes (n INTEGER NOT NULL); \
                 INSERT INTO test_last_event_writes VALUES (0); \
                 CREATE TRIGGER test_count_inserts AFTER INSERT ON session_last_events \
                 BEGIN UPDATE test_last_event_writes SET n = n + 1; END; \
                 CREATE TRIGGER test_count_updates AFTER UPDATE ON session_last_events \
                 BEGIN UPDATE test_last_event_writes SET n = n + 1; END;",
            ),
            Raw::Postgres(_) => self.sql(
                "CREATE TABLE test_last_event_writes (n BIGINT NOT NULL); \
                 INSERT INTO test_last_event_writes VALUES (0); \
                 CREATE FUNCTION test_count_last_event_writes() RETURNS trigger LANGUAGE plpgsql AS $$ \
                 BEGIN UPDATE test_last_event_writes SET n = n + 1; RETURN NULL; END $$; \
                 CREATE TRIGGER test_count AFTER INSERT OR UPDATE ON session_last_events \
                 FOR EACH ROW EXECUTE FUNCTION test_count_last_event_writes();",
            ),
        };
    }

    fn last_event_writes(&self) -> i64 {
        self.sql("SELECT n FROM test_last_event_writes").unwrap()
    }
}

/// A source holding one session of `events` messages.
fn one_session_of(events: usize) -> (Fixture, seri_core::SessionId) {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/work");
    let bodies: Vec<_> = (0..events).map(|n| user(&format!("turn {n}"))).collect();
    for chunk in bodies.chunks(100) {
        local.append(id, chunk.to_vec()).unwrap();
    }
    (fx, id)
}

#[test]
fn a_copy_writes_each_sessions_newest_event_once_and_its_statements_do_not_grow_with_its_events() {
    for backend in Backend::all() {
        let mut work = Vec::new();
        for events in [50, 500] {
            let (source, id) = one_session_of(events);
            let target = Target::on(backend);
            target.count_last_event_writes();
            let before = target.store.work();
            let report = source.store.copy_into(&target.store).unwrap();
            let after = target.store.work();
            assert_eq!(report.tables["session_events"].copied, events as u64, "{report}");
            assert_eq!(report.last_events_written, 1, "{report}");
            // Once as the session's row enters the list, once for its newest
            // event: not once per event.
            assert_eq!(
                target.last_event_writes(),
                2,
                "{backend:?}, {events} events: the session's newest event is written once, not once per event"
            );
            let listed = target.store.agent(&AgentId::local()).list_sessions(&SessionQuery::default()).unwrap();
            assert_eq!((listed[0].id, listed[0].last_seq), (id, events as u64));
            assert!(target.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
            if let (Some(before), Some(after)) = (before, after) {
                work.push((after.statements - before.statements, after.round_trips - before.round_trips));
            }
        }
        if backend == Backend::Postgres {
            // Statements per table and per session, none per event: the
            // events go in with one COPY.
            assert_eq!(work[0], work[1], "(statements, round trips) copying 50 events, then 500");
        }
    }
}

#[test]
fn a_copy_into_a_store_whose_newest_event_row_is_wrong_stops_and_copies_nothing() {
    for backend in Backend::all() {
        let (source, id) = one_session_of(3);
        let target = Target::on(backend);
        source.store.copy_into(&target.store).unwrap();
        target.sql("UPDATE session_last_events SET seq = 99;");
        source.local().append(id, [user("one more")]).unwrap();
        let error = source.store.copy_into(&target.store).unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Corrupt);
        let text = error.to_string();
        assert!(text.contains(&format!("session {id}'s session_last_events holds seq 99 at")), "{text}");
        assert!(text.contains("where its events give seq 4 at"), "{text}");
        assert!(text.contains("nothing was copied"), "{text}");
        assert_eq!(target.store.agent(&AgentId::local()).event_count(id).unwrap(), 3, "rolled back");
    }
}
