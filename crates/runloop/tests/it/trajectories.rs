//! Trajectories recorded by whole runs: the header, a record of each kind
//! in the order things happened, elision of large values, and a run that
//! records nothing when recording is off.

use serde_json::json;
use seri_store::{ELIDE_THRESHOLD_BYTES, EditOutcome, FileState, TrajectoryRecord, elided_bytes};

use crate::bench::{Bench, call, text};

fn kinds(bench: &Bench, run: seri_core::RunId) -> Vec<String> {
    bench.local().trajectory(run).unwrap().unwrap().records.iter().map(|r| r.kind.clone()).collect()
}

#[tokio::test]
async fn a_run_records_calls_checkpoints_edits_checks_usage_and_how_it_ended() {
    let bench = Bench::new(json!([
        call("c1", "write_file", json!({"path": "a.txt", "content": "one\n"})),
        call("c2", "edit", json!({"path": "a.txt", "old": "one", "new": "two"})),
        call("c3", "bash", json!({"command": "exit 3"})),
        text("Done."),
    ]));
    let outcome = bench.send("write a.txt, edit it, then run a check").await;
    assert_eq!(outcome.status.as_str(), "succeeded");
    // Each model turn's usage is recorded when the turn is, before its tools run.
    let expected = [
        "usage",
        "tool_call",
        "checkpoint",
        "edit",
        "tool_result", // c1
        "usage",
        "tool_call",
        "checkpoint",
        "edit",
        "tool_result", // c2
        "usage",
        "tool_call",
        "check",
        "tool_result", // c3
        "usage",
        "ended",
    ];
    assert_eq!(kinds(&bench, outcome.run_id), expected);
    let records: Vec<TrajectoryRecord> = bench
        .local()
        .trajectory(outcome.run_id)
        .unwrap()
        .unwrap()
        .records
        .iter()
        .map(|r| r.record().unwrap())
        .collect();
    let path = bench.file("a.txt").to_string_lossy().into_owned();
    assert!(records.contains(&TrajectoryRecord::Checkpoint {
        tool_call_id: "c1".into(),
        path: path.clone(),
        before: FileState::Absent,
    }));
    assert!(records.contains(&TrajectoryRecord::Checkpoint {
        tool_call_id: "c2".into(),
        path,
        before: FileState::of(Some(b"one\n")),
    }));
    let edits: Vec<(EditOutcome, Option<FileState>)> = records
        .iter()
        .filter_map(|r| match r {
            TrajectoryRecord::Edit { outcome, after, .. } => Some((*outcome, after.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        edits,
        [
            (EditOutcome::Applied, Some(FileState::of(Some(b"one\n")))),
            (EditOutcome::Applied, Some(FileState::of(Some(b"two\n"))))
        ]
    );
    assert!(records.iter().any(|r| matches!(
        r,
        TrajectoryRecord::Check { exit_code: Some(3), passed: false, timed_out: false, command, .. } if command == "exit 3"
    )));
    let usages: Vec<u32> = records
        .iter()
        .filter_map(|r| if let TrajectoryRecord::Usage { turn, .. } = r { Some(*turn) } else { None })
        .collect();
    assert_eq!(usages, [1, 2, 3, 4], "one usage record per model turn");
    assert!(matches!(
        records.last(),
        Some(TrajectoryRecord::Ended { status, turns: 4, result: Some(r), .. }) if *status == seri_core::RunStatus::Succeeded && r == "Done."
    ));
}

#[tokio::test]
async fn the_header_lists_what_was_in_force() {
    let bench = Bench::new(json!([text("hi")]));
    bench.runtime.set_trajectory_facts(seri_runloop::TrajectoryFacts {
        sampling: Some(json!({"temperature": 0.3})),
        reasoning_effort: Some("low".into()),
        openrouter_pin: Some(json!({"order": ["anthropic"], "allowFallbacks": false})),
    });
    let outcome = bench.send("hello").await;
    let header = bench.local().trajectory(outcome.run_id).unwrap().unwrap().header;
    let json = serde_json::to_value(&header).unwrap();
    assert_eq!(json["sampling"], json!({"temperature": 0.3}));
    assert_eq!(json["reasoningEffort"], "low");
    assert_eq!(json["openrouterPin"]["order"], json!(["anthropic"]));
    assert_eq!(json["promptFiles"], json!([{"path": "AGENTS.md", "sha256": "ab".repeat(32)}]));
    assert_eq!(json["systemPromptSha256"], seri_store::sha256_hex(b"You are a test agent."));
    assert_eq!((json["strategy"].as_str(), json["kind"].as_str()), (Some("continue"), Some("interactive")));
    assert_eq!(json["seriVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(json["model"]["provider"], "script");
    assert_eq!(json["maxTurns"], 500);
}

#[tokio::test]
async fn denials_are_recorded_with_their_reason_and_edit_outcome() {
    let bench = Bench::with(
        json!([
            call("c1", "edit", json!({"path": "a.txt", "old": "x", "new": "y"})),
            call("c2", "bash", json!({"command": "ls"})),
            text("ok")
        ]),
        json!({"edit": "allow", "bash": "deny"}),
        seri_runloop::RuntimeSettings::default(),
    );
    let outcome = bench.send("try").await;
    let records: Vec<TrajectoryRecord> =
        bench.local().trajectory(outcome.run_id).unwrap().unwrap().records.iter().filter_map(|r| r.record()).collect();
    // The edit of a missing file fails; the bash call is refused by policy.
    assert!(records.iter().any(|r| matches!(r, TrajectoryRecord::Edit { outcome: EditOutcome::Failed, .. })));
    assert!(records.iter().any(|r| matches!(
        r,
        TrajectoryRecord::Denial { tool, reason: seri_core::DenialReason::Policy, .. } if tool == "bash"
    )));
    assert!(!records.iter().any(|r| matches!(r, TrajectoryRecord::Check { .. })), "a refused command ran no check");
}

#[tokio::test]
async fn large_tool_values_are_elided_with_their_size() {
    let body = "z".repeat(ELIDE_THRESHOLD_BYTES * 2);
    let bench = Bench::new(json!([
        call("c1", "write_file", json!({"path": "big.txt", "content": body})),
        call("c2", "bash", json!({"command": "cat big.txt"})),
        text("ok"),
    ]));
    let outcome = bench.send("write and read a big file").await;
    let trajectory = bench.local().trajectory(outcome.run_id).unwrap().unwrap();
    let call = trajectory.records.iter().find(|r| r.kind == "tool_call").unwrap();
    assert_eq!(elided_bytes(&call.data["arguments"]["content"]), Some(body.len() as u64));
    let result = trajectory.records.iter().filter(|r| r.kind == "tool_result").nth(1).unwrap();
    assert!(elided_bytes(&result.data["content"]).is_some_and(|n| n > ELIDE_THRESHOLD_BYTES as u64));
}

#[tokio::test]
async fn nothing_is_recorded_while_recording_is_off_and_checkpoints_are_still_taken() {
    let bench = Bench::new(json!([call("c1", "write_file", json!({"path": "a.txt", "content": "x"})), text("ok")]));
    bench.runtime.set_trajectory_recording(false);
    assert!(!bench.runtime.trajectory_recording());
    let outcome = bench.send("write").await;
    assert_eq!(bench.local().trajectory(outcome.run_id).unwrap(), None);
    assert!(bench.local().trajectory_runs(bench.session).unwrap().is_empty());
    assert_eq!(bench.local().checkpoints_since(bench.session, seri_core::Seq::FIRST).unwrap().len(), 1);
}

#[tokio::test]
async fn retries_are_recorded() {
    // The scripted provider retries a server error at once, with the next turn.
    let bench = Bench::new(json!([{"error": {"kind": "server", "message": "overloaded"}}, text("ok")]));
    let outcome = bench.send("hi").await;
    assert_eq!(outcome.status.as_str(), "succeeded");
    let records: Vec<TrajectoryRecord> =
        bench.local().trajectory(outcome.run_id).unwrap().unwrap().records.iter().filter_map(|r| r.record()).collect();
    let TrajectoryRecord::Retry { attempt, max_attempts, error, .. } = &records[0] else { panic!("{records:?}") };
    assert_eq!((*attempt, *max_attempts), (1, 5));
    assert!(error.as_str().unwrap().contains("overloaded"), "{error}");
}

#[tokio::test]
async fn a_failed_run_records_how_it_ended() {
    let bench = Bench::new(json!([{"error": {"kind": "auth", "message": "bad key"}}]));
    let outcome = bench.send("hi").await;
    let ended = bench.local().trajectory(outcome.run_id).unwrap().unwrap().ended().unwrap();
    assert!(
        matches!(ended, TrajectoryRecord::Ended { ref status, error: Some(_), turns: 0, .. } if *status == seri_core::RunStatus::Failed),
        "{ended:?}"
    );
}

/// A tool that prunes every trajectory while the run is recording: the
/// run's next records then have nowhere to go.
struct PruneEverything {
    store: std::sync::Arc<seri_store::Store>,
    clock: std::sync::Arc<seri_store::ManualClock>,
}

#[async_trait::async_trait]
impl seri_tools::Tool for PruneEverything {
    fn name(&self) -> &str {
        "prune_now"
    }

    fn description(&self) -> &str {
        "Prunes every trajectory."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({"type": "object"})
    }

    fn availability(&self, _run: &seri_tools::RunContext) -> seri_tools::Availability {
        seri_tools::Availability::Available
    }

    async fn call(
        &self,
        _ctx: seri_tools::ToolContext<'_>,
        _input: serde_json::Value,
    ) -> Result<seri_tools::ToolOutcome, seri_tools::ToolError> {
        self.clock.advance(40 * 86_400_000);
        let local = self.store.agent(&seri_core::AgentId::local());
        local.prune_trajectories(&seri_store::RetentionPolicy::new(None)).unwrap();
        Ok(seri_tools::ToolOutcome::text("pruned"))
    }
}

#[tokio::test]
async fn a_recording_that_cannot_be_written_never_fails_the_run() {
    let bench = Bench::with_tools(
        json!([
            call("c1", "prune_now", json!({})),
            call("c2", "write_file", json!({"path": "a.txt", "content": "x"})),
            text("done")
        ]),
        json!({"write_file": "allow"}),
        seri_runloop::RuntimeSettings::default(),
        |store, clock| vec![std::sync::Arc::new(PruneEverything { store: store.clone(), clock: clock.clone() })],
    );
    let outcome = bench.send("go").await;
    assert_eq!(outcome.status.as_str(), "succeeded", "{:?}", outcome.error);
    assert_eq!(outcome.result.as_deref(), Some("done"));
    assert_eq!(bench.read("a.txt").as_deref(), Some("x"), "the tools still ran");
    assert_eq!(bench.local().trajectory(outcome.run_id).unwrap(), None, "the rest went unrecorded");
}
