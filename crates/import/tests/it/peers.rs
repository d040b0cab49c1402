//! Other agents' sessions imported (`seri_import::import_path`): every
//! file the peers recorded (`tests/fixtures/peers/`), found below a folder
//! searched recursively, becomes a session in its working directory whose
//! events are the branch the peer last left it on, each call followed by
//! its result; importing again, by folder or by file, writes nothing.

use std::path::{Path, PathBuf};

use seri_core::Seq;
use seri_import::{FileOutcome, ImportReport};
use seri_store::{SeqRange, SessionQuery};

use crate::support::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join("peers")
}

/// A copy of the recorded files: reading opencode's database (WAL mode),
/// even read-only, makes its `-shm` and `-wal` beside it.
fn fixtures_copy() -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &to.join(entry.file_name()));
            } else {
                std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(&fixtures(), dir.path());
    dir
}

/// The recorded opencode database, copied into a folder of its own.
fn opencode_database() -> (tempfile::TempDir, PathBuf) {
    let copy = fixtures_copy();
    let recorded = std::fs::read_dir(copy.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.file_name().unwrap().to_string_lossy().starts_with("opencode-"))
        .unwrap()
        .join(".local/share/opencode/opencode.db");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("opencode")).unwrap();
    let database = dir.path().join("opencode").join("opencode.db");
    std::fs::copy(recorded, &database).unwrap();
    (dir, database)
}

/// Each file as `format path: outcome (events)`, without the session ids.
fn outcomes(report: &ImportReport) -> String {
    let mut out = String::new();
    for file in &report.files {
        let format = file.format.map_or("seri", |format| format.name());
        let outcome = match &file.outcome {
            FileOutcome::Imported { events, forks: 0, .. } => format!("imported ({events} events)"),
            FileOutcome::Imported { events, forks, .. } => format!("imported ({events} events, {forks} forks)"),
            FileOutcome::Reimported { events, .. } => format!("re-imported ({events} events)"),
            FileOutcome::AlreadyImported { session_id: Some(_) } => "already imported".to_owned(),
            other => format!("{other:?}"),
        };
        let skipped: u64 = file.warnings.iter().filter(|w| w.skipped).map(|w| w.count).sum();
        out.push_str(&format!("{format} {}: {outcome}, {skipped} lines skipped\n", file.short_path()));
    }
    out
}

#[test]
fn the_peers_recordings_become_sessions_once_from_a_folder_searched_recursively() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let copy = fixtures_copy();
        let fixtures = || copy.path().to_path_buf();
        let first = seri_import::import_path(&local, &fixtures(), "/w").unwrap();
        insta::assert_snapshot!("peer_files_imported", outcomes(&first));

        let sessions = local.list_sessions(&SessionQuery::default()).unwrap();
        // Eight files; the two holding a branch the session left (Claude
        // Code's and pi's) each add a fork by reference where the branch
        // leaves the main one. Codex's fork (by reference, `forked_from_id`),
        // pi's (`parentSession`, a file that copies every entry of its
        // source) and Claude Code's (`--fork-session`, a file that copies the
        // compacted context without naming its source) are forks of their
        // sources' sessions, holding only their own events; the branch pi's
        // fork copied is not made twice.
        assert_eq!(sessions.len(), 8 + 2);
        let forks: Vec<_> = sessions.iter().filter_map(|s| s.forked_from.as_ref().map(|f| (s.id, f))).collect();
        // opencode's fork (a session that copies its source's messages under
        // new ids, named only by its title) is a fork of its source too.
        assert_eq!(forks.len(), 6);
        let session_of = |name: &str| {
            let file = first.files.iter().find(|f| f.short_path().contains(name)).unwrap();
            match file.outcome {
                FileOutcome::Imported { session_id, .. } => session_id,
                ref other => panic!("{other:?}"),
            }
        };
        for (fork, source) in [
            ("01a23593-dea3", "01a23593-d7cb"),
            ("01a23593-f34f", "01a23593-e859"),
            ("4cb29d5f", "5e551011"),
            ("ses_dc974d90", "ses_dc9753dd"),
        ] {
            let fork = sessions.iter().find(|s| s.id == session_of(fork)).unwrap();
            let from = fork.forked_from.as_ref().expect("a fork of its source's session");
            assert_eq!(from.session_id, session_of(source));
            let parent = sessions.iter().find(|s| s.id == from.session_id).unwrap();
            assert!(from.fork_seq.get() > 0 && from.fork_seq.get() <= parent.last_seq);
        }
        for (fork, from) in &forks {
            let own = local.events(*fork, SeqRange::starting_at(Seq(from.fork_seq.get() + 1))).unwrap();
            assert!(!own.is_empty(), "a fork has events of its own");
            let shared = local.events(*fork, SeqRange::between(Seq(1), from.fork_seq)).unwrap();
            let parents = local.events(from.session_id, SeqRange::between(Seq(1), from.fork_seq)).unwrap();
            let ids = |events: &[seri_core::Event]| events.iter().map(|e| e.id).collect::<Vec<_>>();
            assert_eq!(ids(&shared), ids(&parents), "the shared part is the parent's own events, not copies");
            assert_eq!(from.via, seri_core::ForkVia::Import);
        }
        assert!(sessions.iter().all(|s| s.cwd == "/tmp/seri-peer-home/project"), "each in its project");

        // Each session's events: calls answered in order, as the run loop needs them.
        let mut transcripts = String::new();
        for file in &first.files {
            let Some(id) = file.new_session() else { continue };
            let events = local.events(id, SeqRange::starting_at(Seq(1))).unwrap();
            let mut waiting = std::collections::VecDeque::new();
            for event in &events {
                match &event.body {
                    seri_core::EventBody::ToolCall(call) => waiting.push_back(call.id.clone()),
                    seri_core::EventBody::ToolResult(result) => {
                        assert_eq!(waiting.pop_front(), Some(result.tool_call_id.clone()), "{}", file.short_path())
                    }
                    _ => assert!(waiting.is_empty(), "{}: a message before the results", file.short_path()),
                }
            }
            // Claude Code's session (its id is the recording's choice) and pi's
            // (the first of its two files by name, which starts with its time).
            let pi_first = first.files.iter().find(|f| f.format == Some(seri_import::peers::Format::Pi));
            if file.short_path().contains("5e551011") || pi_first.is_some_and(|f| f.path == file.path) {
                transcripts.push_str(&format!("{}\n", file.short_path()));
                for event in &events {
                    transcripts.push_str(&format!("  {}\n", seri_projection::transcript_event_line(event)));
                }
            }
        }
        insta::assert_snapshot!("peer_transcripts", transcripts);

        // Each peer's compaction is a mark: the peer's own summary is the
        // recap, the history before it stays, and the answers say whose model.
        for (name, read) in
            [("5e551011", &[][..]), ("01a23593-d7cb", &[]), ("01a23593-e859", &["notes.txt"]), ("ses_dc9753dd", &[])]
        {
            let events = local.events(session_of(name), SeqRange::starting_at(Seq(1))).unwrap();
            let marks: Vec<_> = events
                .iter()
                .filter_map(|e| match &e.body {
                    seri_core::EventBody::ContextCompacted(c) => Some((e.seq, c)),
                    _ => None,
                })
                .collect();
            let [(seq, mark)] = marks[..] else { panic!("{name}: one compaction, found {}", marks.len()) };
            assert!(!mark.recap.progress.trim().is_empty(), "{name}: the summary is the recap");
            assert!(mark.evicted_from_seq <= mark.evicted_to_seq && mark.kept_from_seq <= seq, "{name}: {mark:?}");
            assert_eq!(mark.read, read, "{name}");
            assert!(
                events.iter().filter_map(|e| e.body.as_message()).any(|m| m.meta().model.is_some()),
                "{name}: the peer's model is on its answers"
            );
        }

        // Again: by the folder, and each file by name, nothing is written.
        fx.clock.advance(60_000);
        let again = seri_import::import_path(&local, &fixtures(), "/w").unwrap();
        assert!(again.new_sessions().is_empty(), "{}", outcomes(&again));
        for file in &first.files {
            // One of opencode's sessions is named by its database.
            let path = file.path.to_string_lossy();
            let named = path.split_once('#').map_or(file.path.clone(), |(database, _)| PathBuf::from(database));
            let named = seri_import::import_path(&local, &named, "/w").unwrap();
            assert!(!named.files.is_empty());
            assert!(named.files.iter().all(|one| matches!(one.outcome, FileOutcome::AlreadyImported { .. })));
        }
        assert_eq!(local.list_sessions(&SessionQuery::default()).unwrap().len(), 8 + 2);
    }
}

/// Claude Code's recorded session as it was after its first `lines`
/// lines, then whole: the file a resumed session grows.
#[test]
fn a_peer_file_that_grew_adds_its_new_events_to_the_same_session() {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let recorded = std::fs::read(fixtures().join(
        "claude-code-2.1.197/.claude/projects/-tmp-seri-peer-home-project/5e551011-0000-4000-8000-000000000001.jsonl",
    ))
    .unwrap();
    let lines: Vec<&[u8]> = recorded.split_inclusive(|b| *b == b'\n').collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("5e551011-0000-4000-8000-000000000001.jsonl");
    // The first turn, to the line after its answer.
    std::fs::write(&file, lines[..11].concat()).unwrap();
    let first = seri_import::import_path(&local, &file, "/w").unwrap();
    let FileOutcome::Imported { session_id, events: 6, .. } = first.files[0].outcome else {
        panic!("{:?}", first.files[0].outcome)
    };
    std::fs::write(&file, &recorded).unwrap();
    let grown = seri_import::import_path(&local, &file, "/w").unwrap();
    assert!(
        // Three messages and the compaction between them, as a mark.
        matches!(grown.files[0].outcome, FileOutcome::Grew { session_id: id, events: 5 } if id == session_id),
        "{:?}",
        grown.files[0].outcome
    );
    assert_eq!(local.list_sessions(&SessionQuery::default()).unwrap().len(), 1);
    let texts = texts(&local.events(session_id, SeqRange::starting_at(Seq(1))).unwrap());
    assert_eq!(texts.last().map(String::as_str), Some("Goodbye!"));

    // A change in what is not imported (a bookkeeping line) adds nothing, quietly.
    let mut more = recorded.clone();
    more.extend_from_slice(lines[0]);
    std::fs::write(&file, &more).unwrap();
    let same = seri_import::import_path(&local, &file, "/w").unwrap();
    assert!(matches!(same.files[0].outcome, FileOutcome::AlreadyImported { session_id: Some(id) } if id == session_id));

    // Moved elsewhere (as `codex archive` moves a rollout), it is the same session.
    let moved = dir.path().join("archived");
    std::fs::create_dir(&moved).unwrap();
    std::fs::rename(&file, moved.join("5e551011-0000-4000-8000-000000000001.jsonl")).unwrap();
    let archived = seri_import::import_path(&local, &moved, "/w").unwrap();
    assert!(
        matches!(archived.files[0].outcome, FileOutcome::AlreadyImported { session_id: Some(id) } if id == session_id)
    );
    std::fs::rename(moved.join("5e551011-0000-4000-8000-000000000001.jsonl"), &file).unwrap();

    // A file that no longer begins with what the session holds is a new session.
    std::fs::write(&file, lines[..3].concat()).unwrap();
    let other = seri_import::import_path(&local, &file, "/w").unwrap();
    assert!(matches!(other.files[0].outcome, FileOutcome::Reimported { .. }), "{:?}", other.files[0].outcome);
}

/// opencode's database, named: each session imported once, the fork (a
/// copy of its source's messages under new ids, named only by its title) a
/// fork of its source; again, nothing; a session that grew adds its new
/// events; a database opencode holds locked is a precise error.
#[test]
fn opencode_database_sessions_are_imported_once_and_grow() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let (_dir, database) = opencode_database();
        let first = seri_import::import_path(&local, &database, "/w").unwrap();
        insta::assert_snapshot!("opencode_database_imported", outcomes(&first));
        let sessions = local.list_sessions(&SessionQuery::default()).unwrap();
        assert_eq!(sessions.len(), 2);
        let fork = sessions.iter().find(|s| s.forked_from.is_some()).expect("the fork is a fork");
        let source = sessions.iter().find(|s| s.forked_from.is_none()).unwrap();
        assert_eq!(fork.forked_from.as_ref().unwrap().session_id, source.id);
        assert!(sessions.iter().all(|s| s.cwd == "/tmp/seri-peer-home/project"));

        // The same database again, and its folder: nothing is written.
        fx.clock.advance(60_000);
        for again in [&database, &database.parent().unwrap().to_path_buf()] {
            let again = seri_import::import_path(&local, again, "/w").unwrap();
            assert_eq!(again.files.len(), 2);
            assert!(again.files.iter().all(|f| matches!(f.outcome, FileOutcome::AlreadyImported { .. })));
        }

        // The source session went on in opencode: its new prompt is added.
        {
            let db = rusqlite::Connection::open(&database).unwrap();
            let (message, data): (String, String) = db
                .query_row(
                    "select id, data from message where session_id = ?1 and data like '%\"role\":\"user\"%' \
                     order by time_created desc, id desc limit 1",
                    [source_id(&database)],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .unwrap();
            let session = source_id(&database);
            let part: String = db
                .query_row(
                    "select data from part where message_id = ?1 and data like '%\"text\"%' limit 1",
                    [&message],
                    |row| row.get(0),
                )
                .unwrap();
            db.execute(
                "insert into message (id, session_id, time_created, time_updated, data) values ('msg_zzzz_later', ?1, 9999999999999, 9999999999999, ?2)",
                [&session, &data],
            )
            .unwrap();
            db.execute(
                "insert into part (id, message_id, session_id, time_created, time_updated, data) values ('prt_zzzz_later', 'msg_zzzz_later', ?1, 9999999999999, 9999999999999, ?2)",
                [&session, &part.replace("Now say goodbye.", "And once more.")],
            )
            .unwrap();
        }
        let grown = seri_import::import_path(&local, &database, "/w").unwrap();
        let outcomes: Vec<&FileOutcome> = grown.files.iter().map(|f| &f.outcome).collect();
        let grew =
            |o: &FileOutcome| matches!(o, FileOutcome::Grew { session_id, events: 1 } if *session_id == source.id);
        assert_eq!(outcomes.iter().filter(|o| grew(o)).count(), 1, "{outcomes:?}");
        assert!(outcomes.iter().filter(|o| !grew(o)).all(|o| matches!(o, FileOutcome::AlreadyImported { .. })));
        let texts = texts(&local.events(source.id, SeqRange::starting_at(Seq(1))).unwrap());
        assert_eq!(texts.last().map(String::as_str), Some("And once more."));

        // While opencode holds a write lock, the database is reported, not imported.
        let holder = rusqlite::Connection::open(&database).unwrap();
        holder.execute_batch("pragma journal_mode = delete; begin exclusive;").unwrap();
        let locked = seri_import::import_path(&local, &database, "/w").unwrap();
        let [ref one] = locked.files[..] else { panic!("{:?}", locked.files) };
        let FileOutcome::Unreadable { ref error, .. } = one.outcome else { panic!("{:?}", one.outcome) };
        assert!(error.to_string().contains("busy"), "{error}");
        holder.execute_batch("rollback").unwrap();
    }
}

/// The id of the session the recording forked (the one whose title is not a fork's).
fn source_id(database: &Path) -> String {
    let db = rusqlite::Connection::open_with_flags(database, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    db.query_row("select id from session where title not like '%(fork #%'", [], |row| row.get(0)).unwrap()
}

#[test]
fn a_named_file_with_nothing_importable_says_so() {
    let fx = Fixture::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.jsonl");
    std::fs::write(&file, "not json\n").unwrap();
    let report = seri_import::import_path(&fx.local(), &file, "/w").unwrap();
    assert!(matches!(report.files[..], [ref one] if matches!(one.outcome, FileOutcome::NothingImportable)));
    let missing = seri_import::import_path(&fx.local(), &dir.path().join("gone"), "/w").unwrap_err();
    assert!(missing.to_string().contains("gone"), "{missing}");
}
