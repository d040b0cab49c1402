//! PostgreSQL's own tests: what the contract suite cannot see because it
//! reaches under the store (raw SQL from another client, a schema another
//! application owns, a connection the server closes). Each runs when
//! `SERI_TEST_POSTGRES_URL` names a database, as the contract suite's
//! PostgreSQL half does.

use std::path::Path;

use seri_core::AgentId;
use seri_store::{SeqRange, Store, StoreErrorKind, StoreOptions, StoreUrl};

use crate::support::{fresh_schema_url, postgres_url, texts, user};

/// A fresh schema's URL, or `None` when no database is given.
fn fresh() -> Option<String> {
    postgres_url().map(|base| fresh_schema_url(&base))
}

fn open(url: &str) -> seri_store::Result<Store> {
    Store::open_url(Some(url), Path::new("unused.db"), StoreOptions::default())
}

/// A new session of `agent`'s.
fn new_session(agent: &seri_store::AgentStore<'_>) -> seri_core::SessionId {
    let seed = agent.new_seed("/w");
    agent.create_session(&seed).unwrap();
    seed.id
}

/// Runs `sql` as another client would, and returns what the server said.
pub(crate) fn raw(url: &str, sql: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.map_err(|e| e.to_string())?;
        let driver = tokio::spawn(connection);
        let result = client
            .batch_execute(sql)
            .await
            .map_err(|e| e.as_db_error().map_or_else(|| e.to_string(), |db| db.message().to_owned()));
        drop(client);
        let _ = driver.await;
        result
    })
}

#[test]
fn store_urls_name_sqlite_or_postgres_and_anything_else_is_refused() {
    assert_eq!(StoreUrl::parse(None).unwrap(), StoreUrl::Sqlite(None));
    assert_eq!(StoreUrl::parse(Some("  ")).unwrap(), StoreUrl::Sqlite(None));
    assert_eq!(StoreUrl::parse(Some("sqlite:")).unwrap(), StoreUrl::Sqlite(None));
    assert_eq!(StoreUrl::parse(Some("sqlite:/tmp/x.db")).unwrap(), StoreUrl::Sqlite(Some("/tmp/x.db")));
    assert_eq!(StoreUrl::parse(Some("sqlite:///tmp/x.db")).unwrap(), StoreUrl::Sqlite(Some("/tmp/x.db")));
    let pg = "postgres://seri:secret@db.example:5432/seri";
    assert_eq!(StoreUrl::parse(Some(pg)).unwrap(), StoreUrl::Postgres(pg));
    let error = StoreUrl::parse(Some("mysql://root:hunter2@db/seri")).unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Unusable);
    let text = error.to_string();
    assert!(text.contains("seri cannot keep sessions in `mysql:`"), "the scheme given is named: {text}");
    assert!(text.contains("`sqlite:PATH` or `postgres://…`"), "the schemes seri takes are named: {text}");
    assert!(!text.contains("hunter2"), "the password is never shown: {text}");
}

#[test]
fn a_malformed_postgres_url_is_refused_without_showing_its_password() {
    let error = open("postgres://seri:hunter2@127.0.0.1:notaport/db").unwrap_err();
    let text = error.to_string();
    assert!(text.starts_with("store URL `"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}

#[test]
fn the_database_itself_refuses_to_change_or_delete_events_and_edges() {
    let Some(url) = fresh() else { return };
    let store = open(&url).unwrap();
    let agent = store.agent(&AgentId::local());
    let session = new_session(&agent);
    agent.append(session, [user("kept")]).unwrap();
    for (sql, verb) in [
        ("UPDATE session_events SET payload = '{}'", "updated"),
        // Only a prune deletes events, with their whole recorded session.
        ("DELETE FROM session_events", "deleted but with their pruned session"),
        ("TRUNCATE session_events CASCADE", "deleted"),
    ] {
        let refused = raw(&url, sql).unwrap_err();
        assert_eq!(refused, format!("session_events is append-only: rows are never {verb}"), "{sql}");
    }
    assert_eq!(agent.events(session, SeqRange::ALL).unwrap().len(), 1);
}

#[test]
fn a_schema_of_another_application_is_refused_untouched() {
    let Some(url) = fresh() else { return };
    // The store creates the schema the URL names; another application got there first.
    let schema = url.rsplit("%3D").next().unwrap().to_owned();
    raw(&url, &format!("CREATE SCHEMA {schema}; CREATE TABLE {schema}.orders (id int)")).unwrap();
    let error = open(&url).unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Unusable);
    assert!(error.to_string().contains(&format!("schema `{schema}`")), "{error}");
    assert!(error.to_string().contains("holds tables seri did not create"), "{error}");
    // Nothing was created beside the foreign table.
    raw(&url, &format!("DO $$ BEGIN IF (SELECT count(*) FROM information_schema.tables WHERE table_schema = '{schema}') <> 1 THEN RAISE EXCEPTION 'touched'; END IF; END $$")).unwrap();
}

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let Some(url) = fresh() else { return };
    drop(open(&url).unwrap());
    raw(&url, "UPDATE seri_schema SET version = 99").unwrap();
    let error = open(&url).unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::NewerSchema);
    assert!(error.to_string().contains("schema version 99"), "{error}");
}

#[test]
fn two_first_opens_at_once_migrate_once() {
    let Some(url) = fresh() else { return };
    let opens: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || open(&url).map(drop))
        })
        .collect();
    for open in opens {
        open.join().unwrap().unwrap();
    }
    raw(&url, "DO $$ BEGIN IF (SELECT count(*) FROM seri_schema) <> 1 THEN RAISE EXCEPTION 'twice'; END IF; END $$")
        .unwrap();
}

#[test]
fn a_connection_the_server_closed_is_opened_again() {
    let Some(url) = fresh() else { return };
    let store = open(&url).unwrap();
    let agent = store.agent(&AgentId::local());
    let session = new_session(&agent);
    // Every other backend of this database is ended, the store's included.
    raw(&url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND application_name = ''").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    // The first call after may fail (the server closed the socket under it); the next reconnects.
    let _ = agent.append(session, [user("maybe")]);
    agent.append(session, [user("after")]).unwrap();
    assert!(texts(&agent.events(session, SeqRange::ALL).unwrap()).contains(&"after".to_owned()));
}

#[test]
fn an_insert_that_fails_after_others_were_sent_rolls_the_whole_append_back() {
    let Some(url) = fresh() else { return };
    let store = open(&url).unwrap();
    let agent = store.agent(&AgentId::local());
    let session = new_session(&agent);
    agent.append(session, [user("before")]).unwrap();
    // Another client's trigger refuses one row: the inserts of an append go
    // out without waiting for each answer, so the failure arrives later.
    raw(
        &url,
        "CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         IF NEW.payload LIKE '%boom%' THEN RAISE EXCEPTION 'no booms here'; END IF; RETURN NEW; END $$; \
         CREATE TRIGGER refuse_boom BEFORE INSERT ON session_events FOR EACH ROW EXECUTE FUNCTION refuse_boom();",
    )
    .unwrap();
    let error = agent.append(session, [user("one"), user("boom"), user("three")]).unwrap_err();
    assert!(error.to_string().contains("no booms here"), "the failing insert is the one named: {error}");
    assert_eq!(texts(&agent.events(session, SeqRange::ALL).unwrap()), ["before"], "nothing of it was kept");
    // The connection is clean for the next transaction.
    agent.append(session, [user("after")]).unwrap();
    assert_eq!(texts(&agent.events(session, SeqRange::ALL).unwrap()), ["before", "after"]);
    assert_eq!(agent.info(session).unwrap().last_seq, 2);
}

#[test]
fn a_schema_of_version_4_holding_a_nul_is_upgraded() {
    let (Some(old_url), Some(new_url)) = (fresh(), fresh()) else { return };
    let schema_of = |url: &str| url.rsplit("%3D").next().unwrap().to_owned();
    let (old, new) = (schema_of(&old_url), schema_of(&new_url));
    // Its rows are made by this build (messages holding U+0000, one of them
    // a rule's), then put in a schema built by migrations 1 to 4 alone.
    let store = open(&new_url).unwrap();
    let local = store.agent(&AgentId::local());
    let id = new_session(&local);
    let rule = seri_core::MessageMeta { rule: Some(".seri/rules/a.md".to_owned()), ..Default::default() };
    let bodies = [
        user("fix\0 it"),
        seri_core::EventBody::Message(seri_core::Message {
            meta: Some(Box::new(rule)),
            ..seri_core::Message::user("rule \0 text")
        }),
    ];
    let appended = local.append(id, bodies).unwrap();
    drop(store);
    let sql = seri_store::schema::POSTGRES_SCHEMA_SQL;
    let version_4 = &sql[..sql.find("-- migration 5:").unwrap()];
    raw(
        &old_url,
        &format!("CREATE SCHEMA {old}; SET search_path = {old}; {version_4} UPDATE seri_schema SET version = 4;"),
    )
    .unwrap();
    let sessions = "id, agent_id, cwd, created_at, seed, title, description, title_source, parent_run_id";
    let events = "id, session_id, seq, type, format_version, payload, created_at";
    raw(
        &old_url,
        &format!(
            "INSERT INTO {old}.sessions ({sessions}) SELECT {sessions} FROM {new}.sessions; \
             INSERT INTO {old}.session_events ({events}) SELECT {events} FROM {new}.session_events ORDER BY seq;"
        ),
    )
    .unwrap();

    // Opening it applies migrations 5 to the newest; what it holds reads back exactly.
    let upgraded = open(&old_url).unwrap();
    let local = upgraded.agent(&AgentId::local());
    assert_eq!(local.events(id, SeqRange::ALL).unwrap(), appended);
    let fired: Vec<String> = local.fired_rules(id).unwrap().into_iter().collect();
    assert_eq!(fired, [".seri/rules/a.md"]);
    raw(&old_url, &format!("DO $$ BEGIN IF (SELECT version FROM {old}.seri_schema) <> {} THEN RAISE EXCEPTION 'not upgraded'; END IF; END $$", seri_store::schema::POSTGRES_SCHEMA_VERSION)).unwrap();
}
