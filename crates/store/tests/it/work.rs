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
fn a_one_event_append_is_one_transaction_of_two_round_trips() {
    // The figure "append, one transaction per event" is round trips: hold
    // them (and the statements riding along) to a number, on a connection
    // that prepared its statements already.
    let Some(_) = crate::support::postgres_url() else { return };
    let fx = Fixture::on(Backend::Postgres);
    let agent = fx.local();
    let session = fx.session(&agent, "/w");
    agent.append(session, [user("first")]).unwrap();
    let before = work(&fx);
    agent.append(session, [user("second")]).unwrap();
    let cost = work(&fx) - before;
    // BEGIN, the store's shared lock, the session's lock and its head read
    // wait together; the insert, the NOTIFY and the COMMIT wait together.
    assert_eq!(
        (cost.transactions, cost.round_trips, cost.statements),
        (1, 2, 7),
        "transactions, round trips and statements of a one-event append: {cost:?}"
    );
}
