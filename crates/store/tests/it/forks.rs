//! Forks by reference: a fork shares its parent's events up to the fork
//! point without copying a row, numbers its own from there, and reads as
//! one history everywhere a session's events are read.

use seri_core::{ContextRewound, EventBody, ForkVia, Seq, SeqRange, SessionId};
use seri_store::{CheckMode, SessionQuery, StoreErrorKind};

use crate::support::*;

fn fork(fx: &Fixture, parent: SessionId, at: Option<u64>) -> SessionId {
    fx.clock.advance(1);
    fx.local().write(|tx| tx.fork_session(parent, at.map(Seq), ForkVia::Cli)).unwrap().id
}

/// Every event row of the store: a fork must add none of its parent's.
fn own_rows(fx: &Fixture) -> u64 {
    fx.store.check_cached_columns(CheckMode::Report).unwrap().events
}

#[test]
fn a_fork_reads_its_parent_up_to_the_fork_point_then_its_own() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = fx.session(&local, "/work");
        local.append(parent, [user("one"), assistant("two"), user("three"), assistant("four")]).unwrap();
        let rows = own_rows(&fx);

        let id = fork(&fx, parent, Some(2));
        assert_eq!(own_rows(&fx), rows, "no event row is copied");
        assert_eq!(local.event_count(id).unwrap(), 2, "its head is the fork point");
        let appended = local.append(id, [user("three, again")]).unwrap();
        assert_eq!(seqs(&appended), [3], "its own events go on from the fork point");

        let events = local.events(id, SeqRange::ALL).unwrap();
        assert_eq!(texts(&events), ["one", "two", "three, again"]);
        assert_eq!(seqs(&events), [1, 2, 3]);
        assert!(events.iter().all(|e| e.session_id == id), "shown under the fork's id");
        let parents = local.events(parent, SeqRange::ALL).unwrap();
        assert_eq!(events[0].id, parents[0].id, "the same event, not a copy");
        assert_eq!(texts(&parents), ["one", "two", "three", "four"], "the parent is unchanged");

        // Pages and streams cross the fork point in one numbering.
        assert_eq!(texts(&local.events_page(id, SeqRange::between(Seq(2), Seq(3)), Some(1)).unwrap()), ["two"]);
        let mut streamed = Vec::new();
        local.each_body(id, SeqRange::ALL, &mut |seq, _| streamed.push(seq.get())).unwrap();
        assert_eq!(streamed, [1, 2, 3]);
        assert_eq!(local.newest_user_message(id).unwrap().map(|e| e.seq), Some(Seq(3)));
        assert_eq!(local.newest_assistant_message(id).unwrap().map(|e| (e.seq, e.session_id)), Some((Seq(2), id)));
    }
}

#[test]
fn a_fork_shows_where_it_came_from_in_its_view_and_in_lists() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = fx.session(&local, "/work");
        local.append(parent, [user("Plan the trip"), status(Some("Trip"), None), assistant("ok")]).unwrap();
        let id = fork(&fx, parent, Some(2));

        let info = local.info(id).unwrap();
        assert_eq!((info.title.as_str(), info.last_seq, info.message_counts.user), ("Trip", 2, 1));
        let link = info.forked_from.clone().expect("forkedFrom");
        assert_eq!(
            (link.session_id, link.fork_seq, link.title.as_str(), link.via),
            (parent, Seq(2), "Trip", ForkVia::Cli)
        );
        assert_eq!(local.info(parent).unwrap().forked_from, None);
        assert_eq!(local.summary(id).unwrap().forked_from, Some(link.clone()));
        let listed = local.list_sessions(&SessionQuery::default()).unwrap();
        let row = listed.iter().find(|s| s.id == id).unwrap();
        assert_eq!((row.forked_from.as_ref(), row.last_seq), (Some(&link), 2));

        let edge = local.read(|r| r.fork_edge(id)).unwrap().unwrap();
        assert_eq!((edge.parent_session_id, edge.fork_seq), (parent, Seq(2)));
        let forks = local.read(|r| r.forks_of(parent)).unwrap();
        assert_eq!(forks.iter().map(|f| f.session_id).collect::<Vec<_>>(), [id]);
        assert!(local.read(|r| r.fork_edge(parent)).unwrap().is_none());
        assert_eq!(local.seed(id).unwrap().cwd, "/work", "the parent's folder (and frozen prompt)");
    }
}

#[test]
fn forks_of_forks_read_through_every_edge() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let root = fx.session(&local, "/w");
        local.append(root, [user("a"), assistant("b"), user("c")]).unwrap();
        let first = fork(&fx, root, Some(2));
        local.append(first, [user("c1"), assistant("d1")]).unwrap();
        let second = fork(&fx, first, Some(3));
        local.append(second, [assistant("d2")]).unwrap();
        assert_eq!(texts(&local.events(second, SeqRange::ALL).unwrap()), ["a", "b", "c1", "d2"]);
        // Forked inside what `first` shares with `root`: `first`'s own are not read.
        let third = fork(&fx, first, Some(1));
        assert_eq!(texts(&local.events(third, SeqRange::ALL).unwrap()), ["a"]);
        // At 0 a fork shares nothing; at the end, everything.
        let empty = fork(&fx, root, Some(0));
        assert!(local.events(empty, SeqRange::ALL).unwrap().is_empty());
        assert_eq!(local.append(empty, [user("fresh")]).unwrap()[0].seq, Seq(1));
        let whole = fork(&fx, second, None);
        assert_eq!(texts(&local.events(whole, SeqRange::ALL).unwrap()), ["a", "b", "c1", "d2"]);
        let report = fx.store.check_cached_columns(CheckMode::Report).unwrap();
        assert!(report.mismatches.is_empty(), "{:#?}", report.mismatches);
    }
}

/// A session found to be no fork stays none (its edge would have been
/// written with it): on PostgreSQL its lineage is not read again, and the
/// forks made of it since read theirs.
#[test]
fn a_session_found_to_be_no_fork_is_read_without_its_lineage_again() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let (root, other) = (fx.session(&local, "/w"), fx.session(&local, "/w"));
        local.append(root, [user("a"), assistant("b")]).unwrap();
        local.append(other, [user("x")]).unwrap();
        assert_eq!(texts(&local.events(root, SeqRange::ALL).unwrap()), ["a", "b"]);
        let statements = || fx.store.work().map_or(0, |w| w.statements);
        let read = |id| {
            let before = statements();
            let events = local.events(id, SeqRange::ALL).unwrap();
            (texts(&events), statements() - before)
        };
        let (first, first_cost) = read(other);
        let (again, again_cost) = read(other);
        assert_eq!((first, again), (vec!["x".to_owned()], vec!["x".to_owned()]));
        if backend == Backend::Postgres {
            assert_eq!(again_cost + 1, first_cost, "the lineage is read once");
        }
        let child = fork(&fx, root, Some(1));
        local.append(child, [assistant("b'")]).unwrap();
        assert_eq!(read(child).0, ["a", "b'"]);
        let grandchild = fork(&fx, child, None);
        assert_eq!(read(grandchild).0, ["a", "b'"]);
        assert_eq!(read(root).0, ["a", "b"], "a fork made of it is no edge of its own");
    }
}

#[test]
fn a_fork_past_the_parents_end_is_refused_and_nothing_is_written() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = fx.session(&local, "/w");
        local.append(parent, [user("a")]).unwrap();
        let error = local.write(|tx| tx.fork_session(parent, Some(Seq(2)), ForkVia::Api)).unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Invalid);
        assert_eq!(
            error.to_string(),
            format!("session `{parent}` has 1 events: it cannot be forked at seq 2 (fork at 0 to 1)")
        );
        assert_eq!(local.list_sessions(&SessionQuery::default()).unwrap().len(), 1);
        let unknown = fx.store.new_session_id();
        let error = local.write(|tx| tx.fork_session(unknown, None, ForkVia::Api)).unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::NotFound);
    }
}

#[test]
fn context_marks_before_the_fork_point_apply_to_the_fork_and_later_ones_do_not() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = fx.session(&local, "/w");
        let rewind = || EventBody::ContextRewound(ContextRewound::before_turn(Seq(2)));
        local.append(parent, [user("a"), assistant("b"), rewind(), user("c"), rewind()]).unwrap();
        let id = fork(&fx, parent, Some(4));
        local.append(id, [assistant("d"), rewind()]).unwrap();
        assert_eq!(seqs(&local.context_marks(id, Seq(6), 8).unwrap()), [3, 6]);
        assert_eq!(seqs(&local.context_marks(id, Seq(6), 1).unwrap()), [6]);
        assert_eq!(seqs(&local.context_marks(parent, Seq(5), 8).unwrap()), [3, 5]);
        assert!(local.context_marks(id, Seq(6), 8).unwrap().iter().all(|e| e.session_id == id));
    }
}

#[test]
fn a_tool_call_id_the_parent_used_before_the_fork_is_used_in_the_fork() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = fx.session(&local, "/w");
        local.append(parent, [tool_call("early", "read"), tool_result("early", "read", "x")]).unwrap();
        local.append(parent, [tool_call("late", "read"), tool_result("late", "read", "y")]).unwrap();
        let id = fork(&fx, parent, Some(2));
        let asked = [seri_core::ToolCallId("early".into()), seri_core::ToolCallId("late".into())];
        let used = local.read(|r| r.tool_call_ids_used(id, &asked)).unwrap();
        assert_eq!(used, [seri_core::ToolCallId("early".into())]);
    }
}

#[test]
fn opening_a_fork_of_a_long_session_reads_what_opening_the_parent_reads() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = fx.session(&local, "/w");
        for chunk in 0..6 {
            let bodies: Vec<_> = (0..100).map(|n| user(&format!("m{chunk}-{n}"))).collect();
            local.append(parent, bodies).unwrap();
        }
        let id = fork(&fx, parent, Some(590));
        local.append(id, (0..10).map(|n| user(&format!("f{n}")))).unwrap();
        let reads = |read: &dyn Fn()| {
            let before = fx.store.events_read();
            read();
            fx.store.events_read() - before
        };
        // Its view folds from the snapshot written at the fork point: its
        // own ten events, never the parent's 590.
        assert_eq!(reads(&|| drop(local.info(id).unwrap())), 10);
        let tail = SeqRange::between(Seq(580), Seq(600));
        assert_eq!(
            reads(&|| drop(local.events(id, tail).unwrap())),
            reads(&|| drop(local.events(parent, tail).unwrap()))
        );
        assert_eq!(reads(&|| drop(local.context_marks(id, Seq(600), 8).unwrap())), 0);
    }
}

#[test]
fn a_fork_takes_a_copy_of_the_undo_history_of_the_calls_it_shares() {
    use seri_store::{CheckpointHistory, NewCheckpoint};
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = fx.session(&local, "/w");
        // 1 the message, 2-3 the call that wrote a.txt, 4-5 the one that wrote b.txt.
        local
            .append(
                parent,
                [
                    user("write both"),
                    tool_call("a", "write_file"),
                    tool_result("a", "write_file", "ok"),
                    tool_call("b", "write_file"),
                    tool_result("b", "write_file", "ok"),
                ],
            )
            .unwrap();
        for (call, path) in [("a", "/w/a.txt"), ("b", "/w/b.txt")] {
            let call = seri_core::ToolCallId(call.into());
            let checkpoint = NewCheckpoint {
                session_id: parent,
                turn_seq: Seq(1),
                run_id: None,
                tool_call_id: &call,
                path,
                before: Some(b"before".as_slice()),
            };
            local.record_checkpoint(&checkpoint).unwrap();
        }
        let rows = own_rows(&fx);

        // Forked between the two calls: only the first is the fork's.
        let id = fork(&fx, parent, Some(3));
        assert_eq!(own_rows(&fx), rows, "no event row is copied");
        let copied = local.checkpoints_since(id, Seq::FIRST).unwrap();
        let parents = local.checkpoints_since(parent, Seq::FIRST).unwrap();
        assert_eq!(copied.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["/w/a.txt"]);
        assert_eq!((copied[0].session_id, copied[0].turn_seq), (id, Seq(1)));
        assert_eq!((&copied[0].before, copied[0].before_kept), (&parents[0].before, true));
        assert!(matches!(local.checkpoint_history(id).unwrap(), CheckpointHistory::Live { covers_from: Seq(1), .. }));

        // The fork's rewind drops its copies, never the parent's rows or contents.
        local.write(|tx| tx.discard_checkpoints(id, Seq::FIRST)).unwrap();
        assert!(local.checkpoints_since(id, Seq::FIRST).unwrap().is_empty());
        assert_eq!(local.checkpoints_since(parent, Seq::FIRST).unwrap().len(), 2);
        let seri_store::FileState::Present { sha256, .. } = &parents[0].before else { panic!("{parents:?}") };
        assert_eq!(local.checkpoint_content(sha256).unwrap().as_deref(), Some(b"before".as_slice()));

        // A fork at 0 shares no turn, so no history.
        let empty = fork(&fx, parent, Some(0));
        assert_eq!(local.checkpoint_history(empty).unwrap(), CheckpointHistory::None);
    }
}

#[test]
fn every_way_of_asking_for_a_fork_is_recorded_and_read_back() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = fx.session(&local, "/work");
        local.append(parent, [user("one")]).unwrap();
        for via in [ForkVia::Cli, ForkVia::Repl, ForkVia::Api, ForkVia::Import, ForkVia::Acp] {
            fx.clock.advance(1);
            let id = local.write(|tx| tx.fork_session(parent, None, via)).unwrap().id;
            assert_eq!(local.info(id).unwrap().forked_from.map(|link| link.via), Some(via), "{backend:?}");
            assert_eq!(ForkVia::parse(via.as_str()), Some(via));
        }
    }
}
