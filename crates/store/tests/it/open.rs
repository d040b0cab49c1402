//! Opening files: migrations from nothing, and every kind of file or
//! directory the store must refuse, each with an error that names it.

use std::fs;
use std::path::Path;

use rusqlite::Connection;
use seri_store::{
    APPLICATION_ID, AttachmentError, OpenError, Profile, ProfileError, SCHEMA_VERSION, Store, StoreError,
};

/// The error message with the temporary directory replaced, for snapshots.
fn message(err: &StoreError, dir: &Path) -> String {
    err.to_string().replace(&dir.display().to_string(), "<DIR>")
}

fn header(path: &Path) -> (i32, i64, String) {
    let conn = Connection::open(path).unwrap();
    let app: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0)).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    (app, version, mode)
}

#[test]
fn migrations_run_from_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seri.db");
    fs::write(&path, b"").unwrap();
    drop(Store::open(&path).unwrap());
    assert_eq!(header(&path), (APPLICATION_ID, SCHEMA_VERSION, "wal".to_owned()));
    // Opening again runs nothing and changes nothing.
    drop(Store::open(&path).unwrap());
    assert_eq!(header(&path), (APPLICATION_ID, SCHEMA_VERSION, "wal".to_owned()));
}

#[test]
fn schema_after_all_migrations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seri.db");
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type DESC, name")
        .unwrap();
    let rows: Vec<String> = stmt
        .query_map([], |r| {
            Ok(format!("-- {} {}\n{};\n", r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    insta::assert_snapshot!("schema_after_all_migrations", rows.join("\n"));
}

#[test]
fn continuation_table_has_exactly_the_contract_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seri.db");
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('session_continuations') ORDER BY cid").unwrap();
    let columns: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert_eq!(
        columns,
        [
            "id",
            "predecessor_session_id",
            "successor_session_id",
            "origin_session_id",
            "tool_call_id",
            "initiating_event_id",
            "reason",
            "manifest_cbor",
            "created_at"
        ]
    );
}

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seri.db");
    drop(Store::open(&path).unwrap());
    Connection::open(&path).unwrap().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::Open(OpenError::NewerSchema { found, supported, .. }) if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION)
    );
    insta::assert_snapshot!("newer_schema_is_refused", message(&err, dir.path()));
    assert_eq!(header(&path).1, SCHEMA_VERSION + 1, "the version was not downgraded");
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("short.db", b"hello".as_slice()), ("long.db", &[0xAB; 8192])] {
        let path = dir.path().join(name);
        fs::write(&path, bytes).unwrap();
        let err = Store::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::Open(OpenError::NotADatabase { .. })), "{name}: {err:?}");
        assert_eq!(fs::read(&path).unwrap(), bytes, "{name} was modified");
        assert!(!dir.path().join(format!("{name}-wal")).exists());
    }
    let err = Store::open(dir.path().join("long.db")).unwrap_err();
    insta::assert_snapshot!("garbage_file_is_refused", message(&err, dir.path()));
}

#[test]
fn another_applications_sqlite_file_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    // An application that sets no application id, but has its own tables.
    let plain = dir.path().join("plain.db");
    Connection::open(&plain).unwrap().execute_batch("CREATE TABLE notes (body TEXT);").unwrap();
    let err = Store::open(&plain).unwrap_err();
    assert!(matches!(err, StoreError::Open(OpenError::ForeignDatabase { application_id: 0, .. })), "{err:?}");
    insta::assert_snapshot!("foreign_database_without_application_id", message(&err, dir.path()));
    assert_eq!(header(&plain), (0, 0, "delete".to_owned()), "the foreign file was switched to WAL");

    // An application with its own id, even with no tables yet.
    let tagged = dir.path().join("tagged.db");
    Connection::open(&tagged).unwrap().pragma_update(None, "application_id", 0x0f05_5112).unwrap();
    let err = Store::open(&tagged).unwrap_err();
    assert!(matches!(err, StoreError::Open(OpenError::ForeignDatabase { application_id: 0x0f05_5112, .. })), "{err:?}");
    insta::assert_snapshot!("foreign_database_with_application_id", message(&err, dir.path()));
}

#[test]
fn a_database_in_a_missing_directory_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(dir.path().join("nowhere/seri.db")).unwrap_err();
    assert!(matches!(err, StoreError::Open(OpenError::Open { .. })), "{err:?}");
    assert!(message(&err, dir.path()).starts_with("cannot open database `<DIR>/nowhere/seri.db`"), "{err}");
}

#[test]
fn profile_directories_that_cannot_hold_a_store_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Profile::at(dir.path().join("missing"));
    let err = missing.open_store().unwrap_err();
    assert!(matches!(err, StoreError::Profile(ProfileError::Missing { .. })));
    let mut messages = vec![message(&err, dir.path())];

    let file = dir.path().join("file");
    fs::write(&file, b"").unwrap();
    let err = Profile::at(&file).open_store().unwrap_err();
    assert!(matches!(err, StoreError::Profile(ProfileError::NotADirectory { .. })));
    messages.push(message(&err, dir.path()));

    let read_only = dir.path().join("read-only");
    fs::create_dir(&read_only).unwrap();
    let mut perms = fs::metadata(&read_only).unwrap().permissions();
    perms.set_readonly(true);
    fs::set_permissions(&read_only, perms).unwrap();
    let err = Profile::at(&read_only).open_store().unwrap_err();
    assert!(matches!(err, StoreError::Profile(ProfileError::ReadOnly { .. })));
    messages.push(message(&err, dir.path()));
    assert!(!read_only.join("seri.db").exists());

    insta::assert_snapshot!("unusable_profile_directories", messages.join("\n"));

    // Creating the missing profile makes it usable.
    missing.create().unwrap();
    missing.open_store().unwrap();
    assert!(missing.db_path().exists());
}

#[test]
fn an_in_memory_store_is_fully_migrated_and_has_no_attachments_unless_given() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.path(), Path::new(":memory:"));
    let agent = store.agent(&seri_core::AgentId::local());
    let seed = agent.new_seed("/w");
    agent.create_session(&seed).unwrap();
    let err = agent.store_attachment(seed.id, "a.txt", None, b"x").unwrap_err();
    assert!(matches!(err, StoreError::Attachment(AttachmentError::NoDir)), "{err:?}");
}

#[test]
fn migration_9_fills_each_sessions_parent_run_from_its_seed() {
    use seri_core::AgentId;
    use seri_store::{SeqRange, SessionQuery, schema::SCHEMA_SQL};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seri.db");
    // A database as version 8 left it, with two sessions written by hand.
    let up_to_8 = &SCHEMA_SQL[..SCHEMA_SQL.find("-- migration 9:").unwrap()];
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(up_to_8).unwrap();
    conn.pragma_update(None, "user_version", 8).unwrap();
    conn.pragma_update(None, "application_id", APPLICATION_ID).unwrap();
    let a = "01a22b09-eb02-7629-9493-5f4682b32801";
    let b = "01a22b09-eb02-7629-9493-5f4682b32802";
    let run = "01a22b09-eb02-7629-9493-5f4682b32803";
    conn.execute_batch(&format!(
        "INSERT INTO sessions (id, agent_id, cwd, created_at, seed) VALUES ('{a}', 'local', '/w', 1000, '{{}}');
         INSERT INTO sessions (id, agent_id, cwd, created_at, seed) VALUES ('{b}', 'local', '/w', 2000, '{{\"parentRunId\": \"{run}\"}}');
         INSERT INTO session_events VALUES ('01a22b09-eb02-7629-9493-5f4682b32811', '{a}', 1, 'message', 1, '{{\"role\":\"user\",\"actor\":\"user\",\"content\":\"hi\"}}', 5000);
         INSERT INTO session_events VALUES ('01a22b09-eb02-7629-9493-5f4682b32812', '{a}', 2, 'message', 1, '{{\"role\":\"assistant\",\"actor\":\"agent\",\"content\":\"yo\"}}', 6000);"
    ))
    .unwrap();
    drop(conn);

    let store = Store::open(&path).unwrap();
    let local = store.agent(&AgentId::local());
    let listed = local.list_sessions(&SessionQuery::default()).unwrap();
    let heads: Vec<_> = listed
        .iter()
        .map(|s| (s.id.to_string(), s.last_seq, s.updated_at.millis(), s.parent_run_id.map(|r| r.to_string())))
        .collect();
    assert_eq!(heads, [(a.to_owned(), 2, 6000, None), (b.to_owned(), 0, 2000, Some(run.to_owned()))]);
    let events = local.events(a.parse().unwrap(), SeqRange::ALL).unwrap();
    assert_eq!(events.len(), 2);
    let only_parents = SessionQuery { without_children: true, ..SessionQuery::default() };
    assert_eq!(local.list_sessions(&only_parents).unwrap().len(), 1);
    // Migrations 13 and 19 filled the newest-event cache the list reads,
    // one row per session, from the events. (The hand-written rows left
    // the title columns out.)
    let check = store.check_cached_columns(seri_store::CheckMode::Report).unwrap();
    assert!(check.mismatches.iter().all(|m| m.column != "session_last_events"), "{check:?}");
    let cached: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT count(*) FROM session_last_events", [], |row| row.get(0))
        .unwrap();
    assert_eq!(cached, 2);
}
