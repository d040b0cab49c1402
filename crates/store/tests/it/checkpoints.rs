//! File checkpoints: contents by hash, what the tool left, the turns they
//! belong to, and the per-project cap that retires the undo history of the
//! least recently touched sessions while their conversations stay.

use seri_core::{Seq, SessionId, ToolCallId};
use seri_store::{
    AgentStore, CHECKPOINT_SESSIONS_PER_PROJECT, CheckpointHistory, FileState, LookupError, MAX_CHECKPOINT_FILE_BYTES,
    NewCheckpoint, SeqRange, StoreError,
};

use crate::support::{Backend, Fixture, user};

fn checkpoint(
    agent: &AgentStore<'_>,
    session: SessionId,
    turn: u64,
    path: &str,
    before: Option<&[u8]>,
) -> seri_store::CheckpointRecorded {
    let call = ToolCallId::from("call_1");
    agent
        .record_checkpoint(&NewCheckpoint {
            session_id: session,
            turn_seq: Seq(turn),
            run_id: None,
            tool_call_id: &call,
            path,
            before,
        })
        .unwrap()
}

#[test]
fn a_checkpoint_keeps_the_content_by_hash_and_learns_what_the_tool_left() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let first = checkpoint(&local, session, 1, "/w/a.rs", Some(b"fn a() {}"));
        assert!(first.kept);
        assert_eq!(first.before, FileState::of(Some(b"fn a() {}")));
        local.finish_checkpoint(&first.id, &FileState::of(Some(b"fn b() {}"))).unwrap();
        // A file that did not exist, in a later turn.
        let created = checkpoint(&local, session, 3, "/w/new.rs", None);
        assert_eq!(created.before, FileState::Absent);
        assert!(!created.kept);

        let all = local.checkpoints_since(session, Seq(1)).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].after, Some(FileState::of(Some(b"fn b() {}"))));
        assert_eq!(all[1].after, None, "unknown until the call ends");
        assert_eq!(local.checkpoints_since(session, Seq(2)).unwrap().len(), 1, "turn 3's only");
        let FileState::Present { sha256, .. } = &first.before else { unreachable!() };
        assert_eq!(local.checkpoint_content(sha256).unwrap().as_deref(), Some(&b"fn a() {}"[..]));
        assert!(matches!(
            local.checkpoint_history(session).unwrap(),
            CheckpointHistory::Live { covers_from: Seq(1), .. }
        ));

        // Discarding turn 1 onwards (after a restore) deletes rows and unused contents.
        assert_eq!(local.discard_checkpoints(session, Seq(1)).unwrap(), 2);
        assert_eq!(local.checkpoint_content(sha256).unwrap(), None);
        let err = local.finish_checkpoint(&first.id, &FileState::Absent).unwrap_err();
        assert!(matches!(err, StoreError::Lookup(LookupError::UnknownCheckpoint { .. })), "{err}");
    }
}

#[test]
fn a_file_too_large_to_keep_is_noted_without_its_content() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let big = vec![b'x'; MAX_CHECKPOINT_FILE_BYTES as usize + 1];
        let recorded = checkpoint(&local, session, 1, "/w/big.bin", Some(&big));
        assert!(!recorded.kept);
        assert!(matches!(recorded.before, FileState::Present { bytes, .. } if bytes == MAX_CHECKPOINT_FILE_BYTES + 1));
    }
}

#[test]
fn only_the_twenty_most_recently_touched_sessions_per_project_keep_their_checkpoints() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let sessions: Vec<SessionId> = (0..CHECKPOINT_SESSIONS_PER_PROJECT + 2)
            .map(|i| {
                let s = f.session(&local, "/project");
                local.append(s, [user(&format!("task {i}"))]).unwrap();
                s
            })
            .collect();
        // Another project's session is not counted against this one.
        let elsewhere = f.session(&local, "/elsewhere");
        checkpoint(&local, elsewhere, 1, "/elsewhere/x", Some(b"x"));
        let mut retired = Vec::new();
        let cap = CHECKPOINT_SESSIONS_PER_PROJECT;
        for (i, s) in sessions.iter().enumerate().take(cap) {
            f.clock.advance(1);
            retired.extend(checkpoint(&local, *s, 1, "/project/f", Some(format!("v{i}").as_bytes())).retired);
        }
        assert!(retired.is_empty(), "up to the cap, nothing is retired");
        // Session 0 is used again (a run starts in it), so it is the most recent.
        f.clock.advance(1);
        local.touch_checkpoints(sessions[0]).unwrap();
        for s in &sessions[cap..] {
            f.clock.advance(1);
            retired.extend(checkpoint(&local, *s, 1, "/project/f", Some(b"new")).retired);
        }
        // Two sessions past the cap: the two least recently touched go.
        assert_eq!(retired, [sessions[1], sessions[2]]);
        for s in &retired {
            assert!(matches!(local.checkpoint_history(*s).unwrap(), CheckpointHistory::Retired { .. }));
            assert!(local.checkpoints_since(*s, Seq(1)).unwrap().is_empty());
            // The conversation stays.
            assert_eq!(local.events(*s, SeqRange::ALL).unwrap().len(), 1);
        }
        assert_eq!(local.checkpoints_since(sessions[0], Seq(1)).unwrap().len(), 1);
        assert_eq!(local.checkpoints_since(sessions[3], Seq(1)).unwrap().len(), 1);
        assert_eq!(local.checkpoints_since(elsewhere, Seq(1)).unwrap().len(), 1);
        // A retired session that checkpoints again has a new history from that turn.
        f.clock.advance(1);
        checkpoint(&local, sessions[1], 5, "/project/f", Some(b"again"));
        assert!(matches!(
            local.checkpoint_history(sessions[1]).unwrap(),
            CheckpointHistory::Live { covers_from: Seq(5), retired_at: Some(_) }
        ));
    }
}

#[test]
fn another_agents_sessions_cannot_be_checkpointed() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let session = f.session(&local, "/w");
        let other = f.store.agent(&seri_core::AgentId("other".into()));
        let call = ToolCallId::from("c");
        let err = other
            .record_checkpoint(&NewCheckpoint {
                session_id: session,
                turn_seq: Seq(1),
                run_id: None,
                tool_call_id: &call,
                path: "/w/a",
                before: None,
            })
            .unwrap_err();
        assert!(matches!(err, StoreError::Lookup(LookupError::UnknownSession { .. })), "{err}");
    }
}
