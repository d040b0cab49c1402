//! How the runtime carries out a rewind (see [`crate::rewind`]): the turns
//! it can reach, the plan for one, and the plan carried out.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use seri_core::{ContextRewound, EventBody, Seq, SessionId};
use seri_projection::compaction::{WorkingContext, visible_events};
use seri_store::{CheckpointFile, CheckpointHistory, FileState};

use crate::checkpoint::current_state;
use crate::error::RunError;
use crate::rewind::{
    FileRestore, REWIND_LIST_TURNS, RewindError, RewindPlan, RewindReport, RewindScope, RewindTurn, RewindTurns,
};
use crate::runtime::Runtime;

impl Runtime {
    /// The events of the session's working context, whole (a rewind lists
    /// turns by their events), and the context built from them.
    fn rewind_context(&self, session: SessionId) -> Result<(Vec<seri_core::Event>, WorkingContext), RunError> {
        let events = crate::compaction::working_context_events(&self.agent_store(), session)?;
        let context = WorkingContext::from_events(&events).map_err(|e| RunError::Context(e.to_string()))?;
        Ok((events, context))
    }

    /// The person's turns a rewind can reach, at most
    /// [`REWIND_LIST_TURNS`], newest last.
    pub fn rewind_turns(&self, session: SessionId) -> Result<RewindTurns, RewindError> {
        let (events, context) = self.rewind_context(session)?;
        let compacted_at = context.recap().map(|r| r.seq);
        let checkpoints = self.agent_store().checkpoints_since(session, Seq::FIRST)?;
        let mut turns: Vec<RewindTurn> = visible_events(&events)
            .into_iter()
            .filter(|e| compacted_at.is_none_or(|c| e.seq > c))
            .filter_map(|e| match &e.body {
                EventBody::Message(m) if m.is_from_user_or_trigger() => Some(RewindTurn {
                    seq: e.seq,
                    at: e.at,
                    preview: preview(&m.content),
                    files: files_from(&checkpoints, e.seq),
                }),
                _ => None,
            })
            .collect();
        let skip = turns.len().saturating_sub(REWIND_LIST_TURNS);
        turns.drain(..skip);
        Ok(RewindTurns { turns, compacted_at })
    }

    /// What rewinding to before the turn at `turn_seq` would do; changes nothing.
    pub fn plan_rewind(
        &self,
        session: SessionId,
        turn_seq: Seq,
        scope: RewindScope,
    ) -> Result<RewindPlan, RewindError> {
        let (events, context) = self.rewind_context(session)?;
        if let Some(recap) = context.recap()
            && turn_seq < recap.seq
        {
            return Err(RewindError::AcrossCompaction { turn_seq, compaction_seq: recap.seq });
        }
        let is_turn = visible_events(&events)
            .iter()
            .any(|e| e.seq == turn_seq && e.body.as_message().is_some_and(seri_core::Message::is_from_user_or_trigger));
        if !is_turn {
            return Err(RewindError::NotATurn { seq: turn_seq });
        }
        let mut plan =
            RewindPlan { session_id: session, turn_seq, scope, restores: Vec::new(), unrestorable: Vec::new() };
        if scope.files() {
            self.plan_files(&mut plan)?;
        }
        Ok(plan)
    }

    fn plan_files(&self, plan: &mut RewindPlan) -> Result<(), RewindError> {
        let store = self.agent_store();
        match store.checkpoint_history(plan.session_id)? {
            CheckpointHistory::None => return Ok(()),
            CheckpointHistory::Retired { .. } => {
                return Err(RewindError::HistoryRetired { covers_from: None });
            }
            CheckpointHistory::Live { covers_from, .. } if covers_from > plan.turn_seq => {
                return Err(RewindError::HistoryRetired { covers_from: Some(covers_from) });
            }
            CheckpointHistory::Live { .. } => {}
        }
        let checkpoints = store.checkpoints_since(plan.session_id, plan.turn_seq)?;
        for path in first_seen_paths(&checkpoints) {
            let of_path: Vec<&CheckpointFile> = checkpoints.iter().filter(|c| c.path == path).collect();
            let (Some(first), Some(last)) = (of_path.first(), of_path.last()) else { continue };
            let path = PathBuf::from(&first.path);
            let now = current_state(&path).map_err(|source| RewindError::Io { path: path.clone(), source })?;
            if now == first.before {
                continue;
            }
            if matches!(first.before, FileState::Present { .. }) && !first.before_kept {
                plan.unrestorable.push(path);
                continue;
            }
            plan.restores.push(FileRestore { path, to: first.before.clone(), now, left_by_seri: last.after.clone() });
        }
        Ok(())
    }

    /// Carries out a plan. With `overwrite_changed` false, a plan that
    /// would overwrite a file changed outside seri's tools is refused and
    /// nothing changes; the caller says so, asks, and calls again.
    pub fn apply_rewind(&self, plan: &RewindPlan, overwrite_changed: bool) -> Result<RewindReport, RewindError> {
        let changed: Vec<PathBuf> = plan.changed_outside().into_iter().map(|r| r.path.clone()).collect();
        if !changed.is_empty() && !overwrite_changed {
            return Err(RewindError::ChangedOutside { paths: changed });
        }
        // Nobody else changes the session while it is rewound; a run in
        // progress (another terminal) makes this a clear refusal.
        let _lease = self.leases().try_now(plan.session_id)?;
        let store = self.agent_store();
        let mut report = RewindReport { unrestorable: plan.unrestorable.clone(), ..RewindReport::default() };
        for restore in &plan.restores {
            let io = |source| RewindError::Io { path: restore.path.clone(), source };
            match &restore.to {
                FileState::Absent => {
                    match std::fs::remove_file(&restore.path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        Err(e) => return Err(io(e)),
                    }
                    report.removed.push(restore.path.clone());
                }
                FileState::Present { sha256, .. } => {
                    let content = store.checkpoint_content(sha256)?.ok_or_else(|| {
                        io(io::Error::new(io::ErrorKind::NotFound, "its checkpointed content is no longer stored"))
                    })?;
                    write_atomic(&restore.path, &content).map_err(io)?;
                    report.restored.push(restore.path.clone());
                }
            }
        }
        if plan.scope.files() {
            store.discard_checkpoints(plan.session_id, plan.turn_seq)?;
        }
        if plan.scope.conversation() {
            let rewind = ContextRewound::before_turn(plan.turn_seq);
            self.settle_then_append(plan.session_id, Some(EventBody::ContextRewound(rewind)))?;
            self.notify_session(plan.session_id);
            report.conversation_to = Some(rewind.to_seq);
        }
        Ok(report)
    }
}

/// Paths of `checkpoints` in the order first changed.
fn first_seen_paths(checkpoints: &[CheckpointFile]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for c in checkpoints {
        if !paths.contains(&c.path) {
            paths.push(c.path.clone());
        }
    }
    paths
}

fn files_from(checkpoints: &[CheckpointFile], turn: Seq) -> Vec<PathBuf> {
    let from: Vec<CheckpointFile> = checkpoints.iter().filter(|c| c.turn_seq >= turn).cloned().collect();
    first_seen_paths(&from).into_iter().map(PathBuf::from).collect()
}

/// The first line, at most 60 characters.
fn preview(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let short: String = line.chars().take(60).collect();
    if short.len() < line.len() || text.lines().nth(1).is_some() { format!("{short}…") } else { short }
}

/// Writes `bytes` to `path` through a temporary file beside it, so a
/// failure leaves the old file as it was. Missing folders are created.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.seri-rewind-{}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}
