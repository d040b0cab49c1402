//! `/rewind`: back to before one of the person's turns, for the
//! conversation, the files, or both.
//!
//! - [`Runtime::rewind_turns`](crate::Runtime::rewind_turns) lists the turns a rewind can reach: the
//!   person's messages in the working context, newest last, each with the
//!   files seri's tools changed from that turn on.
//! - [`Runtime::plan_rewind`](crate::Runtime::plan_rewind) decides, without changing anything, what a
//!   rewind to before a turn would do: which files go back to what, and
//!   which of them changed outside seri's tools since their checkpoint (by
//!   hash: a person, an editor, a `bash` command). It refuses a turn before
//!   the newest compaction ([`RewindError::AcrossCompaction`]): the
//!   compacted prefix is no longer in the working context to go back to.
//! - [`Runtime::apply_rewind`](crate::Runtime::apply_rewind) carries a plan out. It refuses to overwrite
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

use std::io;
use std::path::PathBuf;

use seri_core::{Seq, SessionId, Timestamp};
use seri_store::{FileState, StoreError};

use crate::error::RunError;

/// How many turns [`Runtime::rewind_turns`](crate::Runtime::rewind_turns) lists at most.
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

/// The turns [`Runtime::rewind_turns`](crate::Runtime::rewind_turns) lists.
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
