//! The transaction API: a continuation's writes (a session, an edge, two
//! events, attachment links) commit together or not at all, whichever step
//! fails, and a full disk is a clear error that leaves the store consistent.

use seri_core::{AgentId, Attachment, EventBody, Message, SessionId};
use seri_store::{CheckMode, EngineError, SeqRange, SessionQuery, StoreError, StoreOptions, WriteError};

use crate::support::*;

/// Everything observable about the store's contents, to compare before and after.
#[derive(Debug, PartialEq)]
struct Contents {
    sessions: Vec<SessionId>,
    /// Per session: events and edges out of it.
    counts: Vec<(SessionId, u64, usize)>,
    attachment_files: Vec<String>,
}

fn contents(fx: &Fixture) -> Contents {
    let local = fx.local();
    let sessions: Vec<SessionId> =
        local.list_sessions(&SessionQuery::default()).unwrap().into_iter().map(|s| s.id).collect();
    let counts = sessions
        .iter()
        .map(|&s| (s, local.event_count(s).unwrap(), local.continuations_from(s).unwrap().len()))
        .collect();
    Contents { sessions, counts, attachment_files: walk(&fx.profile().attachments_dir()) }
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path.display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// A predecessor whose newest user message carries an attachment.
fn predecessor(fx: &Fixture) -> SessionId {
    let local = fx.local();
    let id = fx.session(&local, "/work");
    let file = local.store_attachment(id, "notes.txt", Some("text/plain".into()), b"notes").unwrap();
    let message = Message { attachments: vec![file], ..Message::user("let's talk about the deploy instead") };
    local.append(id, [user("first topic"), assistant("ok"), EventBody::Message(message)]).unwrap();
    id
}

#[test]
fn a_continuation_commits_all_or_nothing_whichever_step_fails() {
    for backend in Backend::all() {
        for fail_after in 0..=CONTINUATION_STEPS.len() {
            let fx = Fixture::on(backend);
            let pred = predecessor(&fx);
            let before = contents(&fx);
            let result = fx.local().write(|tx| continue_session(tx, pred, "call_1", "Deploy", Some(fail_after)));
            assert!(
                matches!(result, Err(StepError::Injected { after_step }) if after_step == fail_after),
                "{result:?}"
            );
            assert_eq!(contents(&fx), before, "a failure after {fail_after} steps left something behind");
        }

        // Without a failure, every part is there.
        let fx = Fixture::on(backend);
        let pred = predecessor(&fx);
        let edge = fx.local().write(|tx| continue_session(tx, pred, "call_1", "Deploy", None)).unwrap();
        let local = fx.local();
        let succ = edge.successor_session_id;
        assert_eq!(local.event_count(succ).unwrap(), 2);
        assert_eq!(local.continuation_into(succ).unwrap(), Some(edge.clone()));
        let copied = &local.events(succ, SeqRange::ALL).unwrap()[1];
        let attachment: &Attachment = &copied.body.as_message().unwrap().attachments[0];
        let path = local.resolve_attachment(succ, &format!("attachment:{}", attachment.id)).unwrap();
        assert_eq!(std::fs::read(path).unwrap(), b"notes");
    }
}

#[test]
fn an_error_from_the_store_midway_rolls_back_the_earlier_steps() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let pred = predecessor(&fx);
        fx.local().write(|tx| continue_session(tx, pred, "call_1", "Deploy", None)).unwrap();
        let before = contents(&fx);
        // The same tool call again: the successor is created, then the edge is refused.
        let err = fx.local().write(|tx| continue_session(tx, pred, "call_1", "Deploy again", None)).unwrap_err();
        assert!(matches!(err, StepError::Store(StoreError::Write(WriteError::ContinuationExists { .. }))), "{err:?}");
        assert_eq!(contents(&fx), before);
    }
}

#[test]
fn a_panic_inside_a_transaction_rolls_it_back_and_the_store_stays_usable() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/w");
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = local.write(|tx| -> Result<(), StoreError> {
                tx.append(id, [user("half")])?;
                panic!("the caller's bug");
            });
        }));
        assert!(outcome.is_err());
        assert_eq!(local.event_count(id).unwrap(), 0);
        assert_eq!(seqs(&local.append(id, [user("whole")]).unwrap()), [1]);
    }
}

#[test]
fn a_full_disk_is_a_clear_error_and_leaves_the_store_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let profile = seri_store::Profile::at(dir.path());
    // A store that may not grow past 512 KiB behaves as a disk that fills up.
    let options = StoreOptions { size_limit_bytes: Some(512 * 1024), ..StoreOptions::default() };
    let store = profile.open_store_with(options).unwrap();
    let local = store.agent(&AgentId::local());
    let seed = local.new_seed("/w");
    local.create_session(&seed).unwrap();
    let big = "x".repeat(16 * 1024);
    let mut appended = 0;
    let err = loop {
        match local.append(seed.id, [user(&big), assistant(&big)]) {
            Ok(events) => appended += events.len() as u64,
            Err(e) => break e,
        }
        assert!(appended < 1_000, "the size limit never took effect");
    };
    assert!(matches!(err, StoreError::Engine(EngineError::DiskFull { .. })), "{err:?}");
    let message = err.to_string().replace(&dir.path().display().to_string(), "<DIR>");
    insta::assert_snapshot!("full_disk", message);

    // Nothing of the failed batch is visible, seqs are still gapless, and
    // the cached columns still match the fold.
    assert_eq!(local.event_count(seed.id).unwrap(), appended);
    let events = local.events(seed.id, SeqRange::ALL).unwrap();
    assert_eq!(seqs(&events), (1..=appended).collect::<Vec<_>>());
    assert!(store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
    drop(store);
    let reopened = profile.open_store().unwrap();
    assert_eq!(reopened.agent(&AgentId::local()).event_count(seed.id).unwrap(), appended);
}
