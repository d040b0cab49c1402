//! `/rewind`: back to before one of the person's turns, for the
//! conversation, the files, or both.
//!
//! - [`Runtime::rewind_turns`] lists the turns a rewind can reach: the
//!   person's messages in the working context, newest last, each with the
//!   files seri's tools changed from that turn on.
//! - [`Runtime::plan_rewind`] decides, without changing anything, what a
//!   rewind to before a turn would do: which files go back to what, and
//!   which of them changed outside seri's tools since their checkpoint (by
//!   hash: a person, an editor, a `bash` command). It refuses a turn before
//!   the newest compaction ([`RewindError::AcrossCompaction`]): the
//!   compacted prefix is no longer in the working context to go back to.
//! - [`Runtime::apply_rewind`] carries a plan out. It refuses to overwrite
//!   a file changed outside seri's tools unless told to
//!   ([`RewindError::ChangedOutside`]), so nothing is overwritten without
//!   saying so; the REPL asks the person and passes their answer.
//!
//! Rewinding the conversation appends a `context_rewound` event (after
//! settling any call a stopped run left unanswered, so the transcript stays
//! paired): the transcript is never rewritten, and `seri thread` still
//! shows the rewound turns. Rewinding the files writes each back to what it
//! held before the turn's first change to it (a file that did not exist is
//! removed; folders a tool created stay) and drops the checkpoints of the
//! undone turns.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use seri_core::{ContextRewound, EventBody, Seq, SessionId, Timestamp};
use seri_projection::compaction::{WorkingContext, visible_events};
use seri_store::{CheckpointFile, CheckpointHistory, FileState, StoreError};

use crate::checkpoint::current_state;
use crate::error::RunError;
use crate::runtime::Runtime;

/// How many turns [`Runtime::rewind_turns`] lists at most.
pub const REWIND_LIST_TURNS: usize = 10;

/// What a rewind restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindScope {
    /// The working context only: files stay as they are.
    Conversation,
    /// The files only: the model still sees the rewound turns.
    Files,
    /// Both.
    Both,
}

impl RewindScope {
    /// Whether the conversation goes back.
    pub fn conversation(self) -> bool {
        matches!(self, RewindScope::Conversation | RewindScope::Both)
    }

    /// Whether the files go back.
    pub fn files(self) -> bool {
        matches!(self, RewindScope::Files | RewindScope::Both)
    }
}

/// A turn a rewind can go back to before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindTurn {
    /// The seq of the message that opened it.
    pub seq: Seq,
    /// When it was sent.
    pub at: Timestamp,
    /// Its first line, shortened.
    pub preview: String,
    /// Files seri's tools changed from this turn on, in the order first changed.
    pub files: Vec<PathBuf>,
}

/// The turns [`Runtime::rewind_turns`] lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindTurns {
    /// The reachable turns, newest last.
    pub turns: Vec<RewindTurn>,
    /// The newest compaction's seq: turns before it cannot be reached.
    pub compacted_at: Option<Seq>,
}

/// A file a rewind would put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRestore {
    /// The file.
    pub path: PathBuf,
    /// What it held before the turn: `Absent` means it is removed.
    pub to: FileState,
    /// What it holds now.
    pub now: FileState,
    /// What seri's tools last left in it; `None` when a call never ended.
    pub left_by_seri: Option<FileState>,
}

impl FileRestore {
    /// Whether something other than seri's tools changed it since (or seri
    /// cannot tell, because the call that changed it never ended).
    pub fn changed_outside(&self) -> bool {
        self.left_by_seri.as_ref() != Some(&self.now)
    }
}

/// What a rewind would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindPlan {
    /// The session.
    pub session_id: SessionId,
    /// The turn it goes back to before.
    pub turn_seq: Seq,
    /// What it restores.
    pub scope: RewindScope,
    /// Files to put back (already as they were are left out).
    pub restores: Vec<FileRestore>,
    /// Files that changed but cannot be put back: too large to have been kept.
    pub unrestorable: Vec<PathBuf>,
}

impl RewindPlan {
    /// The files changed outside seri's tools since their checkpoint.
    pub fn changed_outside(&self) -> Vec<&FileRestore> {
        self.restores.iter().filter(|r| r.changed_outside()).collect()
    }
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RewindReport {
    /// Files written back.
    pub restored: Vec<PathBuf>,
    /// Files removed (they did not exist before the turn).
    pub removed: Vec<PathBuf>,
    /// Files that could not be put back.
    pub unrestorable: Vec<PathBuf>,
    /// Where the conversation now continues from, if it was rewound.
    pub conversation_to: Option<Seq>,
}

/// Why a rewind was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum RewindError {
    /// The turn began before the newest compaction.
    #[error(
        "cannot rewind to before seq {turn_seq}: the conversation was compacted at seq {compaction_seq}, and /rewind \
         will not step across a compaction (the compacted turns are only in the recap now)"
    )]
    AcrossCompaction {
        /// The turn asked for.
        turn_seq: Seq,
        /// The newest compaction.
        compaction_seq: Seq,
    },
    /// The seq is not a message the person sent that the conversation still shows.
    #[error("seq {seq} is not one of your turns in this conversation: pick one /rewind lists")]
    NotATurn {
        /// The seq asked for.
        seq: Seq,
    },
    /// The session's checkpoints for that turn were retired by the per-project cap.
    #[error(
        "the file checkpoints of this session{} were retired (seri keeps them for the {} most recently used \
         sessions of a project); the conversation can still be rewound",
        covers_from.map_or_else(String::new, |seq| format!(" before seq {seq}")),
        seri_store::CHECKPOINT_SESSIONS_PER_PROJECT
    )]
    HistoryRetired {
        /// The first turn the history kept since covers; `None` when none is kept.
        covers_from: Option<Seq>,
    },
    /// Files changed outside seri's tools, and the caller did not allow overwriting them.
    #[error("{} changed outside seri's tools since its checkpoint; not overwriting without being told to", list(.paths))]
    ChangedOutside {
        /// The files.
        paths: Vec<PathBuf>,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Reading the session failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: io::Error,
    },
}

fn list(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(", ")
}

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
