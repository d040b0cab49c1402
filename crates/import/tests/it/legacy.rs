//! The legacy import: the older release's `sessions/*.jsonl` files become
//! sessions with their lines, times and titles; malformed lines are reported
//! by file and line; importing again skips what was imported and imports a
//! changed file anew; each file is all-or-nothing; the files are never touched.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::Connection;
use seri_core::{AgentId, SessionId, TitleSource};
use seri_import::{FOLDER_RECHECK, FileOutcome, FolderCheck, ImportReport, LegacyImport as _};
use seri_store::{ImportError, LookupError, SeqRange, SessionQuery, StoreError};

use crate::support::*;

/// A session with a header and every kind of line, its times written in
/// each accepted form.
const FULL: &[&str] = &[
    r#"{"type":"session","id":"a41f","cwd":"/home/me/parser","title":"Empty input","createdAt":"2025-03-01T09:30:00Z"}"#,
    r#"{"role":"user","content":"Why does the parser fail on empty input?","timestamp":"2025-03-01T09:30:05Z"}"#,
    r#"{"role":"assistant","thinking":"The test feeds an empty string.","content":"Let me read it.","toolCalls":[{"id":"call_1","name":"read_file","arguments":{"path":"src/parser.rs"}}],"timestamp":1740821410000}"#,
    r#"{"role":"tool","toolCallId":"call_1","name":"read_file","content":"fn parse(input: &str) -> Result<Ast> {\n    let first = input.chars().next().unwrap();\n}","timestamp":1740821411000}"#,
    r#"{"role":"assistant","thinking":{"text":"unwrap on None panics","signature":"sig-1"},"content":"It calls unwrap on the first character.","tool_calls":[{"id":"call_2","type":"function","function":{"name":"bash","arguments":"{\"command\":\"cargo test\"}"}}],"timestamp":"2025-03-01T10:30:20+01:00"}"#,
    r#"{"role":"tool","tool_call_id":"call_2","content":"test result: FAILED","is_error":true,"timestamp":"2025-03-01 09:30:40Z"}"#,
    r#"{"role":"user","content":[{"type":"text","text":"Fix it,"},"please."],"timestamp":1740821460}"#,
    r#"{"role":"assistant","content":"Fixed: empty input is now an error.","timestamp":"2025-03-01T09:31:30.250Z"}"#,
];

/// A session with no header and no times: it goes by the file's modification time.
const PLAIN: &[&str] = &[r#"{"role":"user","content":"hello"}"#, r#"{"role":"assistant","content":"hi"}"#];

/// A session whose third line is not JSON.
const BROKEN: &[&str] = &[
    r#"{"role":"user","content":"first"}"#,
    r#"{"role":"assistant","content":"second"}"#,
    r#"{"role":"user","content":"third"#,
    r#"{"role":"user","content":"fourth"}"#,
];

/// 2023-11-14T22:13:20Z, the modification time given to files without times.
const MTIME_SECS: u64 = 1_700_000_000;

fn write(dir: &Path, name: &str, lines: &[&str]) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    set_mtime(&path, MTIME_SECS);
    path
}

fn set_mtime(path: &Path, secs: u64) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(UNIX_EPOCH + Duration::from_secs(secs)).unwrap();
}

/// The report as a person reads it, with each new session id replaced by
/// `<session N>` (numbered in order of appearance) and the folder by `<DIR>`.
fn shown(report: &ImportReport, sessions: &[SessionId]) -> String {
    let mut text = report.to_string();
    for (i, id) in sessions.iter().enumerate() {
        text = text.replace(&id.to_string(), &format!("<session {}>", i + 1));
    }
    text.replace(&report.dir.display().to_string(), "<DIR>")
}

fn all_sessions(fx: &Fixture) -> Vec<SessionId> {
    let mut ids: Vec<SessionId> =
        fx.local().list_sessions(&SessionQuery::default()).unwrap().into_iter().map(|s| s.id).collect();
    ids.sort();
    ids
}

fn total_events(fx: &Fixture) -> u64 {
    all_sessions(fx).into_iter().map(|id| fx.local().event_count(id).unwrap()).sum()
}

#[test]
fn good_files_become_sessions_with_their_lines_times_and_titles() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        write(&dir, "a.jsonl", FULL);
        write(&dir, "b.jsonl", PLAIN);
        let local = fx.local();
        let report = local.import_legacy_sessions(&dir, "/fallback").unwrap();

        let sessions = report.new_sessions();
        assert_eq!(sessions.len(), 2);
        insta::assert_snapshot!("good_files_report", shown(&report, &sessions));
        assert!(report.files.iter().all(|f| f.warnings.is_empty() && f.sha256.as_ref().unwrap().len() == 64));
        let mtime = UNIX_EPOCH + Duration::from_secs(MTIME_SECS);
        assert!(report.files.iter().all(|f| f.modified.unwrap().millis() as u128 == millis(mtime)));

        // The header gives the working directory, the title and the start.
        let full = local.info(sessions[0]).unwrap();
        assert_eq!(full.cwd, "/home/me/parser");
        assert_eq!((full.title.as_str(), full.title_source), ("Empty input", Some(TitleSource::User)));
        assert_eq!(full.created_at.to_string(), "2025-03-01T09:30:00.000Z");
        assert_eq!(
            (full.message_counts.user, full.message_counts.assistant, full.message_counts.tool_calls),
            (2, 3, 2)
        );
        // Each event keeps its line's time, in whichever form it was written.
        let times: Vec<String> =
            local.events(sessions[0], SeqRange::ALL).unwrap().iter().map(|e| e.at.to_string()).collect();
        let expected = [
            ("2025-03-01T09:30:05.000Z", 1),
            ("2025-03-01T09:30:10.000Z", 3),
            ("2025-03-01T09:30:11.000Z", 1),
            ("2025-03-01T09:30:20.000Z", 3),
            ("2025-03-01T09:30:40.000Z", 1),
            ("2025-03-01T09:31:00.000Z", 1),
            ("2025-03-01T09:31:30.250Z", 1),
        ];
        let expected: Vec<String> = expected.iter().flat_map(|(t, n)| vec![t.to_string(); *n]).collect();
        assert_eq!(times, expected);
        let transcript = seri_projection::transcript_lines(&local.events(sessions[0], SeqRange::ALL).unwrap());
        insta::assert_snapshot!("imported_transcript_with_every_line_kind", transcript);

        // Without a header or times: the fallback directory, the fallback namer,
        // and the file's modification time.
        let plain = local.info(sessions[1]).unwrap();
        assert_eq!(plain.cwd, "/fallback");
        assert_eq!((plain.title.as_str(), plain.title_source), ("hello", Some(TitleSource::Fallback)));
        assert_eq!(plain.created_at.to_string(), "2023-11-14T22:13:20.000Z");
        assert_eq!(plain.updated_at, plain.created_at);

        // Lists order them by their own times, not the import's: the 2025
        // session is the most recent.
        assert_eq!(local.most_recent_session(None).unwrap().unwrap().id, sessions[0]);
        assert!(fx.store.check_cached_columns(seri_store::CheckMode::Report).unwrap().is_clean());
    }
}

fn millis(t: SystemTime) -> u128 {
    t.duration_since(UNIX_EPOCH).unwrap().as_millis()
}

#[test]
fn a_malformed_line_is_reported_with_file_and_line_and_the_rest_is_imported() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        write(&dir, "b.jsonl", BROKEN);
        let report = fx.local().import_legacy_sessions(&dir, "/w").unwrap();
        let sessions = report.new_sessions();
        let file = &report.files[0];
        assert_eq!((file.warnings[0].line, file.warnings[0].skipped), (3, true));
        insta::assert_snapshot!("malformed_line_report", shown(&report, &sessions));
        let events = fx.local().events(sessions[0], SeqRange::ALL).unwrap();
        assert_eq!(texts(&events), ["first", "second", "fourth"]);
    }
}

#[test]
fn importing_again_skips_imported_files_and_duplicates_nothing() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        write(&dir, "a.jsonl", FULL);
        write(&dir, "b.jsonl", PLAIN);
        let local = fx.local();
        let first = local.import_legacy_sessions(&dir, "/w").unwrap();
        let (sessions, events) = (all_sessions(&fx), total_events(&fx));
        assert!(!first.is_quiet());

        // Again, and through another spelling of the same folder.
        for again in [dir.clone(), dir.join("..").join("sessions")] {
            fx.clock.advance(60_000);
            let report = local.import_legacy_sessions(&again, "/w").unwrap();
            assert!(report.is_quiet() && report.new_sessions().is_empty(), "{report}");
            let ids = first.new_sessions();
            insta::assert_snapshot!(
                "second_run_report",
                shown(&report, &ids).replace(&again.display().to_string(), "<DIR>")
            );
            assert_eq!((all_sessions(&fx), total_events(&fx)), (sessions.clone(), events));
        }

        // Another agent's sessions are its own: it imports the files for itself.
        let other = fx.store.agent(&AgentId("other".into()));
        assert_eq!(other.import_legacy_sessions(&dir, "/w").unwrap().new_sessions().len(), 2);
        assert_eq!(all_sessions(&fx), sessions);
    }
}

#[test]
fn a_changed_file_is_imported_again_as_a_new_session() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        let path = write(&dir, "b.jsonl", PLAIN);
        let local = fx.local();
        let old = local.import_legacy_sessions(&dir, "/w").unwrap().new_sessions()[0];

        // The older release appended a turn.
        let mut bytes = fs::read(&path).unwrap();
        bytes.extend_from_slice(b"{\"role\":\"user\",\"content\":\"and then?\"}\n");
        fs::write(&path, bytes).unwrap();
        let report = local.import_legacy_sessions(&dir, "/w").unwrap();
        let new = report.new_sessions()[0];
        assert!(
            matches!(&report.files[0].outcome, FileOutcome::Reimported { earlier, events: 3, .. } if *earlier == [old])
        );
        insta::assert_snapshot!("changed_file_report", shown(&report, &[old, new]));
        assert_eq!(texts(&local.events(old, SeqRange::ALL).unwrap()), ["hello", "hi"]);
        assert_eq!(texts(&local.events(new, SeqRange::ALL).unwrap()), ["hello", "hi", "and then?"]);
        // And that content, too, is imported only once.
        assert!(local.import_legacy_sessions(&dir, "/w").unwrap().is_quiet());
    }
}

#[test]
fn a_start_trusts_a_checked_folder_until_it_changes_or_the_recheck_is_due() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        let a = write(&dir, "a.jsonl", PLAIN);
        let local = fx.local();
        // What a start does: the folder first.
        let start = || {
            local
                .import_legacy_sessions_and_read(&dir, "/w", FolderCheck::FolderFirst, |_, _| {}, |_| Ok(()))
                .unwrap()
                .0
        };
        let append = |path: &Path, secs: u64| {
            fs::write(path, format!("{}{}\n", fs::read_to_string(path).unwrap(), PLAIN[0])).unwrap();
            set_mtime(path, secs);
        };

        // The first start checks every file and imports it; the next finds
        // the folder as that check left it and looks at no file.
        assert_eq!(start().new_sessions().len(), 1);
        let report = start();
        assert!(report.files.is_empty() && report.is_quiet(), "{report:?}");

        // A new file changes the folder: every file is checked again.
        write(&dir, "b.jsonl", PLAIN);
        let report = start();
        assert_eq!((report.files.len(), report.new_sessions().len()), (2, 1));
        assert!(start().files.is_empty());

        // A file the older release appended to in place leaves the folder
        // as it was: a start picks it up once the recheck is due, and
        // `seri import` (every file) at once.
        append(&a, MTIME_SECS + 60);
        assert!(start().files.is_empty());
        fx.clock.advance(i64::try_from(FOLDER_RECHECK.as_millis()).unwrap());
        let report = start();
        assert_eq!((report.files.len(), report.new_sessions().len()), (2, 1));
        assert!(start().files.is_empty());
        append(&dir.join("b.jsonl"), MTIME_SECS + 60);
        assert_eq!(local.import_legacy_sessions(&dir, "/w").unwrap().new_sessions().len(), 1);

        // A removed file changes the folder too: nothing to tell, but every
        // file is looked at.
        fs::remove_file(dir.join("b.jsonl")).unwrap();
        let report = start();
        assert!(report.files.len() == 1 && report.is_quiet(), "{report:?}");
        assert!(start().files.is_empty());

        // A file that cannot be read is tried at every start.
        fs::create_dir_all(dir.join("c.jsonl")).unwrap();
        assert!(!start().is_quiet());
        for _ in 0..2 {
            let report = start();
            assert!(report.files.len() == 2 && report.is_quiet(), "{report:?}");
        }
        assert_eq!(all_sessions(&fx).len(), 4);
    }
}

#[test]
fn a_file_with_nothing_importable_creates_no_session_and_is_reported_once() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        write(&dir, "empty.jsonl", &[]);
        write(&dir, "header-only.jsonl", &[r#"{"type":"session","id":"x"}"#]);
        write(&dir, "junk.jsonl", &["not json", r#"{"role":"system","content":"be nice"}"#]);
        let local = fx.local();
        let report = local.import_legacy_sessions(&dir, "/w").unwrap();
        assert!(report.files.iter().all(|f| matches!(f.outcome, FileOutcome::NothingImportable)));
        insta::assert_snapshot!("nothing_importable_report", shown(&report, &[]));
        assert!(all_sessions(&fx).is_empty());
        let again = local.import_legacy_sessions(&dir, "/w").unwrap();
        assert!(again.is_quiet());
        insta::assert_snapshot!("nothing_importable_second_run", shown(&again, &[]));
    }
}

#[test]
fn an_unreadable_file_is_reported_and_the_others_are_imported() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        write(&dir, "a.jsonl", PLAIN);
        // Tests may run as root, who can read any file whatever its mode; a
        // folder and a dangling link are unreadable for everyone.
        fs::create_dir_all(dir.join("b.jsonl")).unwrap();
        std::os::unix::fs::symlink(dir.join("gone"), dir.join("c.jsonl")).unwrap();
        write(&dir, "d.jsonl", PLAIN);
        // Not legacy files: another suffix, a hidden file.
        write(&dir, "notes.txt", PLAIN);
        write(&dir, ".e.jsonl", PLAIN);
        let local = fx.local();
        let report = local.import_legacy_sessions(&dir, "/w").unwrap();
        let sessions = report.new_sessions();
        assert_eq!(sessions.len(), 2);
        assert!(matches!(report.files[1].outcome, FileOutcome::Unreadable { .. }));
        insta::assert_snapshot!("unreadable_files_report", shown(&report, &sessions));
        // They are tried again at the next import, and are old news: the
        // same versions failed before.
        assert!(!report.is_quiet());
        let again = local.import_legacy_sessions(&dir, "/w").unwrap();
        let failed_before =
            |f: &seri_import::FileReport| matches!(f.outcome, FileOutcome::Unreadable { reported_before: true, .. });
        assert_eq!(again.files.iter().filter(|f| failed_before(f)).count(), 2);
        assert!(again.is_quiet(), "{again}");
        assert_eq!(again.news().to_string(), "");
        // A changed file is a new version: still unreadable, it is news again.
        let when = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        fs::File::open(dir.join("b.jsonl")).unwrap().set_modified(when).unwrap();
        let changed = local.import_legacy_sessions(&dir, "/w").unwrap();
        assert_eq!(
            changed.news().to_string(),
            "failed sessions/b.jsonl: cannot read it: not a regular file (a folder)"
        );
    }
}

#[test]
fn a_fifo_named_like_a_session_file_is_reported_never_waited_on() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        write(&dir, "a.jsonl", PLAIN);
        // Opening a FIFO for reading blocks until someone writes; nobody will.
        let made = std::process::Command::new("mkfifo").arg(dir.join("b.jsonl")).status().unwrap();
        assert!(made.success());
        let report = fx.local().import_legacy_sessions(&dir, "/w").unwrap();
        assert_eq!(report.new_sessions().len(), 1, "the real file is imported");
        match &report.files[1].outcome {
            FileOutcome::Unreadable { error, reported_before: false } => {
                assert_eq!(error.to_string(), "not a regular file (a FIFO)");
            }
            other => panic!("the FIFO was not reported as unreadable: {other:?}"),
        }
    }
}

#[test]
fn a_missing_folder_is_nothing_to_import() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        let report = fx.local().import_legacy_sessions(&dir, "/w").unwrap();
        assert!(report.files.is_empty() && report.is_quiet());
        assert_eq!(shown(&report, &[]), "no .jsonl files in <DIR>");
        assert!(!dir.exists(), "importing created the folder");

        // A folder that exists but is a file is an error that names it.
        fs::write(&dir, b"").unwrap();
        let err = fx.local().import_legacy_sessions(&dir, "/w").unwrap_err();
        assert!(matches!(err, StoreError::Import(ImportError::Folder { ref path, .. }) if *path == dir), "{err:?}");
    }
}

/// Everything about the files a person could notice: names, bytes,
/// modification times and permissions.
fn snapshot_of(dir: &Path) -> Vec<(String, Vec<u8>, SystemTime, fs::Permissions)> {
    let mut out: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let bytes = if meta.is_file() { fs::read(&path).unwrap() } else { Vec::new() };
            (path.display().to_string(), bytes, meta.modified().unwrap(), meta.permissions())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn the_files_are_never_modified() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        write(&dir, "a.jsonl", FULL);
        write(&dir, "b.jsonl", BROKEN);
        write(&dir, "c.jsonl", &["junk"]);
        let before = snapshot_of(&dir);
        let local = fx.local();
        for _ in 0..2 {
            local.import_legacy_sessions(&dir, "/w").unwrap();
            assert_eq!(snapshot_of(&dir), before);
        }
    }
}

#[test]
fn a_store_failure_leaves_nothing_of_that_file_and_a_rerun_goes_on() {
    // One failure injected in the middle of the file's events, one at the
    // very last step (recording the import): either way, nothing of the file.
    let injections = [
        "BEFORE INSERT ON session_events WHEN NEW.seq = 2 AND NEW.payload LIKE '%second%'",
        "BEFORE INSERT ON legacy_imports WHEN NEW.path LIKE '%/b.jsonl'",
    ];
    for injection in injections {
        let fx = Fixture::sqlite();
        let dir = fx.profile().legacy_sessions_dir();
        write(&dir, "a.jsonl", PLAIN);
        write(&dir, "b.jsonl", BROKEN);
        write(&dir, "c.jsonl", PLAIN);
        let conn = Connection::open(fx.db_path()).unwrap();
        conn.execute_batch(&format!("CREATE TRIGGER inject {injection} BEGIN SELECT RAISE(ABORT, 'injected'); END;"))
            .unwrap();
        let local = fx.local();

        let err = local.import_legacy_sessions(&dir, "/w").unwrap_err();
        let StoreError::Import(ImportError::File { path, source }) = &err else { panic!("{err:?}") };
        assert_eq!(path, &dir.join("b.jsonl"));
        assert!(source.to_string().contains("injected"), "{source}");
        // a.jsonl is imported; of b.jsonl there is no session, no event and
        // no record; c.jsonl was not reached.
        let sessions = all_sessions(&fx);
        assert_eq!(sessions.len(), 1, "{injection}");
        assert_eq!(texts(&local.events(sessions[0], SeqRange::ALL).unwrap()), ["hello", "hi"]);
        let records: i64 = conn.query_row("SELECT count(*) FROM legacy_imports", [], |r| r.get(0)).unwrap();
        assert_eq!(records, 1);

        conn.execute_batch("DROP TRIGGER inject").unwrap();
        let report = local.import_legacy_sessions(&dir, "/w").unwrap();
        let outcomes: Vec<&str> = report
            .files
            .iter()
            .map(|f| match f.outcome {
                FileOutcome::AlreadyImported { .. } => "skipped",
                FileOutcome::Imported { .. } => "imported",
                _ => "other",
            })
            .collect();
        assert_eq!(outcomes, ["skipped", "imported", "imported"]);
        assert_eq!(all_sessions(&fx).len(), 3);
    }
}

#[test]
fn the_error_of_a_failed_file_says_what_was_kept() {
    let err = StoreError::Import(ImportError::File {
        path: "/p/sessions/b.jsonl".into(),
        source: Box::new(StoreError::Lookup(LookupError::UnknownSessionPrefix { prefix: "x".into() })),
    });
    assert_eq!(
        err.to_string(),
        "importing `/p/sessions/b.jsonl` failed and nothing of it was written (the files before it are imported; \
         import again to go on): no session id starts with `x`"
    );
}

#[test]
fn two_stores_importing_the_same_folder_at_once_import_each_file_once() {
    let fx = Fixture::sqlite();
    let dir = fx.profile().legacy_sessions_dir();
    let names: Vec<String> = (0..12).map(|i| format!("{i:02}.jsonl")).collect();
    for (i, name) in names.iter().enumerate() {
        write(&dir, name, &[&format!(r#"{{"role":"user","content":"file {i}"}}"#)]);
    }
    // As two `seri` processes starting at the same moment would: a store each.
    let reports: Vec<ImportReport> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (db, dir) = (fx.db_path(), dir.clone());
                scope.spawn(move || {
                    let store = seri_store::Store::open(db).unwrap();
                    store.agent(&AgentId::local()).import_legacy_sessions(&dir, "/w").unwrap()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let created: usize = reports.iter().map(|r| r.new_sessions().len()).sum();
    assert_eq!(created, names.len());
    assert_eq!(all_sessions(&fx).len(), names.len());
    // Each file was imported by one store and skipped by the other.
    for (i, name) in names.iter().enumerate() {
        let imported = reports.iter().filter(|r| r.files[i].new_session().is_some()).count();
        let skipped =
            reports.iter().filter(|r| matches!(r.files[i].outcome, FileOutcome::AlreadyImported { .. })).count();
        assert_eq!((imported, skipped), (1, 1), "{name}");
    }
}

#[test]
fn a_file_with_the_size_and_time_of_its_import_is_not_read_again() {
    let fx = Fixture::sqlite();
    let dir = fx.profile().legacy_sessions_dir();
    let path = write(&dir, "c.jsonl", PLAIN);
    let local = fx.local();
    let first = local.import_legacy_sessions(&dir, "/w").unwrap().new_sessions()[0];

    // Same size, same modification time, other bytes: taken as unchanged,
    // so the file is neither read nor hashed (a changed file moves its time).
    let same_size = fs::read_to_string(&path).unwrap().replace("hello", "HELLO");
    fs::write(&path, same_size).unwrap();
    set_mtime(&path, MTIME_SECS);
    let report = local.import_legacy_sessions(&dir, "/w").unwrap();
    assert!(report.is_quiet());
    assert!(
        matches!(&report.files[0].outcome, FileOutcome::AlreadyImported { session_id: Some(id) } if *id == first),
        "{:?}",
        report.files[0].outcome
    );
    // Once its time moves, the hash is taken and the new bytes imported.
    set_mtime(&path, MTIME_SECS + 60);
    let report = local.import_legacy_sessions(&dir, "/w").unwrap();
    assert!(matches!(&report.files[0].outcome, FileOutcome::Reimported { .. }), "{:?}", report.files[0].outcome);
}

#[test]
fn a_record_of_a_file_in_another_folder_never_stands_for_a_file_of_the_same_name() {
    let fx = Fixture::sqlite();
    let root = fx.profile().legacy_sessions_dir();
    let (a, b, nested) = (root.join("a"), root.join("b"), root.join("b/inner"));
    // Same name, same size, same time, other bytes, in three folders.
    write(&a, "c.jsonl", PLAIN);
    let other: Vec<String> = PLAIN.iter().map(|l| l.replace("hello", "HELLO")).collect();
    let other: Vec<&str> = other.iter().map(String::as_str).collect();
    write(&b, "c.jsonl", &other);
    write(&nested, "c.jsonl", &other);
    let local = fx.local();
    let from_nested = local.import_legacy_sessions(&nested, "/w").unwrap().new_sessions();
    let from_a = local.import_legacy_sessions(&a, "/w").unwrap().new_sessions();
    let from_b = local.import_legacy_sessions(&b, "/w").unwrap().new_sessions();
    assert_eq!((from_nested.len(), from_a.len(), from_b.len()), (1, 1, 1));
    assert_eq!(all_sessions(&fx).len(), 3);

    // The same folder by another spelling is the same folder: skipped by its stat.
    std::os::unix::fs::symlink(&a, root.join("link")).unwrap();
    let report = local.import_legacy_sessions(&root.join("link"), "/w").unwrap();
    assert!(report.is_quiet());
    assert!(
        matches!(&report.files[0].outcome, FileOutcome::AlreadyImported { session_id: Some(id) } if *id == from_a[0]),
        "{:?}",
        report.files[0].outcome
    );

    // A file that is a link is known by the `stat` of what it points to:
    // new bytes of the same size and time there are not read.
    let target = write(&root, "elsewhere.jsonl", PLAIN);
    std::os::unix::fs::symlink(&target, a.join("d.jsonl")).unwrap();
    let linked = local.import_legacy_sessions(&a, "/w").unwrap().new_sessions();
    assert_eq!(linked.len(), 1);
    fs::write(&target, fs::read_to_string(&target).unwrap().replace("hello", "HELLO")).unwrap();
    set_mtime(&target, MTIME_SECS);
    let report = local.import_legacy_sessions(&a, "/w").unwrap();
    assert!(report.is_quiet(), "{report}");
    let d = report.files.iter().find(|f| f.path.ends_with("d.jsonl")).unwrap();
    assert!(
        matches!(&d.outcome, FileOutcome::AlreadyImported { session_id: Some(id) } if *id == linked[0]),
        "{:?}",
        d.outcome
    );
}

/// Every session of the local agent in `store`, sorted.
fn sessions_in(r: &seri_store::Reader<'_>) -> seri_store::Result<Vec<SessionId>> {
    let mut ids: Vec<SessionId> = r.list_sessions(&SessionQuery::default())?.into_iter().map(|s| s.id).collect();
    ids.sort();
    Ok(ids)
}

#[test]
fn a_read_beside_the_import_answers_from_the_store_the_import_leaves() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let dir = fx.profile().legacy_sessions_dir();
        let local = fx.local();
        let mut reads = 0;
        let mut read_beside = |local: &seri_store::AgentStore<'_>| {
            reads = 0;
            let (report, answer) = local
                .import_legacy_sessions_and_read(
                    &dir,
                    "/w",
                    FolderCheck::EveryFile,
                    |_, _| {},
                    |r| {
                        reads += 1;
                        sessions_in(r)
                    },
                )
                .unwrap();
            (report, answer.unwrap(), reads)
        };

        // No folder: nothing to import, one read.
        let (report, answer, reads) = read_beside(&local);
        assert!(report.files.is_empty() && answer.is_empty() && reads == 1);

        // A new file: the snapshot read beside the scan predates its
        // session, so the answer is read again after the import.
        write(&dir, "a.jsonl", PLAIN);
        let (report, answer, reads) = read_beside(&local);
        assert_eq!((answer.clone(), reads), (report.new_sessions(), 2));

        // Nothing new: every file is as its record says, and the one read
        // made beside the scan is the answer.
        let (report, again, reads) = read_beside(&local);
        assert!(report.is_quiet());
        assert_eq!((again, reads), (answer.clone(), 1));

        // A file that cannot be read is news once (its failure is
        // recorded), then old news, which writes nothing.
        fs::create_dir_all(dir.join("b.jsonl")).unwrap();
        let (report, _, reads) = read_beside(&local);
        assert!(!report.is_quiet());
        assert_eq!(reads, 2);
        let (report, _, reads) = read_beside(&local);
        assert!(report.is_quiet());
        assert_eq!(reads, 1);

        // A changed file is imported again, and the answer has its session.
        let path = dir.join("a.jsonl");
        fs::write(&path, format!("{}\n{}\n", PLAIN[0], r#"{"role":"user","content":"more"}"#)).unwrap();
        set_mtime(&path, MTIME_SECS + 60);
        let (report, answer, reads) = read_beside(&local);
        assert_eq!(reads, 2);
        assert_eq!(answer, all_sessions(&fx));
        assert!(answer.contains(&report.new_sessions()[0]));

        // The read's own error comes next to the report of what was imported.
        write(&dir, "c.jsonl", PLAIN);
        let (report, answer) = local
            .import_legacy_sessions_and_read(
                &dir,
                "/w",
                FolderCheck::EveryFile,
                |_, _| {},
                |r| r.resolve_session("ffffffff"),
            )
            .unwrap();
        assert_eq!(report.new_sessions().len(), 1);
        assert!(matches!(answer, Err(StoreError::Lookup(LookupError::UnknownSessionPrefix { .. }))), "{answer:?}");
    }
}

#[test]
fn a_read_beside_the_import_sees_what_another_process_imported_since_its_snapshot() {
    let fx = Fixture::sqlite();
    let dir = fx.profile().legacy_sessions_dir();
    let path = write(&dir, "a.jsonl", PLAIN);
    let local = fx.local();
    let first = local.import_legacy_sessions(&dir, "/w").unwrap().new_sessions()[0];
    // The older release appends to the file.
    fs::write(&path, format!("{}{}\n", fs::read_to_string(&path).unwrap(), PLAIN[0])).unwrap();
    set_mtime(&path, MTIME_SECS + 60);

    // Another process imports the changed file while this one's snapshot
    // (taken before) is open: this import then finds those bytes imported
    // and writes nothing, but its snapshot lacks the other's session.
    let other = seri_store::Store::open(fx.db_path()).unwrap();
    let mut reads = 0;
    let (report, answer) = local
        .import_legacy_sessions_and_read(
            &dir,
            "/w",
            FolderCheck::EveryFile,
            |_, _| {},
            |r| {
                reads += 1;
                if reads == 1 {
                    other.agent(&AgentId::local()).import_legacy_sessions(&dir, "/w").unwrap();
                }
                sessions_in(r)
            },
        )
        .unwrap();
    assert!(
        matches!(report.files[0].outcome, FileOutcome::AlreadyImported { session_id: Some(id) } if id != first),
        "{:?}",
        report.files[0].outcome
    );
    assert_eq!(reads, 2, "the snapshot may lack what another process wrote, so it is read again");
    assert_eq!(answer.unwrap(), all_sessions(&fx));
    assert_eq!(all_sessions(&fx).len(), 2);
}

/// What an import told its progress bar, in order.
type Told = std::cell::RefCell<Vec<(u64, u64)>>;

/// Progress never goes back and ends at the total; `within` says which
/// parts of the total (as fractions) it must have stopped inside.
#[track_caller]
fn assert_progress(told: &[(u64, u64)], total: u64, within: &[(f64, f64)]) {
    assert!(told.windows(2).all(|pair| pair[0].0 <= pair[1].0), "it went back: {told:?}");
    assert!(told.iter().all(|&(_, t)| t == total), "another total than {total}");
    assert_eq!(told.last().map(|&(done, _)| done), Some(total), "it ends at the total");
    for &(from, to) in within {
        let inside = told.iter().any(|&(done, _)| {
            let part = done as f64 / total as f64;
            part > from && part < to
        });
        assert!(inside, "no progress between {from} and {to} of {total}: {told:?}");
    }
}

/// A pi file of `turns` questions and answers, about 100 bytes a line.
fn pi_lines(turns: usize) -> Vec<String> {
    let mut lines =
        vec![r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#.to_owned()];
    for n in 0..turns {
        let parent = if n == 0 { "null".to_owned() } else { format!("\"a{}\"", n - 1) };
        lines.push(format!(
            r#"{{"type":"message","id":"u{n}","parentId":{parent},"message":{{"role":"user","content":"question {n}"}}}}"#
        ));
        lines.push(format!(
            r#"{{"type":"message","id":"a{n}","parentId":"u{n}","message":{{"role":"assistant","content":[{{"type":"text","text":"answer {n}"}}]}}}}"#
        ));
    }
    lines
}

/// An import tells a progress bar how far it got by bytes: through each
/// reading of another agent's file in turn (hashing it, its tree, its
/// content), never back, to the file's size; and, for the profile's
/// folder, through the files that changed.
#[test]
fn an_import_tells_its_progress_by_bytes_through_each_reading_never_back() {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let dir = tempfile::tempdir().unwrap();
    let lines = pi_lines(20_000);
    let path = dir.path().join("s.jsonl");
    fs::write(&path, lines.join("\n")).unwrap();
    let size = fs::metadata(&path).unwrap().len();
    let told = Told::default();
    let report = seri_import::import_path_with_progress(&local, &path, "/w", |done, total| {
        told.borrow_mut().push((done, total));
    })
    .unwrap();
    assert!(matches!(report.files[0].outcome, FileOutcome::Imported { events: 40_000, .. }), "{:?}", report.files[0]);
    // Hashing takes the first tenth, the tree the next three, the content the rest.
    assert_progress(&told.borrow(), size, &[(0.0, 0.1), (0.1, 0.4), (0.4, 1.0)]);

    let profile_dir = fx.profile().legacy_sessions_dir();
    let a = write(&profile_dir, "a.jsonl", FULL);
    let b = write(&profile_dir, "b.jsonl", PLAIN);
    let total = fs::metadata(&a).unwrap().len() + fs::metadata(&b).unwrap().len();
    let told = Told::default();
    let tell = |done, total| told.borrow_mut().push((done, total));
    local
        .import_legacy_sessions_and_read(&profile_dir, "/w", FolderCheck::EveryFile, tell, |_| Ok(()))
        .unwrap()
        .1
        .unwrap();
    assert_progress(&told.borrow(), total, &[]);
    // Nothing changed: nothing to tell.
    let again = Told::default();
    let tell = |done, total| again.borrow_mut().push((done, total));
    local
        .import_legacy_sessions_and_read(&profile_dir, "/w", FolderCheck::EveryFile, tell, |_| Ok(()))
        .unwrap()
        .1
        .unwrap();
    assert!(again.borrow().iter().all(|&(_, total)| total == 0), "{:?}", again.borrow());
}
