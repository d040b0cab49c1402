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
