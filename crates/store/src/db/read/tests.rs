//! Tests of `read`, beside it so the module itself stays short.

use super::*;

#[test]
fn context_marks_are_read_from_their_index() {
    // Without the index the query is still right, and walks a long
    // history back to its newest recap: only the plan can tell.
    let store = Store::open_in_memory().unwrap();
    let plan = store
        .read_transaction(|db| {
            let sql = format!("EXPLAIN QUERY PLAN {}", context_marks_sql());
            query_all(db, "explaining", &sql, params!["s", 5_i64, 8_i64], |r| r.get::<_, String>(3))
        })
        .unwrap();
    assert!(plan.iter().any(|step| step.contains("USING INDEX session_events_context_marks")), "{plan:?}");
}

#[test]
fn fired_rules_are_read_from_their_index() {
    // Without it, every message of the session is decoded to find the
    // few a rule wrote.
    let store = Store::open_in_memory().unwrap();
    let plan = store
        .read_transaction(|db| {
            let sql = format!("EXPLAIN QUERY PLAN {}", fired_rules_sql(db));
            query_all(db, "explaining", &sql, params!["s", 1_i64, 9_i64], |r| r.get::<_, String>(3))
        })
        .unwrap();
    assert!(plan.iter().any(|step| step.contains("USING INDEX session_events_rule_messages")), "{plan:?}");
}

#[test]
fn tool_call_ids_are_looked_up_in_their_index() {
    // Without it, a turn's calls would each walk the session's history.
    let store = Store::open_in_memory().unwrap();
    let plan = store
        .read_transaction(|db| {
            let sql = format!("EXPLAIN QUERY PLAN {}", tool_call_id_sql(db));
            query_all(db, "explaining", &sql, params!["s", "call_1"], |r| r.get::<_, String>(3))
        })
        .unwrap();
    assert!(plan.iter().any(|step| step.contains("USING INDEX session_events_call_ids")), "{plan:?}");
}

#[test]
fn tool_call_ids_are_looked_up_in_their_index_on_postgres() {
    let Some(base) = std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) else { return };
    let join = if base.contains('?') { '&' } else { '?' };
    let schema = format!("call_ids_plan_{}", std::process::id());
    let url = format!("{base}{join}options=-csearch_path%3D{schema}");
    let store = Store::open_url(Some(&url), std::path::Path::new("unused.db"), Default::default()).unwrap();
    let plan = store
        .read_transaction(|db| {
            crate::db::sql::execute(db, "planning", "SET LOCAL enable_seqscan = off", &[])?;
            let sql = format!("EXPLAIN {}", tool_call_id_sql(db));
            query_all(db, "explaining", &sql, params!["s", "call_1"], |r| r.get::<_, String>(0))
        })
        .unwrap();
    assert!(plan.iter().any(|step| step.contains("session_events_call_ids")), "{plan:?}");
}

#[test]
fn fired_rules_are_read_from_their_index_on_postgres() {
    // The PostgreSQL half of the suite gives a database (`cargo xtask postgres`).
    let Some(base) = std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) else { return };
    let join = if base.contains('?') { '&' } else { '?' };
    let schema = format!("rules_plan_{}", std::process::id());
    let url = format!("{base}{join}options=-csearch_path%3D{schema}");
    let store = Store::open_url(Some(&url), std::path::Path::new("unused.db"), Default::default()).unwrap();
    let plan = store
        .read_transaction(|db| {
            // An empty table is cheaper to scan: ask for an index if one serves.
            crate::db::sql::execute(db, "planning", "SET LOCAL enable_seqscan = off", &[])?;
            let sql = format!("EXPLAIN {}", fired_rules_sql(db));
            query_all(db, "explaining", &sql, params!["s", 1_i64, 9_i64], |r| r.get::<_, String>(0))
        })
        .unwrap();
    assert!(plan.iter().any(|step| step.contains("session_events_rule_messages")), "{plan:?}");
}
/// The query of a page of the server's session list, and of its next page.
fn pages() -> [SessionQuery; 3] {
    let page = SessionQuery { limit: Some(20), without_children: true, ..SessionQuery::default() };
    let next = SessionQuery { updated_before: Some(seri_core::Timestamp(1_000)), ..page.clone() };
    let keyset = SessionQuery { before_id: Some(SessionId::from_bytes([7; 16])), ..next.clone() };
    [page, next, keyset]
}

#[test]
fn a_page_of_sessions_is_read_in_its_index_order_without_a_sort() {
    // A page that sorts every session costs the whole store: only the
    // plan can tell.
    let store = Store::open_in_memory().unwrap();
    for query in pages() {
        let plan = store
            .read_transaction(|db| {
                let (sql, values) = list_sql(&AgentId::local(), &query);
                let params: Vec<&dyn crate::db::sql::Param> = values.iter().map(|v| v.as_ref()).collect();
                let sql = format!("EXPLAIN QUERY PLAN {sql}");
                query_all(db, "explaining", &sql, params.as_slice(), |r| r.get::<_, String>(3))
            })
            .unwrap();
        assert!(plan.iter().any(|step| step.contains("session_last_events_listed")), "{plan:?}");
        assert!(!plan.iter().any(|step| step.contains("TEMP B-TREE")), "{plan:?}");
    }
}

#[test]
fn a_page_of_sessions_is_read_in_its_index_order_without_a_sort_on_postgres() {
    // The PostgreSQL half of the suite gives a database (`cargo xtask postgres`).
    let Some(base) = std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) else { return };
    let join = if base.contains('?') { '&' } else { '?' };
    let schema = format!("list_plan_{}", std::process::id());
    let url = format!("{base}{join}options=-csearch_path%3D{schema}");
    let store = Store::open_url(Some(&url), std::path::Path::new("unused.db"), Default::default()).unwrap();
    for query in pages() {
        let plan = store
            .read_transaction(|db| {
                // An empty table is cheaper to sort: refuse sorting, so a
                // plan that still sorts has no index that serves the order.
                crate::db::sql::execute(db, "planning", "SET LOCAL enable_sort = off", &[])?;
                let (sql, values) = list_sql(&AgentId::local(), &query);
                let params: Vec<&dyn crate::db::sql::Param> = values.iter().map(|v| v.as_ref()).collect();
                let sql = format!("EXPLAIN {sql}");
                query_all(db, "explaining", &sql, params.as_slice(), |r| r.get::<_, String>(0))
            })
            .unwrap();
        assert!(plan.iter().any(|step| step.contains("session_last_events_listed")), "{plan:?}");
        assert!(!plan.iter().any(|step| step.contains("Sort")), "{plan:?}");
    }
}

#[test]
fn a_page_of_sessions_runs_the_same_steps_however_many_sessions_the_store_holds() {
    // Plans can look right and a page still visit every session (a
    // link query that starts at the agent's sessions did): count what
    // SQLite's machine ran for a page, its next page, and a keyset
    // page, at 100 and at 1,000 older sessions.
    use seri_core::{EventBody, ForkVia, Message};
    let mut steps = Vec::new();
    for older in [100, 1_000] {
        // Each session at a time of its own: with the real clock, sessions
        // made in one millisecond tie, and how many ties fall on a page's
        // boundary (which the keyset page reads past) varied by run.
        let clock = std::sync::Arc::new(crate::ManualClock::new(seri_core::Timestamp(1_700_000_000_000)));
        let store = Store::open_in_memory_with(crate::StoreOptions::with_clock(clock.clone())).unwrap();
        let agent = store.agent(&AgentId::local());
        let mut newest = Vec::new();
        for n in 0..older + 30 {
            clock.advance(1);
            let seed = agent.new_seed(format!("/work/{}", n % 7));
            agent.create_session(&seed).unwrap();
            agent.append(seed.id, [EventBody::Message(Message::user(format!("task {n}")))]).unwrap();
            newest.push(seed.id);
        }
        // Forks among the newest, so the page has links to read.
        for parent in &newest[newest.len() - 5..] {
            clock.advance(1);
            agent.write(|tx| tx.fork_session(*parent, None, ForkVia::Api)).unwrap();
        }
        let first = SessionQuery { limit: Some(20), without_children: true, ..SessionQuery::default() };
        let page = agent.list_sessions(&first).unwrap();
        let last = page.last().unwrap();
        let next = SessionQuery { updated_before: Some(last.updated_at), ..first.clone() };
        let keyset = SessionQuery { before_id: Some(last.id), ..next.clone() };
        let mut counted = Vec::new();
        for query in [first, next, keyset] {
            let before = crate::db::sql::steps::so_far();
            let listed = agent.list_sessions(&query).unwrap();
            assert!(!listed.is_empty());
            counted.push(crate::db::sql::steps::so_far() - before);
        }
        steps.push(counted);
    }
    assert_eq!(steps[0], steps[1], "steps of three pages at 100 and at 1,000 older sessions");
}
