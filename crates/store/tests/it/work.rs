//! What a read or a write asks of the database, counted rather than timed:
//! on PostgreSQL ([`seri_store::Store::work`]) the rows the server sent and
//! the round trips; on both backends the events decoded.

use seri_core::{AgentId, SeqRange};
use seri_store::StoreWork;

use crate::support::{Backend, Fixture, assistant, user};

/// A session of `older` assistant messages, then a user message, then a
/// few more assistant messages: the newest user message is near the head
/// of a long transcript.
fn long_session(fx: &Fixture, older: usize) -> seri_core::SessionId {
    let agent = fx.local();
    let session = fx.session(&agent, "/w");
    let mut bodies: Vec<_> = (0..older).map(|i| assistant(&format!("old {i}"))).collect();
    bodies.push(user("the newest question"));
    bodies.extend((0..3).map(|i| assistant(&format!("new {i}"))));
    agent.append(session, bodies).unwrap();
    session
}

fn work(fx: &Fixture) -> StoreWork {
    fx.store.work().unwrap_or_default()
}

#[test]
fn newest_first_reads_are_bounded_in_the_query_whatever_the_transcripts_length() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let agent = fx.store.agent(&AgentId::local());
        let mut rows = Vec::new();
        for older in [100, 3000] {
            let session = long_session(&fx, older);
            let (before, decoded) = (work(&fx), fx.store.events_read());
            let found = agent.read(|r| r.newest_user_message(session)).unwrap().unwrap();
            assert_eq!(found.body.as_message().unwrap().content, "the newest question");
            let newest = agent.read(|r| r.newest_assistant_message(session)).unwrap().unwrap();
            assert_eq!(newest.seq.get(), older as u64 + 4);
            // Four messages decoded (three to reach the user's, one for the
            // assistant's), whatever came before them.
            assert_eq!(fx.store.events_read() - decoded, 5, "{backend:?}, {older}");
            rows.push((work(&fx) - before).rows);
        }
        if backend == Backend::Postgres {
            // Each read is one bounded page, at 100 older events as at 3000.
            assert_eq!(rows[0], rows[1], "rows sent at 100 and at 3000 older events");
            assert!(rows[1] <= 2 * 16 + 4, "rows sent: {rows:?}");
        }
    }
}

#[test]
fn a_match_far_back_is_found_page_after_page() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let agent = fx.local();
        let session = fx.session(&agent, "/w");
        let mut bodies = vec![user("the only question")];
        bodies.extend((0..1500).map(|i| assistant(&format!("answer {i}"))));
        agent.append(session, bodies).unwrap();
        let found = agent.read(|r| r.newest_user_message(session)).unwrap().unwrap();
        assert_eq!(found.seq.get(), 1, "{backend:?}");
        assert_eq!(agent.events(session, SeqRange::ALL).unwrap().len(), 1501);
    }
}

#[test]
fn an_append_costs_the_same_statements_for_two_events_as_for_thirty() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let agent = fx.local();
        let mut costs = Vec::new();
        // (Thirty twice stays below the snapshot interval, whose write is a
        // statement more.)
        for events in [2, 30] {
            let session = fx.session(&agent, "/w");
            let bodies: Vec<_> = (0..events).map(|i| user(&format!("message {i}"))).collect();
            agent.append(session, bodies.clone()).unwrap();
            // The second append of each size, so each is measured on a
            // connection that prepared its statements already.
            let before = work(&fx);
            let appended = agent.append(session, bodies).unwrap();
            let after = work(&fx) - before;
            assert_eq!(appended.last().unwrap().seq.get(), 2 * events as u64, "{backend:?}");
            assert_eq!(agent.events(session, SeqRange::ALL).unwrap().len(), 2 * events, "{backend:?}");
            costs.push((after.statements, after.round_trips));
        }
        if backend == Backend::Postgres {
            // One insert of all the rows, not one per event.
            assert_eq!(costs[0], costs[1], "statements and round trips of 2 vs 30 events");
        }
    }
}

#[test]
fn a_one_event_append_is_one_transaction_of_one_round_trip() {
    // The figure "append, one transaction per event" is round trips: hold
    // them (and the statements riding along) to a number, on a connection
    // that prepared its statements already.
    let Some(_) = crate::support::postgres_url() else { return };
    let fx = Fixture::on(Backend::Postgres);
    let agent = fx.local();
    let session = fx.session(&agent, "/w");
    agent.append(session, [user("first")]).unwrap();
    for text in ["second", "third"] {
        let before = work(&fx);
        agent.append(session, [user(text)]).unwrap();
        let cost = work(&fx) - before;
        // This process appended last, so the head is not read: BEGIN, the
        // store's shared lock, the session's lock, the insert, the NOTIFY
        // and the COMMIT go out together and their answers come together.
        assert_eq!(
            (cost.transactions, cost.round_trips),
            (1, 1),
            "transactions and round trips of a one-event append: {cost:?}"
        );
        assert!(cost.statements <= 6, "statements of a one-event append: {cost:?}");
    }
    let seqs: Vec<u64> = agent.events(session, SeqRange::ALL).unwrap().iter().map(|e| e.seq.get()).collect();
    assert_eq!(seqs, [1, 2, 3]);
}

#[test]
fn an_append_after_another_process_appended_reads_the_head_and_is_not_doubled() {
    // Two stores on one schema are two processes: each appends on its own
    // view of the session's head, and a guess the other made stale is
    // refused by the server and tried again once, reading the head.
    let Some(base) = crate::support::postgres_url() else { return };
    let url = crate::support::fresh_schema_url(&base);
    let open = || {
        seri_store::Store::open_url(Some(&url), std::path::Path::new("unused.db"), seri_store::StoreOptions::default())
            .unwrap()
    };
    let (one, two) = (open(), open());
    let (a, b) = (one.agent(&AgentId::local()), two.agent(&AgentId::local()));
    let seed = a.new_seed("/w");
    a.create_session(&seed).unwrap();
    let session = seed.id;
    a.append(session, [user("a1")]).unwrap();
    b.append(session, [user("b1"), user("b2")]).unwrap();
    // `one` last saw the head at 1; the server has 3.
    let before = one.work().unwrap_or_default();
    let appended = a.append(session, [user("a2")]).unwrap();
    let cost = one.work().unwrap_or_default() - before;
    assert_eq!(appended[0].seq.get(), 4);
    // The refused guess (one round trip), then the append reading the head (two).
    assert_eq!((cost.transactions, cost.round_trips), (2, 3), "{cost:?}");
    // And `one` guesses right again from there.
    let before = one.work().unwrap_or_default();
    a.append(session, [user("a3")]).unwrap();
    assert_eq!((one.work().unwrap_or_default() - before).round_trips, 1);
    let texts: Vec<String> = a
        .events(session, SeqRange::ALL)
        .unwrap()
        .iter()
        .map(|e| e.body.as_message().unwrap().content.clone())
        .collect();
    assert_eq!(texts, ["a1", "b1", "b2", "a2", "a3"]);
    assert_eq!(a.info(session).unwrap().last_seq, 5);
}

#[test]
fn a_failing_statement_of_a_guessed_append_is_the_error_reported() {
    // Nothing of a guessed append waits before the COMMIT: a statement that
    // fails (here the session's lock, held by another process past the
    // busy timeout) is still the one reported, not the COMMIT after it,
    // and it is not taken for a wrong guess.
    let Some(base) = crate::support::postgres_url() else { return };
    let url = crate::support::fresh_schema_url(&base);
    let open = |busy_timeout| {
        let options = seri_store::StoreOptions { busy_timeout, ..seri_store::StoreOptions::default() };
        seri_store::Store::open_url(Some(&url), std::path::Path::new("unused.db"), options).unwrap()
    };
    let (one, two) = (open(std::time::Duration::from_millis(100)), open(std::time::Duration::from_secs(10)));
    let (a, b) = (one.agent(&AgentId::local()), two.agent(&AgentId::local()));
    let seed = a.new_seed("/w");
    a.create_session(&seed).unwrap();
    let session = seed.id;
    a.append(session, [user("first")]).unwrap();
    let (held, release) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            b.write(|tx| {
                tx.append(session, [user("held")])?;
                held.wait();
                release.wait();
                Ok::<_, seri_store::StoreError>(())
            })
            .unwrap();
        });
        held.wait();
        let before = one.work().unwrap_or_default();
        let err = a.append(session, [user("refused")]).unwrap_err();
        let cost = one.work().unwrap_or_default() - before;
        release.wait();
        assert_eq!(err.kind(), seri_store::StoreErrorKind::Busy, "{err}");
        // One try: a lock held too long is no wrong guess.
        assert_eq!((cost.transactions, cost.round_trips), (1, 1), "{cost:?}");
    });
    let texts: Vec<String> = a
        .events(session, SeqRange::ALL)
        .unwrap()
        .iter()
        .map(|e| e.body.as_message().unwrap().content.clone())
        .collect();
    assert_eq!(texts, ["first", "held"]);
}
