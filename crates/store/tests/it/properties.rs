//! Properties over arbitrary event sequences: folding is deterministic and
//! splits into halves; any batching of appends numbers events 1..N; closing
//! and reopening a store loses nothing, down to the stored bytes.

use proptest::prelude::*;
use rusqlite::Connection;
use seri_core::{
    Actor, AgentId, Event, EventBody, EventId, Message, Plan, PlanStep, PlanUpdated, Seq, SessionId, SessionInfo,
    SessionSeed, StatusChanged, StepStatus, Timestamp, TitleSource, ToolCall, ToolResult,
};
use seri_store::{CheckMode, SeqRange, Store};

use crate::support::*;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[a-zA-Z ]{0,30}", Just(String::new()), Just("  \n\n  title on line 3".to_owned())]
}

fn body() -> impl Strategy<Value = EventBody> {
    let actor = prop::sample::select(vec![Actor::User, Actor::Trigger, Actor::System]);
    let source = prop::sample::select(vec![TitleSource::Agent, TitleSource::User, TitleSource::Fallback]);
    prop_oneof![
        (text(), actor).prop_map(|(t, actor)| EventBody::Message(Message { actor, ..Message::user(t) })),
        (text(), prop::option::of(0u64..1_000_000)).prop_map(|(t, input)| match input {
            Some(input) => assistant_with_usage(&t, input),
            None => EventBody::Message(Message::assistant(t)),
        }),
        text().prop_map(|t| thinking(&t)),
        ("[a-z_]{1,8}", text()).prop_map(|(name, q)| EventBody::ToolCall(ToolCall {
            id: seri_core::ToolCallId(format!("call_{name}")),
            name,
            arguments: serde_json::json!({ "q": q }),
        })),
        (text(), any::<bool>()).prop_map(|(content, is_error)| EventBody::ToolResult(ToolResult {
            tool_call_id: "call_x".into(),
            name: "read".into(),
            content,
            is_error,
            facts: None,
        })),
        (prop::option::of(text()), prop::option::of(text()), source).prop_map(|(title, description, source)| {
            EventBody::StatusChanged(StatusChanged { title, description, source })
        }),
        prop::option::of(text()).prop_map(|step| EventBody::PlanUpdated(PlanUpdated {
            plan: step
                .map(|text| Plan { steps: vec![PlanStep { text, status: StepStatus::Pending }], owner_run_id: None }),
        })),
        prop::option::of("[a-z-]{1,12}").prop_map(|model| EventBody::ModelChanged(seri_core::ModelChanged {
            model: model.map(|m| seri_core::ModelRef::new("script", &m)),
        })),
        ("[a-z]{1,10}_recorded", any::<i64>())
            .prop_map(|(kind, n)| EventBody::Unknown { kind, payload: serde_json::json!({ "n": n }) }),
    ]
}

fn seed() -> SessionSeed {
    SessionSeed::new(SessionId::from_bytes([7; 16]), AgentId::local(), "/w", T0)
}

fn events_of(seed: &SessionSeed, bodies: Vec<EventBody>) -> Vec<Event> {
    bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| Event {
            id: EventId::from_bytes([i as u8; 16]),
            session_id: seed.id,
            seq: Seq(i as u64 + 1),
            at: Timestamp(T0.millis() + i as i64),
            body,
        })
        .collect()
}

/// Every row of the three tables, every column as SQLite stores it.
fn raw_rows(path: &std::path::Path) -> Vec<Vec<rusqlite::types::Value>> {
    let conn = Connection::open(path).unwrap();
    let mut out = Vec::new();
    for table in ["sessions", "session_events", "session_continuations"] {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {table} ORDER BY rowid")).unwrap();
        let columns = stmt.column_count();
        let rows =
            stmt.query_map([], |r| (0..columns).map(|i| r.get::<_, rusqlite::types::Value>(i)).collect()).unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn folding_is_deterministic_and_splits_into_halves(bodies in prop::collection::vec(body(), 0..40), cut in 0usize..40) {
        let seed = seed();
        let events = events_of(&seed, bodies);
        let whole = SessionInfo::fold(&seed, &events);
        prop_assert_eq!(&SessionInfo::fold(&seed, &events), &whole);
        let cut = cut.min(events.len());
        let mut halves = SessionInfo::fold(&seed, &events[..cut]);
        for event in &events[cut..] {
            halves.apply(event);
        }
        prop_assert_eq!(halves, whole);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_batching_numbers_events_one_to_n(batches in prop::collection::vec(prop::collection::vec(body(), 0..6), 0..12)) {
        let store = Store::open_in_memory().unwrap();
        let agent = store.agent(&AgentId::local());
        let seed = agent.new_seed("/w");
        agent.create_session(&seed).unwrap();
        let mut appended = Vec::new();
        for batch in batches {
            let events = agent.append(seed.id, batch.clone()).unwrap();
            prop_assert_eq!(events.iter().map(|e| e.body.clone()).collect::<Vec<_>>(), batch);
            appended.extend(events);
        }
        let n = appended.len() as u64;
        prop_assert_eq!(seqs(&appended), (1..=n).collect::<Vec<_>>());
        prop_assert_eq!(&agent.events(seed.id, SeqRange::ALL).unwrap(), &appended);
        prop_assert_eq!(agent.info(seed.id).unwrap(), SessionInfo::fold(&seed, &appended));
        prop_assert!(store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
    }

    #[test]
    fn close_and_reopen_loses_nothing(sessions in prop::collection::vec(prop::collection::vec(body(), 0..10), 1..4)) {
        let fx = Fixture::sqlite();
        let local = fx.local();
        let mut written = Vec::new();
        for bodies in sessions {
            let id = fx.session(&local, "/w");
            let events = local.append(id, bodies).unwrap();
            written.push((local.seed(id).unwrap(), events, local.info(id).unwrap()));
        }
        let rows = raw_rows(&fx.db_path());
        let Fixture { backend, dir, clock, store, url } = fx;
        drop(store);

        let fx = Fixture { backend, store: seri_store::Profile::at(dir.path()).open_store().unwrap(), dir, clock, url };
        let local = fx.local();
        for (seed, events, info) in &written {
            prop_assert_eq!(&local.seed(seed.id).unwrap(), seed);
            prop_assert_eq!(&local.events(seed.id, SeqRange::ALL).unwrap(), events);
            prop_assert_eq!(&local.info(seed.id).unwrap(), info);
        }
        prop_assert_eq!(raw_rows(&fx.db_path()), rows);
    }
}
