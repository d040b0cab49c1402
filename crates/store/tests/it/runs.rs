//! Runs: recorded when they start, finished exactly once, scoped to the agent.

use seri_core::{AgentId, RunId};
use seri_store::{LookupError, RunRecord, StoreError, WriteError};

use crate::support::{Backend, Fixture, T0};

fn record(id: RunId, session: seri_core::SessionId) -> RunRecord {
    RunRecord {
        id,
        session_id: session,
        kind: seri_core::RunKindName::Interactive,
        lane: seri_core::Lane::Interactive,
        parent_run_id: None,
        status: seri_core::RunStatus::Running,
        result: None,
        started_at: T0,
        finished_at: None,
    }
}

#[test]
fn a_run_starts_running_and_finishes_once_with_its_result() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let run = f.store.new_run_id();
        local.start_run(&record(run, session)).unwrap();
        assert_eq!(local.runs(session).unwrap()[0].status, seri_core::RunStatus::Running);
        // Started again (its first start committed unseen): the same run, once.
        local
            .start_run(&RunRecord { started_at: seri_core::Timestamp(T0.millis() + 9), ..record(run, session) })
            .unwrap();
        assert_eq!(local.runs(session).unwrap(), vec![record(run, session)]);

        f.clock.advance(5);
        let result = seri_store::RunResult { turns: Some(2), result: Some("done".into()), ..Default::default() };
        local.write(|tx| tx.finish_run(run, seri_core::RunStatus::Succeeded, &result)).unwrap();
        let runs = local.runs(session).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].status, seri_core::RunStatus::Succeeded);
        assert_eq!(runs[0].result.as_ref(), Some(&result));
        assert!(runs[0].finished_at.is_some());

        let again = local.write(|tx| tx.finish_run(run, seri_core::RunStatus::Failed, &result)).unwrap_err();
        assert!(matches!(again, StoreError::Write(WriteError::RunNotRunning { run_id }) if run_id == run), "{again}");
        assert_eq!(local.runs(session).unwrap()[0].status, seri_core::RunStatus::Succeeded, "the first finish stands");
    }
}

#[test]
fn runs_of_another_agents_session_are_unreachable() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let other = f.store.agent(&AgentId("other".into()));
        let err = other.start_run(&record(f.store.new_run_id(), session)).unwrap_err();
        assert!(matches!(err, StoreError::Lookup(LookupError::UnknownSession { .. })), "{err}");
        assert!(matches!(other.runs(session).unwrap_err(), StoreError::Lookup(LookupError::UnknownSession { .. })));
    }
}

#[test]
fn a_runs_children_are_found_by_parent_and_a_run_by_id_within_the_agent() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let parent_session = f.session(&local, "/w");
        let child_session = f.session(&local, "/w");
        let parent = f.store.new_run_id();
        local.start_run(&record(parent, parent_session)).unwrap();
        let (first, second) = (f.store.new_run_id(), f.store.new_run_id());
        for (child, at) in [(first, 1), (second, 2)] {
            f.clock.advance(at);
            let run = RunRecord {
                parent_run_id: Some(parent),
                kind: seri_core::RunKindName::DelegatedChild,
                ..record(child, child_session)
            };
            local.start_run(&run).unwrap();
        }
        let children: Vec<RunId> = local.child_runs(parent).unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(children, [first, second], "oldest first");
        assert!(local.child_runs(first).unwrap().is_empty());
        assert_eq!(local.run(parent).unwrap().map(|r| r.session_id), Some(parent_session));
        assert_eq!(local.run(f.store.new_run_id()).unwrap(), None);

        let other = f.store.agent(&AgentId("other".into()));
        assert!(other.child_runs(parent).unwrap().is_empty(), "another agent's runs have no children for us");
        assert_eq!(other.run(parent).unwrap(), None);
    }
}

#[test]
fn a_child_session_names_its_parents_session_in_lists_and_summaries() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let parent_session = f.session(&local, "/w");
        let parent = f.store.new_run_id();
        local.start_run(&record(parent, parent_session)).unwrap();
        let mut seed = local.new_seed("/w");
        seed.parent_run_id = Some(parent);
        let child = local.create_session(&seed).unwrap().id;
        // A child whose parent run is unknown (another agent's) names no session.
        let mut stray = local.new_seed("/w");
        stray.parent_run_id = Some(f.store.new_run_id());
        let stray = local.create_session(&stray).unwrap().id;

        let listed = local.list_sessions(&seri_store::SessionQuery::default()).unwrap();
        let parent_of = |id| listed.iter().find(|s| s.id == id).unwrap().parent_session_id;
        assert_eq!(parent_of(child), Some(parent_session));
        assert_eq!(parent_of(parent_session), None);
        assert_eq!(parent_of(stray), None);
        assert_eq!(local.summary(child).unwrap().parent_session_id, Some(parent_session));
        assert_eq!(local.summary(stray).unwrap().parent_session_id, None);
        let json = serde_json::to_value(local.summary(child).unwrap()).unwrap();
        assert_eq!(json["parentSessionId"], parent_session.to_string());
    }
}
