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
