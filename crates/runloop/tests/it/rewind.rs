//! `/rewind` through the run loop's API: the conversation only, the files
//! only, both; a file that did not exist; the refusal across a compaction;
//! the external-change warning; and the listing of reachable turns.

use serde_json::json;
use seri_core::{EventBody, Seq};
use seri_runloop::{RewindError, RewindScope, RuntimeSettings};

use crate::bench::{Bench, call, text};

/// Turn 1 writes `notes.txt` ("v1"); turn 2 edits it to "v2" and creates `extra.txt`.
async fn two_turns() -> (Bench, Seq, Seq) {
    let bench = Bench::new(json!([
        call("c1", "write_file", json!({"path": "notes.txt", "content": "v1"})),
        text("wrote v1"),
        call("c2", "edit", json!({"path": "notes.txt", "old": "v1", "new": "v2"})),
        call("c3", "write_file", json!({"path": "extra.txt", "content": "new file"})),
        text("edited to v2"),
        text("after the rewind"),
    ]));
    bench.send("write notes").await;
    let turn1 = user_seqs(&bench)[0];
    bench.send("change notes to v2").await;
    let turn2 = user_seqs(&bench)[1];
    assert_eq!(bench.read("notes.txt").as_deref(), Some("v2"));
    (bench, turn1, turn2)
}

fn user_seqs(bench: &Bench) -> Vec<Seq> {
    bench
        .events()
        .iter()
        .filter(|e| e.body.as_message().is_some_and(seri_core::Message::is_from_user_or_trigger))
        .map(|e| e.seq)
        .collect()
}

#[tokio::test]
async fn rewinding_the_conversation_appends_an_event_and_leaves_the_files() {
    let (bench, _, turn2) = two_turns().await;
    let events_before = bench.events().len();
    let plan = bench.runtime.plan_rewind(bench.session, turn2, RewindScope::Conversation).unwrap();
    assert!(plan.restores.is_empty(), "the files are not part of it");
    let report = bench.runtime.apply_rewind(&plan, false).unwrap();
    assert_eq!(report.conversation_to, Some(Seq(turn2.get() - 1)));
    let events = bench.events();
    assert_eq!(events.len(), events_before + 1, "appended, never rewritten");
    assert!(matches!(&events.last().unwrap().body, EventBody::ContextRewound(r) if r.turn_seq == turn2));
    assert_eq!(bench.read("notes.txt").as_deref(), Some("v2"));

    // The next request starts from before turn 2.
    bench.send("start over").await;
    let texts = bench.last_request_texts();
    assert_eq!(texts.first().map(String::as_str), Some("user: write notes"));
    assert!(!texts.iter().any(|t| t.contains("change notes to v2") || t.contains("edited to v2")), "{texts:?}");
    assert_eq!(texts.last().map(String::as_str), Some("user: start over"));
}

#[tokio::test]
async fn rewinding_the_files_restores_contents_and_removes_new_files_only() {
    let (bench, _, turn2) = two_turns().await;
    let events_before = bench.events().len();
    let plan = bench.runtime.plan_rewind(bench.session, turn2, RewindScope::Files).unwrap();
    assert_eq!(plan.restores.len(), 2);
    assert!(plan.changed_outside().is_empty());
    let report = bench.runtime.apply_rewind(&plan, false).unwrap();
    assert_eq!(report.restored, [bench.file("notes.txt")]);
    assert_eq!(report.removed, [bench.file("extra.txt")]);
    assert_eq!(report.conversation_to, None);
    assert_eq!(bench.read("notes.txt").as_deref(), Some("v1"));
    assert!(!bench.file("extra.txt").exists());
    assert_eq!(bench.events().len(), events_before, "the conversation is untouched");
    // The undone turn's checkpoints are gone; turn 1's stay.
    assert!(bench.local().checkpoints_since(bench.session, turn2).unwrap().is_empty());
    assert_eq!(bench.local().checkpoints_since(bench.session, Seq::FIRST).unwrap().len(), 1);
}

#[tokio::test]
async fn rewinding_both_to_the_first_turn_undoes_everything() {
    let (bench, turn1, _) = two_turns().await;
    let plan = bench.runtime.plan_rewind(bench.session, turn1, RewindScope::Both).unwrap();
    let report = bench.runtime.apply_rewind(&plan, false).unwrap();
    assert_eq!(report.removed.len(), 2, "notes.txt and extra.txt did not exist before turn 1");
    assert!(!bench.file("notes.txt").exists());
    assert_eq!(report.conversation_to, Some(Seq(turn1.get() - 1)));
    bench.send("fresh start").await;
    assert_eq!(bench.last_request_texts(), ["user: fresh start"]);
}

#[tokio::test]
async fn a_file_changed_outside_seri_is_reported_and_not_overwritten_unless_told() {
    let (bench, _, turn2) = two_turns().await;
    std::fs::write(bench.file("notes.txt"), "edited by hand").unwrap();
    let plan = bench.runtime.plan_rewind(bench.session, turn2, RewindScope::Files).unwrap();
    let changed: Vec<_> = plan.changed_outside().into_iter().map(|r| r.path.clone()).collect();
    assert_eq!(changed, [bench.file("notes.txt")]);
    let err = bench.runtime.apply_rewind(&plan, false).unwrap_err();
    assert!(matches!(&err, RewindError::ChangedOutside { paths } if paths == &changed), "{err}");
    assert!(err.to_string().contains("notes.txt` changed outside seri's tools since its checkpoint"), "{err}");
    assert_eq!(bench.read("notes.txt").as_deref(), Some("edited by hand"), "nothing was overwritten");
    assert!(bench.file("extra.txt").exists(), "nothing at all changed");
    // Told to, it restores.
    bench.runtime.apply_rewind(&plan, true).unwrap();
    assert_eq!(bench.read("notes.txt").as_deref(), Some("v1"));
}

#[tokio::test]
async fn a_bash_change_counts_as_outside_seris_checkpoints() {
    let bench = Bench::new(json!([
        call("c1", "write_file", json!({"path": "a.txt", "content": "one"})),
        call("c2", "bash", json!({"command": "echo two > a.txt"})),
        text("done"),
    ]));
    bench.send("write then overwrite with bash").await;
    let turn = user_seqs(&bench)[0];
    let plan = bench.runtime.plan_rewind(bench.session, turn, RewindScope::Files).unwrap();
    assert_eq!(plan.changed_outside().len(), 1, "bash is not checkpointed, so its change is reported");
}

#[tokio::test]
async fn rewind_will_not_step_across_a_compaction() {
    let settings = RuntimeSettings { keep_tokens: 0, ..crate::support::compact(200_000) };
    let recap = "## Goal\ng\n\n## Progress\np\n\n## Blockers\n(none)\n\n## Next steps\nn";
    let bench = Bench::with(
        json!([text("a1"), text("a2"), text("a3"), text("a4"), text(recap), text("a5")]),
        json!({}),
        settings,
    );
    for q in ["q1", "q2", "q3", "q4"] {
        bench.send(q).await;
    }
    let message = bench.runtime.compact_now(bench.session, "").await.unwrap();
    assert!(message.starts_with("Compacted"), "{message}");
    bench.send("q5").await;
    let turns = user_seqs(&bench);
    let err = bench.runtime.plan_rewind(bench.session, turns[1], RewindScope::Both).unwrap_err();
    assert!(matches!(err, RewindError::AcrossCompaction { .. }), "{err}");
    assert!(err.to_string().contains("/rewind will not step across a compaction"), "{err}");
    // The listing says where the compaction is and offers only the turn after it.
    let listed = bench.runtime.rewind_turns(bench.session).unwrap();
    assert!(listed.compacted_at.is_some());
    assert_eq!(listed.turns.iter().map(|t| t.seq).collect::<Vec<_>>(), [turns[4]]);
    assert!(bench.runtime.plan_rewind(bench.session, turns[4], RewindScope::Both).is_ok());
}

#[tokio::test]
async fn the_listing_names_each_turns_files_and_only_real_turns_are_accepted() {
    let (bench, turn1, turn2) = two_turns().await;
    let listed = bench.runtime.rewind_turns(bench.session).unwrap();
    let shown: Vec<(Seq, String, usize)> =
        listed.turns.iter().map(|t| (t.seq, t.preview.clone(), t.files.len())).collect();
    assert_eq!(shown, [(turn1, "write notes".to_owned(), 2), (turn2, "change notes to v2".to_owned(), 2)]);
    assert_eq!(listed.compacted_at, None);
    let err = bench.runtime.plan_rewind(bench.session, Seq(turn1.get() + 1), RewindScope::Both).unwrap_err();
    assert!(matches!(err, RewindError::NotATurn { .. }), "{err}");
    // After rewinding the conversation, the rewound turn is no longer offered.
    let plan = bench.runtime.plan_rewind(bench.session, turn2, RewindScope::Conversation).unwrap();
    bench.runtime.apply_rewind(&plan, false).unwrap();
    let listed = bench.runtime.rewind_turns(bench.session).unwrap();
    assert_eq!(listed.turns.iter().map(|t| t.seq).collect::<Vec<_>>(), [turn1]);
}

#[tokio::test]
async fn a_session_past_the_per_project_cap_can_rewind_its_conversation_but_not_its_files() {
    let (bench, _, turn2) = two_turns().await;
    let cwd = bench.work().to_string_lossy().into_owned();
    let local = bench.local();
    for i in 0..seri_store::CHECKPOINT_SESSIONS_PER_PROJECT {
        bench.clock.advance(1);
        let seed = local.new_seed(cwd.clone());
        local.create_session(&seed).unwrap();
        let call = seri_core::ToolCallId::from("c");
        let path = format!("{cwd}/other-{i}");
        local
            .record_checkpoint(&seri_store::NewCheckpoint {
                session_id: seed.id,
                turn_seq: Seq(1),
                run_id: None,
                tool_call_id: &call,
                path: &path,
                before: None,
            })
            .unwrap();
    }
    let err = bench.runtime.plan_rewind(bench.session, turn2, RewindScope::Files).unwrap_err();
    assert!(matches!(err, RewindError::HistoryRetired { covers_from: None }), "{err}");
    assert_eq!(
        err.to_string(),
        "the file checkpoints of this session were retired (seri keeps them for the 20 most recently used sessions \
         of a project); the conversation can still be rewound"
    );
    let plan = bench.runtime.plan_rewind(bench.session, turn2, RewindScope::Conversation).unwrap();
    assert!(bench.runtime.apply_rewind(&plan, false).unwrap().conversation_to.is_some());
}

/// A fork of the bench's session at `at` (its end when `None`).
fn fork(bench: &Bench, at: Option<Seq>) -> seri_core::SessionId {
    bench.local().fork_session(bench.session, at, seri_core::ForkVia::Cli).unwrap().id
}

/// Turn 1 writes `notes.txt` ("v1"); turn 2 edits it to "v2", then creates
/// `extra.txt` in a second model turn; then a turn that edits it to "v3".
async fn two_turns_then_v3() -> (Bench, Seq, Seq) {
    let bench = Bench::new(json!([
        call("c1", "write_file", json!({"path": "notes.txt", "content": "v1"})),
        text("wrote v1"),
        call("c2", "edit", json!({"path": "notes.txt", "old": "v1", "new": "v2"})),
        call("c3", "write_file", json!({"path": "extra.txt", "content": "new file"})),
        text("edited to v2"),
        call("c4", "edit", json!({"path": "notes.txt", "old": "v2", "new": "v3"})),
        text("v3"),
    ]));
    bench.send("write notes").await;
    bench.send("change notes to v2").await;
    let turns = user_seqs(&bench);
    (bench, turns[0], turns[1])
}

#[tokio::test]
async fn a_fork_rewinds_the_files_of_the_turns_it_shares_as_the_parents_checkpoints_recorded_them() {
    let (bench, turn1, turn2) = two_turns_then_v3().await;
    let fork = fork(&bench, None);
    bench.send_to(fork, "now v3").await;
    assert_eq!(bench.read("notes.txt").as_deref(), Some("v3"));
    let turn3 = bench.local().newest_user_message(fork).unwrap().unwrap().seq;

    // The fork lists the parent's turns with the files they changed, then its own.
    let listed = bench.runtime.rewind_turns(fork).unwrap();
    let shown: Vec<(Seq, usize)> = listed.turns.iter().map(|t| (t.seq, t.files.len())).collect();
    assert_eq!(shown, [(turn1, 2), (turn2, 2), (turn3, 1)]);

    // Back to before turn 2, a turn of the parent's: as its checkpoints recorded the files.
    let plan = bench.runtime.plan_rewind(fork, turn2, RewindScope::Both).unwrap();
    assert!(plan.changed_outside().is_empty(), "only seri's tools changed them: {plan:?}");
    let report = bench.runtime.apply_rewind(&plan, false).unwrap();
    assert_eq!(report.restored, [bench.file("notes.txt")]);
    assert_eq!(report.removed, [bench.file("extra.txt")]);
    assert_eq!(bench.read("notes.txt").as_deref(), Some("v1"));
    assert!(!bench.file("extra.txt").exists());

    // Each keeps its own undo history: the fork dropped the undone turns'
    // checkpoints, the parent still has all three of its calls'.
    let local = bench.local();
    let calls = |session| -> Vec<String> {
        local.checkpoints_since(session, Seq::FIRST).unwrap().into_iter().map(|c| c.tool_call_id.0).collect()
    };
    assert_eq!(calls(fork), ["c1"]);
    assert_eq!(calls(bench.session), ["c1", "c2", "c3"]);
    // And the parent can still rewind its own turn 2 (the files are as before it already).
    let plan = bench.runtime.plan_rewind(bench.session, turn2, RewindScope::Files).unwrap();
    assert!(plan.restores.is_empty() && plan.unrestorable.is_empty(), "{plan:?}");
    // The fork still reads the parent's own events (the same ids): only undo rows were copied.
    let parent: Vec<_> = bench.events().into_iter().map(|e| e.id).collect();
    let shared: Vec<_> = local.events(fork, seri_store::SeqRange::ALL).unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(shared[..parent.len()], parent[..]);
}

#[tokio::test]
async fn a_fork_inside_a_turn_shares_the_checkpoints_of_the_calls_before_its_point_only() {
    let (bench, _, turn2) = two_turns_then_v3().await;
    // Fork right after c2's result: c3 (which made extra.txt) is after the point.
    let c2_result = bench
        .events()
        .into_iter()
        .find(|e| matches!(&e.body, seri_core::EventBody::ToolResult(r) if r.tool_call_id.0 == "c2"))
        .unwrap()
        .seq;
    let fork = fork(&bench, Some(c2_result));
    let plan = bench.runtime.plan_rewind(fork, turn2, RewindScope::Files).unwrap();
    let paths: Vec<_> = plan.restores.iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, [bench.file("notes.txt")], "extra.txt is none of the fork's business");
    bench.runtime.apply_rewind(&plan, false).unwrap();
    assert_eq!(bench.read("notes.txt").as_deref(), Some("v1"));
    assert!(bench.file("extra.txt").exists());
}

#[tokio::test]
async fn a_parents_later_rewind_leaves_its_forks_undo_history_alone() {
    let (bench, _, turn2) = two_turns_then_v3().await;
    let fork = fork(&bench, None);
    let plan = bench.runtime.plan_rewind(bench.session, turn2, RewindScope::Files).unwrap();
    bench.runtime.apply_rewind(&plan, false).unwrap();
    assert_eq!(bench.read("notes.txt").as_deref(), Some("v1"));
    // The fork's turn 2 still says what it changed, and redoing it by hand
    // then rewinding the fork puts the files back again.
    let listed = bench.runtime.rewind_turns(fork).unwrap();
    assert_eq!(listed.turns.iter().find(|t| t.seq == turn2).map(|t| t.files.len()), Some(2));
    std::fs::write(bench.file("notes.txt"), "v2").unwrap();
    std::fs::write(bench.file("extra.txt"), "new file").unwrap();
    let plan = bench.runtime.plan_rewind(fork, turn2, RewindScope::Files).unwrap();
    assert!(plan.changed_outside().is_empty(), "as seri's tools left them: {plan:?}");
    bench.runtime.apply_rewind(&plan, false).unwrap();
    assert_eq!(bench.read("notes.txt").as_deref(), Some("v1"));
    assert!(!bench.file("extra.txt").exists());
}

#[tokio::test]
async fn a_fork_of_a_retired_parent_says_its_shared_turns_have_no_checkpoints() {
    let (bench, _, turn2) = two_turns_then_v3().await;
    let cwd = bench.work().to_string_lossy().into_owned();
    let local = bench.local();
    for i in 0..seri_store::CHECKPOINT_SESSIONS_PER_PROJECT {
        bench.clock.advance(1);
        let seed = local.new_seed(cwd.clone());
        local.create_session(&seed).unwrap();
        let call = seri_core::ToolCallId::from("c");
        let path = format!("{cwd}/other-{i}");
        let checkpoint = seri_store::NewCheckpoint {
            session_id: seed.id,
            turn_seq: Seq(1),
            run_id: None,
            tool_call_id: &call,
            path: &path,
            before: None,
        };
        local.record_checkpoint(&checkpoint).unwrap();
    }
    let last = bench.events().last().unwrap().seq;
    let fork = fork(&bench, None);
    let err = bench.runtime.plan_rewind(fork, turn2, RewindScope::Files).unwrap_err();
    let after = Seq(last.get() + 1);
    assert!(matches!(err, RewindError::HistoryRetired { covers_from: Some(s) } if s == after), "{err}");
}
