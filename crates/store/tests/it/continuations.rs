//! Continuation edges: the reads the runtime needs (replay by tool call,
//! edges out of a predecessor, the edge into a successor, the successor
//! count) and the links `SessionInfo` shows on both sides.

use rusqlite::Connection;
use seri_core::{ContinueReason, EventBody, SessionId};
use seri_store::{DataError, LookupError, SeqRange, StoreError, WriteError};

use crate::support::*;

fn with_user_message(fx: &Fixture) -> SessionId {
    let local = fx.local();
    let id = fx.session(&local, "/work");
    local.append(id, [user("Plan the migration"), assistant("Here is a plan"), user("Now, the deploy")]).unwrap();
    id
}

#[test]
fn edges_are_found_by_tool_call_predecessor_and_successor() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let pred = with_user_message(&fx);
        fx.clock.advance(10);
        let first = local.write(|tx| continue_session(tx, pred, "call_1", "Deploy", None)).unwrap();
        // Someone came back to the predecessor and branched.
        local.append(pred, [user("Actually, the docs")]).unwrap();
        fx.clock.advance(10);
        let second = local.write(|tx| continue_session(tx, pred, "call_2", "Docs", None)).unwrap();

        assert_eq!(local.continuation_by_tool_call(pred, &"call_1".into()).unwrap(), Some(first.clone()));
        assert_eq!(local.continuation_by_tool_call(pred, &"call_9".into()).unwrap(), None);
        assert_eq!(local.continuations_from(pred).unwrap(), [first.clone(), second.clone()]);
        assert_eq!(local.continuation_into(second.successor_session_id).unwrap(), Some(second.clone()));
        assert_eq!(local.continuation_into(pred).unwrap(), None);
        assert_eq!(local.successor_count(pred).unwrap(), 2);
        assert_eq!(local.successor_count(first.successor_session_id).unwrap(), 0);

        // The initiating message is copied word for word, pointing back at its original.
        let original = local.event(second.initiating_event_id).unwrap();
        let copied = local.events(second.successor_session_id, SeqRange::ALL).unwrap().remove(1);
        let (original, copied) = (original.body.as_message().unwrap(), copied.body.as_message().unwrap());
        assert_eq!(copied.content, original.content);
        assert_eq!(copied.meta().continued_from.unwrap().event_id, second.initiating_event_id);
    }
}

#[test]
fn info_links_both_sides_with_current_titles_and_the_newest_successor() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let pred = with_user_message(&fx);
        fx.clock.advance(10);
        let first = local.write(|tx| continue_session(tx, pred, "call_1", "Deploy", None)).unwrap();
        fx.clock.advance(10);
        local.append(pred, [user("And the docs?")]).unwrap();
        let second = local.write(|tx| continue_session(tx, pred, "call_2", "Docs", None)).unwrap();

        let pred_info = local.info(pred).unwrap();
        let to = pred_info.continued_to.unwrap();
        assert_eq!(
            (to.continuation_id, to.session_id, to.title.as_str()),
            (second.id, second.successor_session_id, "Docs")
        );
        assert_eq!(to.reason, ContinueReason::TopicChange);
        assert_eq!(pred_info.continued_from, None);

        let succ_info = local.info(first.successor_session_id).unwrap();
        let from = succ_info.continued_from.unwrap();
        assert_eq!((from.session_id, from.title.as_str()), (pred, "Plan the migration"));
        assert_eq!(succ_info.title, "Deploy", "a successor keeps the title its predecessor gave it");

        // The link shows the other side's title as it is now.
        local.append(second.successor_session_id, [status(Some("Docs, rewritten"), None)]).unwrap();
        assert_eq!(local.info(pred).unwrap().continued_to.unwrap().title, "Docs, rewritten");
        assert_eq!(local.summary(pred).unwrap().continued_to.unwrap().title, "Docs, rewritten");
    }
}

#[test]
fn a_chain_keeps_its_origin() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let a = with_user_message(&fx);
        let ab = local.write(|tx| continue_session(tx, a, "call_1", "B", None)).unwrap();
        let b = ab.successor_session_id;
        local.append(b, [user("next phase")]).unwrap();
        let bc = local.write(|tx| continue_session(tx, b, "call_1", "C", None)).unwrap();
        assert_eq!((ab.origin_session_id, bc.origin_session_id, bc.predecessor_session_id), (a, a, b));
    }
}

#[test]
fn edges_that_break_the_rules_are_refused() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let pred = with_user_message(&fx);
        let edge = local.write(|tx| continue_session(tx, pred, "call_1", "Deploy", None)).unwrap();
        let other = with_user_message(&fx);
        let fresh = fx.session(&local, "/w");

        let try_insert =
            |edge: seri_core::ContinuationEdge| local.write(|tx| tx.insert_continuation(&edge)).unwrap_err();

        let replay = seri_core::ContinuationEdge {
            id: fx.store.new_continuation_id(),
            successor_session_id: fresh,
            ..edge.clone()
        };
        assert!(matches!(try_insert(replay), StoreError::Write(WriteError::ContinuationExists { .. })));

        let taken = seri_core::ContinuationEdge {
            id: fx.store.new_continuation_id(),
            tool_call_id: "call_2".into(),
            ..edge.clone()
        };
        assert!(matches!(try_insert(taken), StoreError::Write(WriteError::SuccessorTaken { .. })));

        let foreign_event = local.newest_user_message(other).unwrap().unwrap().id;
        let wrong_event = seri_core::ContinuationEdge {
            id: fx.store.new_continuation_id(),
            tool_call_id: "call_3".into(),
            successor_session_id: fresh,
            initiating_event_id: foreign_event,
            ..edge.clone()
        };
        let err = try_insert(wrong_event);
        assert_eq!(err.to_string(), format!("event `{foreign_event}` is not an event of session `{pred}`"));

        let itself = seri_core::ContinuationEdge {
            id: fx.store.new_continuation_id(),
            tool_call_id: "call_4".into(),
            successor_session_id: pred,
            ..edge.clone()
        };
        assert!(matches!(try_insert(itself), StoreError::Data(DataError::InconsistentContinuation { .. })));

        let mut mismatched = seri_core::ContinuationEdge {
            id: fx.store.new_continuation_id(),
            tool_call_id: "call_5".into(),
            successor_session_id: fresh,
            ..edge.clone()
        };
        mismatched.manifest.predecessor_session_id = other;
        assert!(matches!(try_insert(mismatched), StoreError::Data(DataError::InconsistentContinuation { .. })));

        let theirs = fx.store.agent(&seri_core::AgentId("acct-2".into()));
        let err = theirs.write(|tx| tx.insert_continuation(&edge)).unwrap_err();
        assert!(matches!(err, StoreError::Lookup(LookupError::UnknownSession { .. })), "{err:?}");
        assert_eq!(local.successor_count(pred).unwrap(), 1);
    }
}

#[test]
fn the_manifest_is_stored_as_cbor_and_read_back_unchanged() {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let pred = with_user_message(&fx);
    let edge = local.write(|tx| continue_session(tx, pred, "call_1", "Deploy", None)).unwrap();
    let conn = Connection::open(fx.db_path()).unwrap();
    let stored: Vec<u8> = conn
        .query_row("SELECT manifest_cbor FROM session_continuations WHERE id = ?1", [edge.id.to_string()], |r| r.get(0))
        .unwrap();
    let decoded: seri_core::SessionContinuationManifest = ciborium::from_reader(stored.as_slice()).unwrap();
    assert_eq!(decoded, edge.manifest);
    let mut encoded = Vec::new();
    ciborium::into_writer(&edge.manifest, &mut encoded).unwrap();
    assert_eq!(stored, encoded);
    assert!(matches!(
        local.events(edge.successor_session_id, SeqRange::ALL).unwrap()[0].body,
        EventBody::Message(ref m) if m.meta().projection_of == Some(edge.id)
    ));
}
