//! The store's errors. Each message names the file, directory or id it is
//! about, so a user can act on it without reading code.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use seri_core::event::DecodeEventError;
use seri_core::{AgentId, ContinuationId, EventId, Seq, SessionId, ToolCallId};

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The profile directory cannot be found, made or written.
    #[error(transparent)]
    Profile(#[from] ProfileError),

    /// A database cannot be opened, or is not one seri can use.
    #[error(transparent)]
    Open(#[from] OpenError),

    /// The database engine failed, or refused a write, while doing something.
    #[error(transparent)]
    Engine(#[from] EngineError),

    /// What was asked for does not exist, or cannot name one thing.
    #[error(transparent)]
    Lookup(#[from] LookupError),

    /// A write that contradicts what is stored, or that must wait its turn.
    #[error(transparent)]
    Write(#[from] WriteError),

    /// What is stored cannot be read as it should be.
    #[error(transparent)]
    Data(#[from] DataError),

    /// A copy of one store into another stopped.
    #[error(transparent)]
    Copy(#[from] CopyError),

    /// Importing legacy session files failed.
    #[error(transparent)]
    Import(#[from] ImportError),

    /// An attachment cannot be named, found or written.
    #[error(transparent)]
    Attachment(#[from] AttachmentError),
}

/// The profile directory cannot be found, made or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// Neither `SERI_HOME` nor a home directory is known.
    #[error("no profile directory: set SERI_HOME, or HOME for the default ~/.seri")]
    NoRoot,

    /// The profile directory does not exist.
    #[error("profile directory `{}` does not exist", path.display())]
    Missing {
        /// The directory.
        path: PathBuf,
    },

    /// The profile path exists but is a file.
    #[error("profile path `{}` is not a directory", path.display())]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },

    /// The profile directory cannot be written.
    #[error("profile directory `{}` is read-only: seri writes seri.db and attachments there", path.display())]
    ReadOnly {
        /// The directory.
        path: PathBuf,
        /// What the write probe said, when it was a failed write rather than the permission bits.
        #[source]
        source: Option<io::Error>,
    },

    /// The profile directory could not be created.
    #[error("cannot create profile directory `{}`: {source}", path.display())]
    Create {
        /// The directory.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: io::Error,
    },
}

impl ProfileError {
    /// What kind of failure this is (see [`StoreError::kind`]).
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            ProfileError::NoRoot
            | ProfileError::Missing { .. }
            | ProfileError::NotADirectory { .. }
            | ProfileError::ReadOnly { .. } => StoreErrorKind::Unusable,
            ProfileError::Create { .. } => StoreErrorKind::Failed,
        }
    }
}

/// A database cannot be opened, or is not one seri can use.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The file exists but is not an SQLite database at all.
    #[error("`{}` is not a seri database: it is not an SQLite file", path.display())]
    NotADatabase {
        /// The file.
        path: PathBuf,
    },

    /// The file is an SQLite database of some other application.
    #[error(
        "`{}` is not a seri database: it is an SQLite database of another application ({})",
        path.display(),
        describe_application_id(*application_id)
    )]
    ForeignDatabase {
        /// The file.
        path: PathBuf,
        /// Its `PRAGMA application_id` (0: none set, but it has tables seri did not create).
        application_id: i32,
    },

    /// The database was written by a newer seri; opening it could damage it.
    #[error(
        "`{}` has schema version {found}, newer than the {supported} this build of seri knows; \
         refusing to open it (a database is never downgraded): upgrade seri",
        path.display()
    )]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its `PRAGMA user_version`.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },

    /// The database file could not be opened.
    #[error("cannot open database `{}`: {source}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// What the database said.
        #[source]
        source: DatabaseError,
    },

    /// `store.url` (or `SERI_STORE_URL`) names no database seri can use.
    #[error("store URL `{url}` is not usable: {problem}")]
    BadStoreUrl {
        /// The URL, without its password.
        url: String,
        /// What is wrong with it.
        problem: String,
    },

    /// A PostgreSQL schema holds tables seri did not create.
    #[error(
        "schema `{schema}` of `{}` holds tables seri did not create; refusing to use it \
         (point seri at an empty database or schema)",
        database.display()
    )]
    ForeignSchema {
        /// The database's address, without its password.
        database: PathBuf,
        /// The schema (PostgreSQL's `current_schema()`).
        schema: String,
    },

    /// A schema file (`sqlite-schema.sql`, `postgres-schema.sql`) is
    /// malformed: a build defect, caught by the crate's tests.
    #[error("{file} is malformed: {problem}")]
    SchemaFile {
        /// Which file.
        file: &'static str,
        /// What is wrong.
        problem: String,
    },
}

impl OpenError {
    /// What kind of failure this is (see [`StoreError::kind`]).
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            OpenError::NotADatabase { .. }
            | OpenError::ForeignDatabase { .. }
            | OpenError::BadStoreUrl { .. }
            | OpenError::ForeignSchema { .. } => StoreErrorKind::Unusable,
            OpenError::NewerSchema { .. } => StoreErrorKind::NewerSchema,
            OpenError::Open { .. } => StoreErrorKind::Failed,
            OpenError::SchemaFile { .. } => StoreErrorKind::Corrupt,
        }
    }
}

/// The database engine failed, or refused a write, while doing something.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The database (or its directory) refuses writes.
    #[error("database `{}` is read-only: {context} failed", path.display())]
    ReadOnly {
        /// The file.
        path: PathBuf,
        /// What was being done.
        context: &'static str,
    },

    /// The disk (or the configured size limit) is full. The transaction was rolled back.
    #[error("the disk holding `{}` is full: {context} failed and was rolled back; nothing was written", path.display())]
    DiskFull {
        /// The file.
        path: PathBuf,
        /// What was being done.
        context: &'static str,
    },

    /// Another writer held the database for longer than the busy timeout.
    #[error("database `{}` stayed locked by another writer past the busy timeout: {context} gave up", path.display())]
    Locked {
        /// The file.
        path: PathBuf,
        /// What was being done.
        context: &'static str,
        /// How long the store itself retried; zero when SQLite's busy
        /// handler did all the waiting.
        waited: Duration,
    },

    /// Any other failure of the database.
    #[error("SQLite failed while {context} in `{}`: {source}", path.display())]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// What was being done.
        context: &'static str,
        /// What the database said.
        #[source]
        source: DatabaseError,
    },

    /// The PostgreSQL server could not be reached, or the connection to it
    /// was lost (it restarted, the network went): nothing was changed
    /// unless the loss came during a commit. Worth trying again.
    #[error("PostgreSQL at `{}` could not be reached while {context}: {source}", database.display())]
    Unreachable {
        /// The database's address, without its password.
        database: PathBuf,
        /// What was being done.
        context: &'static str,
        /// What the driver said.
        #[source]
        source: DatabaseError,
    },

    /// Any other failure of a PostgreSQL database.
    #[error("PostgreSQL failed while {context} at `{}`: {source}", database.display())]
    Postgres {
        /// The database's address, without its password.
        database: PathBuf,
        /// What was being done.
        context: &'static str,
        /// What the server (or the driver) said.
        #[source]
        source: DatabaseError,
    },
}

impl EngineError {
    /// What kind of failure this is (see [`StoreError::kind`]).
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            EngineError::ReadOnly { .. } => StoreErrorKind::Unusable,
            EngineError::DiskFull { .. } => StoreErrorKind::Full,
            EngineError::Locked { .. } => StoreErrorKind::Busy,
            EngineError::Sqlite { .. } | EngineError::Postgres { .. } => StoreErrorKind::Failed,
            EngineError::Unreachable { .. } => StoreErrorKind::Unavailable,
        }
    }
}

/// What was asked for does not exist, or cannot name one thing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// No job with this id.
    #[error("no job `{id}`")]
    UnknownJob {
        /// The id asked for.
        id: String,
    },

    /// No session with this id belongs to this agent. Another agent's session
    /// gets exactly this error, as if it did not exist.
    #[error("no session `{session_id}`")]
    UnknownSession {
        /// The id asked for.
        session_id: SessionId,
    },

    /// No session of this agent has an id starting with the prefix.
    #[error("no session id starts with `{prefix}`")]
    UnknownSessionPrefix {
        /// The prefix as given.
        prefix: String,
    },

    /// Several sessions of this agent have ids starting with the prefix.
    #[error("session id prefix `{prefix}` is ambiguous: it matches {}", Candidates(candidates, *total))]
    AmbiguousSessionPrefix {
        /// The prefix as given.
        prefix: String,
        /// The matching ids, oldest first (at most [`MAX_LISTED_CANDIDATES`]).
        candidates: Vec<SessionId>,
        /// How many sessions match in all.
        total: usize,
    },

    /// The text cannot be a session id or a prefix of one.
    #[error("`{text}` is not a session id or id prefix: expected hex digits, optionally with hyphens")]
    InvalidSessionPrefix {
        /// The text as given.
        text: String,
    },

    /// No event with this id belongs to this agent.
    #[error("no event `{event_id}`")]
    UnknownEvent {
        /// The id asked for.
        event_id: EventId,
    },

    /// A continuation's initiating event is not in its predecessor.
    #[error("event `{event_id}` is not an event of session `{session_id}`")]
    EventNotInSession {
        /// The event.
        event_id: EventId,
        /// The session it was expected in.
        session_id: SessionId,
    },

    /// The run has no trajectory (it was not recorded, or it was pruned).
    #[error("run `{run_id}` has no trajectory: it was not recorded, or retention pruned it")]
    UnknownTrajectory {
        /// The run.
        run_id: seri_core::RunId,
    },

    /// No checkpoint with this id belongs to this agent.
    #[error("no checkpoint `{id}`")]
    UnknownCheckpoint {
        /// The id asked for.
        id: String,
    },
}

impl LookupError {
    /// What kind of failure this is (see [`StoreError::kind`]).
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            LookupError::UnknownJob { .. }
            | LookupError::UnknownSession { .. }
            | LookupError::UnknownSessionPrefix { .. }
            | LookupError::UnknownEvent { .. }
            | LookupError::EventNotInSession { .. }
            | LookupError::UnknownTrajectory { .. }
            | LookupError::UnknownCheckpoint { .. } => StoreErrorKind::NotFound,
            LookupError::AmbiguousSessionPrefix { .. } | LookupError::InvalidSessionPrefix { .. } => {
                StoreErrorKind::Invalid
            }
        }
    }
}

/// A write that contradicts what is stored, or that must wait its turn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A message posted directly (a CLI, a REPL) must let messages that
    /// servers accepted for its session first, and those already posted, be
    /// answered before it: the session is taken only once they are.
    #[error("{count} message(s) a server accepted for session {session_id} are to be answered first")]
    QueuedMessagesFirst {
        /// The session.
        session_id: seri_core::SessionId,
        /// How many.
        count: u64,
    },

    /// A fork asked for a point after the parent's newest event.
    #[error(
        "session `{session_id}` has {last_seq} events: it cannot be forked at seq {fork_seq} (fork at 0 to {last_seq})"
    )]
    ForkPointPastEnd {
        /// The parent.
        session_id: SessionId,
        /// The seq asked for.
        fork_seq: u64,
        /// The parent's newest seq.
        last_seq: u64,
    },

    /// A session with this id already exists.
    #[error("session `{session_id}` already exists")]
    SessionExists {
        /// The id.
        session_id: SessionId,
    },

    /// A seed names a different agent than the handle writing it.
    #[error("session `{session_id}` is seeded for agent `{seed_agent}` but is being created by agent `{writer}`")]
    SeedOfAnotherAgent {
        /// The session.
        session_id: SessionId,
        /// The agent the seed names.
        seed_agent: AgentId,
        /// The agent of the handle.
        writer: AgentId,
    },

    /// The predecessor already has an edge for this tool call (the replay case).
    #[error("session `{predecessor}` already continued for tool call `{tool_call_id}`")]
    ContinuationExists {
        /// The predecessor.
        predecessor: SessionId,
        /// The `continue_session` call.
        tool_call_id: ToolCallId,
    },

    /// The successor already continues some session.
    #[error("session `{successor}` already continues another session")]
    SuccessorTaken {
        /// The successor.
        successor: SessionId,
    },

    /// A writer that should hold a session's lease does not (any more):
    /// another process took it over. Nothing was written.
    #[error(
        "session `{session_id}` is no longer held by this runtime: another process took it over, so nothing more was written"
    )]
    LeaseNotHeld {
        /// The session.
        session_id: SessionId,
    },

    /// A run was finished twice, or never started.
    #[error("run `{run_id}` is not running: it was never recorded or has already finished")]
    RunNotRunning {
        /// The run.
        run_id: seri_core::RunId,
    },
}

impl WriteError {
    /// What kind of failure this is (see [`StoreError::kind`]).
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            WriteError::QueuedMessagesFirst { .. } => StoreErrorKind::Busy,
            WriteError::ForkPointPastEnd { .. } | WriteError::SeedOfAnotherAgent { .. } => StoreErrorKind::Invalid,
            WriteError::SessionExists { .. }
            | WriteError::ContinuationExists { .. }
            | WriteError::SuccessorTaken { .. }
            | WriteError::LeaseNotHeld { .. }
            | WriteError::RunNotRunning { .. } => StoreErrorKind::Conflict,
        }
    }
}

/// What is stored cannot be read as it should be.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// An edge disagrees with itself.
    #[error("continuation `{continuation_id}` is inconsistent: {problem}")]
    InconsistentContinuation {
        /// The edge.
        continuation_id: ContinuationId,
        /// What disagrees.
        problem: &'static str,
    },

    /// A stored event cannot be decoded.
    #[error("event {seq} of session `{session_id}` is unreadable: {source}")]
    CorruptEvent {
        /// The session.
        session_id: SessionId,
        /// The event's seq.
        seq: Seq,
        /// What the decoder said.
        #[source]
        source: DecodeEventError,
    },

    /// A stored event was written in a payload format this build does not know.
    #[error(
        "event {seq} of session `{session_id}` has payload format {found}, newer than the {supported} \
         this build of seri reads: upgrade seri"
    )]
    NewerEventFormat {
        /// The session.
        session_id: SessionId,
        /// The event's seq.
        seq: Seq,
        /// The stored format version.
        found: i64,
        /// The newest format this build reads.
        supported: u32,
    },

    /// A stored row (not an event payload) cannot be decoded.
    #[error("row `{id}` of table `{table}` is unreadable: {problem}")]
    CorruptRow {
        /// The table.
        table: &'static str,
        /// The row's id (or what identifies it).
        id: String,
        /// What is wrong with it.
        problem: String,
    },
}

impl DataError {
    /// What kind of failure this is (see [`StoreError::kind`]).
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            DataError::InconsistentContinuation { .. }
            | DataError::CorruptEvent { .. }
            | DataError::CorruptRow { .. } => StoreErrorKind::Corrupt,
            DataError::NewerEventFormat { .. } => StoreErrorKind::NewerSchema,
        }
    }
}

/// A copy of one store into another stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CopyError {
    /// A store was asked to copy itself into itself.
    #[error("`{}` is both the source and the target of the copy", path.display())]
    OntoItself {
        /// The database.
        path: PathBuf,
    },

    /// Both stores were written since the last copy: the target holds
    /// another row where the source's should be. Nothing was copied.
    #[error(
        "the copy stopped, and nothing was copied: the target's {table} differs at {row} \
         (both stores were written to since the last copy)"
    )]
    Diverged {
        /// The table.
        table: &'static str,
        /// Which row.
        row: String,
    },

    /// What a copy's target derives from a session's events (its newest
    /// event, snapshot or cached title) is not what the fold of its events
    /// there gives. Nothing was copied.
    #[error(
        "the copy stopped, and nothing was copied: in the target, session {session_id}'s {column} \
         holds {cached} where its events give {folded}"
    )]
    CacheDiffers {
        /// The session.
        session_id: SessionId,
        /// The table (and column) that differs.
        column: &'static str,
        /// What the target holds.
        cached: String,
        /// What the fold of the target's events gives.
        folded: String,
    },
}

impl CopyError {
    /// What kind of failure this is (see [`StoreError::kind`]).
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            CopyError::OntoItself { .. } => StoreErrorKind::Unusable,
            CopyError::Diverged { .. } | CopyError::CacheDiffers { .. } => StoreErrorKind::Corrupt,
        }
    }
}

/// Importing legacy session files failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The folder of legacy session files exists but cannot be listed.
    #[error("cannot read the legacy sessions folder `{}`: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: io::Error,
    },

    /// The store failed while importing one legacy file. Its transaction was
    /// rolled back; the files before it stay imported, and importing again
    /// skips them and goes on from this one.
    #[error(
        "importing `{}` failed and nothing of it was written (the files before it are imported; \
         import again to go on): {source}",
        path.display()
    )]
    File {
        /// The legacy file.
        path: PathBuf,
        /// What the store said.
        #[source]
        source: Box<StoreError>,
    },
}

impl ImportError {
    /// What kind of failure this is (see [`StoreError::kind`]).
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            ImportError::Folder { .. } | ImportError::File { .. } => StoreErrorKind::Failed,
        }
    }
}

/// An attachment cannot be named, found or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttachmentError {
    /// An attachment id that cannot name a file.
    #[error("`{id}` is not an attachment id: expected letters, digits, `-`, `_` or `.`, not starting with `.`")]
    InvalidId {
        /// The id as given.
        id: String,
    },

    /// A reference that is not `attachment:<id>`.
    #[error("`{reference}` is not an attachment reference: expected `attachment:<id>`")]
    InvalidReference {
        /// The reference as given.
        reference: String,
    },

    /// The session has no such attachment.
    #[error("session `{session_id}` has no attachment `{attachment_id}` (looked for `{}`)", path.display())]
    Unknown {
        /// The session.
        session_id: SessionId,
        /// The attachment.
        attachment_id: String,
        /// Where it would be.
        path: PathBuf,
    },

    /// A file operation on an attachment failed.
    #[error("attachment file `{}`: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: io::Error,
    },

    /// The store was opened without an attachments directory (in memory).
    #[error("this store has no attachments directory: open it from a profile or set StoreOptions::attachments_dir")]
    NoDir,
}

impl AttachmentError {
    /// What kind of failure this is (see [`StoreError::kind`]).
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            AttachmentError::InvalidId { .. } | AttachmentError::InvalidReference { .. } => StoreErrorKind::Invalid,
            AttachmentError::Unknown { .. } => StoreErrorKind::NotFound,
            AttachmentError::Io { .. } | AttachmentError::NoDir => StoreErrorKind::Failed,
        }
    }
}

/// Most candidates an ambiguous-prefix error lists.
pub const MAX_LISTED_CANDIDATES: usize = 20;

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

struct Candidates<'a>(&'a [SessionId], usize);

impl fmt::Display for Candidates<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Candidates(ids, total) = self;
        write!(f, "{total} sessions: ")?;
        for (i, id) in ids.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{id}")?;
        }
        if *total > ids.len() {
            write!(f, ", and {} more", total - ids.len())?;
        }
        Ok(())
    }
}

/// What the database engine said, as text and an error chain: no type of
/// the engine (SQLite today, PostgreSQL next) appears in the store's API.
#[derive(Debug)]
pub struct DatabaseError(Box<dyn std::error::Error + Send + Sync>);

impl fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for DatabaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl DatabaseError {
    /// Wraps what a backend's driver said.
    pub(crate) fn new(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Box::new(source))
    }
}

/// What a caller does about a [`StoreError`]: the few kinds that call for
/// different actions, whichever backend failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreErrorKind {
    /// The thing named does not exist, or is another agent's.
    NotFound,
    /// What the caller gave cannot be used (an ambiguous prefix, a bad id).
    Invalid,
    /// Another writer held the database too long: try again later.
    Busy,
    /// The disk (or the size limit) is full; nothing was written.
    Full,
    /// The write contradicts what is stored (it exists already, it finished).
    Conflict,
    /// What is stored cannot be read as it should be.
    Corrupt,
    /// A newer seri wrote it: upgrade.
    NewerSchema,
    /// The profile or its database cannot be used as one (missing, read-only,
    /// not a seri database).
    Unusable,
    /// The database server could not be reached or the connection was
    /// lost: try again once it is back.
    Unavailable,
    /// Anything else: the file system or the database engine failed.
    Failed,
}

impl StoreError {
    /// What kind of failure this is, for a caller deciding what to do.
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            StoreError::Profile(e) => e.kind(),
            StoreError::Open(e) => e.kind(),
            StoreError::Engine(e) => e.kind(),
            StoreError::Lookup(e) => e.kind(),
            StoreError::Write(e) => e.kind(),
            StoreError::Data(e) => e.kind(),
            StoreError::Copy(e) => e.kind(),
            StoreError::Import(e) => e.kind(),
            StoreError::Attachment(e) => e.kind(),
        }
    }
}

fn describe_application_id(id: i32) -> String {
    if id == 0 { "it has tables but no application id".to_owned() } else { format!("application id {id:#010x}") }
}

#[cfg(test)]
mod tests;
