//! U+0000 in what a session holds. PostgreSQL's text cannot hold it and its
//! JSON types refuse the escape `\u0000`; the store keeps every event that
//! holds one exactly, on every backend, and copies it between them.

use seri_core::{EventBody, Message, MessageMeta, SessionInfo, TitleSource};
use seri_store::{CheckMode, SeqRange, SessionQuery};

use crate::support::*;

/// Text with a NUL, the escape's spelling as plain text (a backslash and
/// `u0000`), escaped backslashes around both, and a NUL at each end.
const TRICKY: &str = "\0starts, a\0b, c:\\dir\\, the text \\u0000, \\\\u0000 and \\\0 then \0";

fn rule_message(path: &str, text: &str) -> EventBody {
    let meta = MessageMeta { rule: Some(path.to_owned()), ..Default::default() };
    EventBody::Message(Message { meta: Some(Box::new(meta)), ..Message::user(text) })
}

#[test]
fn events_holding_nul_round_trip_exactly_on_every_backend() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/work");
        let bodies = [
            user(TRICKY),
            assistant(TRICKY),
            tool_call("c\0", "read"),
            tool_result("c\0", "read", TRICKY),
            rule_message(".seri/rules/a.md", TRICKY),
            // A rule's path with backslashes and the escape's spelling: the
            // index reads it exactly.
            rule_message("C:\\rules\\u0000\\b.md", "rule text"),
            status(Some("a\0title"), Some(TRICKY)),
        ];
        let appended = local.append(id, bodies.clone()).unwrap();
        let read = local.events(id, SeqRange::ALL).unwrap();
        assert_eq!(read, appended, "{backend:?}");
        assert_eq!(read.iter().map(|e| e.body.clone()).collect::<Vec<_>>(), bodies, "{backend:?}");
        let fired: Vec<String> = local.fired_rules(id).unwrap().into_iter().collect();
        assert_eq!(fired, [".seri/rules/a.md", "C:\\rules\\u0000\\b.md"], "{backend:?}");
        // What the session is called holds no NUL (PostgreSQL's text
        // cannot); the fold and the cached columns agree.
        let info = local.info(id).unwrap();
        assert_eq!(info.title, "a\u{fffd}title", "{backend:?}");
        assert_eq!(info.description, TRICKY.replace('\0', "\u{fffd}"), "{backend:?}");
        let listed = local.list_sessions(&SessionQuery::default()).unwrap();
        assert_eq!(listed[0].title, "a\u{fffd}title", "{backend:?}");
        assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().mismatches.is_empty(), "{backend:?}");
    }
}

#[test]
fn a_first_message_holding_nul_names_the_session_without_it() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/work");
        local.append(id, [user("fix\0 the bug")]).unwrap();
        let info = local.info(id).unwrap();
        assert_eq!((info.title.as_str(), info.title_source), ("fix\u{fffd} the bug", Some(TitleSource::Fallback)));
        assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().mismatches.is_empty(), "{backend:?}");
    }
}

#[test]
fn a_run_answered_with_nul_records_its_result() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/work");
        let run = fx.store.new_run_id();
        let record = seri_store::RunRecord {
            id: run,
            session_id: id,
            kind: seri_core::RunKindName::Interactive,
            lane: seri_core::Lane::Interactive,
            parent_run_id: None,
            status: seri_core::RunStatus::Running,
            result: None,
            started_at: T0,
            finished_at: None,
        };
        local.start_run(&record).unwrap();
        local.append(id, [user(TRICKY), assistant(TRICKY)]).unwrap();
        let result = seri_store::RunResult { result: Some(TRICKY.into()), ..Default::default() };
        local.write(|tx| tx.finish_run(run, seri_core::RunStatus::Succeeded, &result)).unwrap();
        let runs = local.runs(id).unwrap();
        assert_eq!(runs[0].result.as_ref(), Some(&result), "{backend:?}");
    }
}

#[test]
fn a_profile_holding_nul_is_copied_whole() {
    for backend in Backend::all() {
        let source = Fixture::sqlite();
        let local = source.local();
        let id = source.session(&local, "/work");
        local.append(id, [user(TRICKY), rule_message(".seri/rules/a.md", TRICKY), status(None, Some(TRICKY))]).unwrap();
        let target = Fixture::on(backend);
        let report = source.store.copy_into(&target.store).unwrap();
        assert_eq!(report.tables["session_events"].copied, 3, "{report}");
        let events = |fx: &Fixture| fx.local().events(id, SeqRange::ALL).unwrap();
        assert_eq!(events(&target), events(&source), "{backend:?}");
        let info = |fx: &Fixture| -> SessionInfo { fx.local().info(id).unwrap() };
        assert_eq!(info(&target), info(&source), "{backend:?}");
        assert_eq!(target.local().fired_rules(id).unwrap().len(), 1);
    }
}

#[test]
fn a_profile_an_older_build_wrote_with_nul_in_a_title_is_copied() {
    for backend in Backend::all() {
        // Before titles showed U+0000 as U+FFFD, the cached columns held it
        // raw, as the fold of a first message holding one made them.
        let source = Fixture::sqlite();
        let local = source.local();
        let id = source.session(&local, "/work");
        local.append(id, [user("fix\0 the bug"), status(None, Some("in\0 progress"))]).unwrap();
        let db = rusqlite::Connection::open(source.db_path()).unwrap();
        db.execute(
            "UPDATE sessions SET title = 'fix' || char(0) || ' the bug', description = 'in' || char(0) || ' progress'",
            [],
        )
        .unwrap();
        let target = Fixture::on(backend);
        let report = source.store.copy_into(&target.store).unwrap();
        assert_eq!(report.sessions_verified, 1, "{report}");
        let info = target.local().info(id).unwrap();
        assert_eq!((info.title.as_str(), info.description.as_str()), ("fix\u{fffd} the bug", "in\u{fffd} progress"));
        assert_eq!(target.local().events(id, SeqRange::ALL).unwrap(), local.events(id, SeqRange::ALL).unwrap());
        // The source's cache is stale (the check finds it, and `Repair`
        // mends it); PostgreSQL's copy holds what the fold shows, while a
        // SQLite copy is verbatim, stale cache and all.
        assert_eq!(source.store.check_cached_columns(CheckMode::Report).unwrap().mismatches.len(), 2);
        let mismatches = target.store.check_cached_columns(CheckMode::Report).unwrap().mismatches;
        assert_eq!(mismatches.is_empty(), backend == Backend::Postgres, "{backend:?}: {mismatches:?}");
    }
}
