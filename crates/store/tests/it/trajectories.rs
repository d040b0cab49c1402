//! Trajectories: headers, every kind of record, elision with sizes, and
//! retention with a fake clock (old sessions pruned, the current one kept,
//! nothing but trajectories deleted). Imported files' retention is
//! seri-import's test.

use serde_json::json;
use seri_core::{DenialReason, ModelRef, PromptFile, RunId, SessionId, Usage};
use seri_store::{
    AgentStore, ELIDE_THRESHOLD_BYTES, EditOutcome, FileState, LookupError, RetentionPolicy, RunRecord, SeqRange,
    StoreError, TrajectoryHeader, TrajectoryRecord, elided_bytes,
};

use crate::support::{Backend, Fixture, assistant, user};

const DAY: i64 = 86_400_000;

fn header(run: RunId, session: SessionId, f: &Fixture) -> TrajectoryHeader {
    TrajectoryHeader {
        run_id: run,
        session_id: session,
        started_at: f.store.now(),
        seri_version: "0.0.0".into(),
        model: ModelRef::new("openrouter", "anthropic/claude-sonnet-4.5"),
        strategy: "compact".into(),
        context_window: 200_000,
        max_turns: 500,
        kind: seri_core::RunKindName::Interactive,
        lane: seri_core::Lane::Interactive,
        sampling: json!({"temperature": 0.2}),
        reasoning_effort: Some("high".into()),
        openrouter_pin: Some(json!({"order": ["anthropic"], "allowFallbacks": false})),
        system_prompt_sha256: Some("ab".repeat(32)),
        prompt_files: vec![PromptFile { path: "/w/AGENTS.md".into(), sha256: "cd".repeat(32) }],
    }
}

/// A recorded run with a trajectory in `session`.
fn recorded_run(f: &Fixture, agent: &AgentStore<'_>, session: SessionId) -> RunId {
    let run = f.store.new_run_id();
    agent
        .start_run(&RunRecord {
            id: run,
            session_id: session,
            kind: seri_core::RunKindName::Interactive,
            lane: seri_core::Lane::Interactive,
            parent_run_id: None,
            status: seri_core::RunStatus::Running,
            result: None,
            started_at: f.store.now(),
            finished_at: None,
        })
        .unwrap();
    agent.write(|tx| tx.start_trajectory(&header(run, session, f))).unwrap();
    run
}

fn every_kind() -> Vec<TrajectoryRecord> {
    let id = || "call_1".into();
    vec![
        TrajectoryRecord::ToolCall { tool_call_id: id(), name: "edit".into(), arguments: json!({"path": "a.rs"}) },
        TrajectoryRecord::Checkpoint {
            tool_call_id: id(),
            path: "/w/a.rs".into(),
            before: FileState::of(Some(b"fn a() {}")),
        },
        TrajectoryRecord::Edit {
            tool_call_id: id(),
            tool: "edit".into(),
            path: Some("a.rs".into()),
            outcome: EditOutcome::Applied,
            detail: json!("Edited a.rs: replaced 1 occurrence (line 1)."),
            after: Some(FileState::of(Some(b"fn b() {}"))),
        },
        TrajectoryRecord::ToolResult {
            tool_call_id: id(),
            name: "edit".into(),
            is_error: false,
            content: json!("Edited a.rs: replaced 1 occurrence (line 1)."),
        },
        TrajectoryRecord::Denial {
            tool_call_id: "call_2".into(),
            tool: "bash".into(),
            reason: DenialReason::Policy,
            detail: json!("bash is set to deny"),
        },
        TrajectoryRecord::Check {
            tool_call_id: "call_3".into(),
            command: json!("cargo test"),
            exit_code: Some(101),
            signal: None,
            timed_out: false,
            passed: false,
        },
        TrajectoryRecord::Usage {
            turn: 1,
            usage: Some(Usage { input: 100, cache_read: 50, cache_write: 0, output: 20 }),
        },
        TrajectoryRecord::Retry { attempt: 1, max_attempts: 5, delay_ms: 1000, error: json!("server: 503") },
        TrajectoryRecord::Compaction {
            evicted_from_seq: 1,
            evicted_to_seq: 40,
            tokens_before: 100_000,
            tokens_after: 20_000,
        },
        TrajectoryRecord::CompactionFailed { error: json!("the summarizer failed") },
        TrajectoryRecord::Ended {
            status: seri_core::RunStatus::Succeeded,
            turns: 2,
            usage: Some(Usage { input: 200, cache_read: 50, cache_write: 0, output: 40 }),
            result: Some(json!("Done.")),
            error: None,
            continued_to: None,
        },
    ]
}

#[test]
fn every_kind_of_record_is_kept_in_order_after_its_header() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let run = recorded_run(&f, &local, session);
        for (i, record) in every_kind().iter().enumerate() {
            f.clock.advance(1);
            assert_eq!(local.append_trajectory_record(run, record).unwrap(), i as u64 + 1);
        }
        let trajectory = local.trajectory(run).unwrap().unwrap();
        let mut expected = header(run, session, &f);
        expected.started_at = trajectory.header.started_at;
        assert_eq!(trajectory.header, expected);
        let kinds: Vec<&str> = trajectory.records.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "tool_call",
                "checkpoint",
                "edit",
                "tool_result",
                "denial",
                "check",
                "usage",
                "retry",
                "compaction",
                "compaction_failed",
                "ended"
            ]
        );
        let decoded: Vec<TrajectoryRecord> = trajectory.records.iter().map(|r| r.record().unwrap()).collect();
        assert_eq!(decoded, every_kind());
        assert_eq!(trajectory.records[0].data["toolCallId"], "call_1", "camelCase fields");
        assert!(matches!(trajectory.ended(), Some(TrajectoryRecord::Ended { turns: 2, .. })));
        assert_eq!(local.trajectory_runs(session).unwrap(), [run]);
    }
}

/// Several records written together (a run's pending records, with its
/// lease's release) are one statement, numbered after the newest in order.
#[test]
fn records_written_together_are_numbered_in_order_after_the_newest() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let run = recorded_run(&f, &local, session);
        let all = every_kind();
        let (first, rest) = all.split_at(1);
        assert_eq!(local.append_trajectory_record(run, &first[0]).unwrap(), 1);
        let ords = local.write(|tx| tx.append_trajectory_records(run, rest)).unwrap();
        assert_eq!(ords, (2..=all.len() as u64).collect::<Vec<_>>());
        assert_eq!(local.write(|tx| tx.append_trajectory_records(run, &[])).unwrap(), Vec::<u64>::new());
        let records = local.trajectory(run).unwrap().unwrap().records;
        let decoded: Vec<TrajectoryRecord> = records.iter().map(|r| r.record().unwrap()).collect();
        assert_eq!(decoded, all);
        let stray = f.store.new_run_id();
        let refused = local.write(|tx| tx.append_trajectory_records(stray, rest)).unwrap_err();
        assert!(matches!(refused, seri_store::StoreError::Lookup(seri_store::LookupError::UnknownTrajectory { .. })));
    }
}

#[test]
fn the_header_lists_the_knobs_pin_effort_and_prompt_hashes() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let run = recorded_run(&f, &local, session);
        let header = serde_json::to_value(local.trajectory(run).unwrap().unwrap().header).unwrap();
        assert_eq!(header["sampling"], json!({"temperature": 0.2}));
        assert_eq!(header["reasoningEffort"], "high");
        assert_eq!(header["openrouterPin"]["order"], json!(["anthropic"]));
        assert_eq!(header["promptFiles"][0]["path"], "/w/AGENTS.md");
        assert_eq!(header["model"]["model"], "anthropic/claude-sonnet-4.5");
        assert_eq!((header["strategy"].as_str(), header["contextWindow"].as_u64()), (Some("compact"), Some(200_000)));
    }
}

#[test]
fn large_values_are_elided_with_their_original_size() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let run = recorded_run(&f, &local, session);
        let body = "x".repeat(ELIDE_THRESHOLD_BYTES * 3 + 7);
        let record = TrajectoryRecord::ToolCall {
            tool_call_id: "call_9".into(),
            name: "write_file".into(),
            arguments: json!({"path": "big.txt", "content": body}),
        };
        local.append_trajectory_record(run, &record).unwrap();
        let stored = &local.trajectory(run).unwrap().unwrap().records[0];
        assert_eq!(stored.data["arguments"]["path"], "big.txt", "small values stay whole");
        let content = &stored.data["arguments"]["content"];
        assert_eq!(elided_bytes(content), Some((ELIDE_THRESHOLD_BYTES * 3 + 7) as u64));
        assert!(stored.data.to_string().len() < 2 * ELIDE_THRESHOLD_BYTES, "the value is not stored whole");
        // Still a readable record, with the marker where the value was.
        assert!(matches!(stored.record(), Some(TrajectoryRecord::ToolCall { .. })));
    }
}

#[test]
fn records_of_a_run_without_trajectory_or_of_another_agent_are_refused() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let record = TrajectoryRecord::Usage { turn: 1, usage: Some(Usage::default()) };
        let stray = f.store.new_run_id();
        let err = local.append_trajectory_record(stray, &record).unwrap_err();
        assert!(
            matches!(err, StoreError::Lookup(LookupError::UnknownTrajectory { run_id }) if run_id == stray),
            "{err}"
        );
        let run = recorded_run(&f, &local, session);
        let other = f.store.agent(&seri_core::AgentId("other".into()));
        assert!(matches!(
            other.append_trajectory_record(run, &record),
            Err(StoreError::Lookup(LookupError::UnknownTrajectory { .. }))
        ));
        assert_eq!(other.trajectory(run).unwrap(), None);
    }
}

#[test]
fn pruning_deletes_old_sessions_trajectories_and_keeps_the_current_one() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let old = f.session(&local, "/w");
        local.append(old, [user("old question"), assistant("old answer")]).unwrap();
        let old_run = recorded_run(&f, &local, old);
        local
            .append_trajectory_record(old_run, &TrajectoryRecord::Usage { turn: 1, usage: Some(Usage::default()) })
            .unwrap();
        let current = f.session(&local, "/w");
        let current_run = recorded_run(&f, &local, current);
        // A session whose newest record is recent stays even if it started long ago.
        let busy = f.session(&local, "/w");
        let busy_run = recorded_run(&f, &local, busy);

        f.clock.advance(40 * DAY);
        local
            .append_trajectory_record(busy_run, &TrajectoryRecord::Usage { turn: 1, usage: Some(Usage::default()) })
            .unwrap();
        f.clock.advance(1);
        let report = local.prune_trajectories(&RetentionPolicy { days: 30, current_session: Some(current) }).unwrap();
        assert_eq!(report.sessions, [old]);
        assert_eq!((report.trajectories, report.records), (1, 1));
        assert_eq!(local.trajectory(old_run).unwrap(), None);
        assert!(local.trajectory(current_run).unwrap().is_some(), "the session being recorded is never pruned");
        assert!(local.trajectory(busy_run).unwrap().is_some());
        // The conversation and the run record stay.
        assert_eq!(local.events(old, SeqRange::ALL).unwrap().len(), 2);
        assert_eq!(local.runs(old).unwrap().len(), 1);

        // Without the current session to protect, it goes once it is old too.
        let report = local.prune_trajectories(&RetentionPolicy::new(None)).unwrap();
        assert_eq!(report.sessions, [current]);
        assert!(local.prune_trajectories(&RetentionPolicy::new(None)).unwrap().is_empty());
    }
}

#[test]
fn a_recording_exactly_at_the_window_stays() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        recorded_run(&f, &local, session);
        f.clock.advance(30 * DAY);
        assert!(local.prune_trajectories(&RetentionPolicy::new(None)).unwrap().is_empty());
        f.clock.advance(1);
        assert_eq!(local.prune_trajectories(&RetentionPolicy::new(None)).unwrap().sessions, [session]);
    }
}

#[test]
fn settings_are_stored_per_agent_and_replaced() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        assert_eq!(local.setting("trajectory.enabled").unwrap(), None);
        local.set_setting("trajectory.enabled", "off").unwrap();
        local.set_setting("trajectory.enabled", "on").unwrap();
        assert_eq!(local.setting("trajectory.enabled").unwrap().as_deref(), Some("on"));
        let other = f.store.agent(&seri_core::AgentId("other".into()));
        assert_eq!(other.setting("trajectory.enabled").unwrap(), None);
    }
}
