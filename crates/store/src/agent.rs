//! [`AgentStore`]: one agent's handle on the store. Everything an agent
//! reads or writes goes through it, and it reaches only that agent's sessions.

use std::path::PathBuf;

use seri_core::{
    AgentId, Attachment, ContinuationEdge, ContinuationId, Event, EventBody, EventId, RunId, Seq, SessionId,
    SessionInfo, SessionSeed, ToolCallId,
};

use crate::attachments;
use crate::checkpoints::{CheckpointFile, CheckpointHistory, CheckpointRecorded, FileState, NewCheckpoint};
use crate::error::{AttachmentError, Result, StoreError};
use crate::runs::RunRecord;
use crate::sessions::{SeqRange, SessionQuery, SessionSummary};
use crate::store::Store;
use crate::trajectories::retention::{LegacyTrajectory, PruneReport, RetentionPolicy};
use crate::trajectories::{Trajectory, TrajectoryRecord};

/// One agent's view of the store: [`AgentStore::read`] and
/// [`AgentStore::write`] run closures in one transaction each; most other
/// methods are one-step shorthands for them, each the
/// [`Reader`](crate::Reader) or [`WriteTx`](crate::WriteTx) method of the
/// same name in a transaction of its own.
#[derive(Debug, Clone)]
pub struct AgentStore<'s> {
    store: &'s Store,
    agent: AgentId,
}

impl<'s> AgentStore<'s> {
    pub(crate) fn new(store: &'s Store, agent: AgentId) -> Self {
        Self { store, agent }
    }

    /// The agent.
    pub fn agent_id(&self) -> &AgentId {
        &self.agent
    }

    /// The store.
    pub fn store(&self) -> &'s Store {
        self.store
    }

    /// A seed for a new, untitled session of this agent in `cwd`.
    pub fn new_seed(&self, cwd: impl Into<String>) -> SessionSeed {
        self.store.new_seed(&self.agent, cwd)
    }

    /// Stores a file for one of this agent's sessions under a fresh id and
    /// returns the [`Attachment`] a message carries; `attachment:<id>` then
    /// resolves to it in that session.
    pub fn store_attachment(
        &self,
        session: SessionId,
        name: impl Into<String>,
        media_type: Option<String>,
        bytes: &[u8],
    ) -> Result<Attachment> {
        self.read(|r| r.require_session(session))?;
        let root = self.store.attachments_dir().ok_or(StoreError::Attachment(AttachmentError::NoDir))?;
        let id = self.store.new_attachment_id();
        // The database holds it, for every server on it; the file is this
        // machine's cache of it.
        self.write(|tx| tx.record_attachment(session, &id, bytes))?;
        attachments::write(root, session, &id, bytes)?;
        Ok(Attachment { id, name: name.into(), media_type, bytes: bytes.len() as u64 })
    }

    /// The events of this agent's sessions that match `request`, best
    /// first (see [`Reader::search`](crate::Reader)). On SQLite the newest
    /// events' text may still wait outside FTS5 (`db/search.rs`); it is
    /// moved in first, in a write transaction of its own, so a search finds
    /// every event written before it.
    pub fn search(&self, request: &crate::search::SearchRequest) -> Result<Vec<crate::search::SearchHit>> {
        let store = self.store();
        // PostgreSQL's index is written whole with each event: nothing waits.
        if !store.database().is_postgres() && store.read_transaction(crate::db::search::any_pending)? {
            store.transaction(crate::db::connection::TxKind::Write, crate::db::search::flush_pending)?;
        }
        self.read(|r| r.search(request))
    }

    /// [`WriteTx::append`](crate::WriteTx::append) in a write transaction
    /// of its own; on PostgreSQL one round trip when this process appended
    /// to the session last (see [`AgentStore::write_again`]).
    pub fn append(&self, session: SessionId, bodies: impl IntoIterator<Item = EventBody>) -> Result<Vec<Event>> {
        if !self.store.database().is_postgres() {
            return self.write(|tx| tx.append(session, bodies));
        }
        let bodies: Vec<EventBody> = bodies.into_iter().collect();
        self.write_again(|tx| tx.append(session, bodies.iter().cloned()))
    }
}

/// Declares [`AgentStore`]'s shorthands: each runs one [`crate::Reader`]
/// (`read`) or [`crate::WriteTx`] (`write`) method, of the same name and
/// arguments, in a transaction of its own.
///
/// This is the one place a shorthand is defined. It is written over the
/// contract, not over a backend: a backend implements `Reader` and
/// `WriteTx`, and every shorthand works over it unchanged.
macro_rules! shorthands {
    ($($kind:ident fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)*) => {
        impl AgentStore<'_> {
            $(shorthands!(@one $kind $name($($arg: $ty),*) -> $ret);)*
        }
    };
    (@one read $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        #[doc = concat!(
            "[`Reader::", stringify!($name), "`](crate::Reader::", stringify!($name), ") in a read transaction of its own."
        )]
        pub fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
            self.read(|r| r.$name($($arg),*))
        }
    };
    (@one write $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        #[doc = concat!(
            "[`WriteTx::", stringify!($name), "`](crate::WriteTx::", stringify!($name), ") in a write transaction of its own."
        )]
        pub fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
            self.write(|tx| tx.$name($($arg),*))
        }
    };
}

shorthands! {
    // Sessions and events.
    write fn create_session(seed: &SessionSeed) -> SessionInfo;
    read fn seed(id: SessionId) -> SessionSeed;
    read fn info(id: SessionId) -> SessionInfo;
    read fn summary(id: SessionId) -> SessionSummary;
    read fn events(id: SessionId, range: SeqRange) -> Vec<Event>;
    read fn events_page(id: SessionId, range: SeqRange, limit: Option<u64>) -> Vec<Event>;
    read fn each_body(id: SessionId, range: SeqRange, visit: &mut (dyn FnMut(seri_core::Seq, EventBody) + Send)) -> ();
    read fn context_marks(id: SessionId, upto: seri_core::Seq, limit: u64) -> Vec<Event>;
    read fn event_count(id: SessionId) -> u64;
    read fn event(id: EventId) -> Event;
    read fn newest_user_message(id: SessionId) -> Option<Event>;
    read fn newest_assistant_message(id: SessionId) -> Option<Event>;
    read fn fired_rules(id: SessionId) -> std::collections::BTreeSet<String>;
    read fn fired_rules_since(id: SessionId, since: seri_core::Seq) -> std::collections::BTreeSet<String>;
    read fn tool_call_ids_used(id: SessionId, ids: &[seri_core::ToolCallId]) -> Vec<seri_core::ToolCallId>;
    read fn most_recent_session(cwd: Option<&str>) -> Option<SessionSummary>;
    read fn list_sessions(query: &SessionQuery) -> Vec<SessionSummary>;
    read fn resolve_session(text: &str) -> SessionId;
    read fn short_id(id: SessionId) -> String;
    read fn short_ids(ids: &[SessionId]) -> std::collections::HashMap<SessionId, String>;

    // Forks.
    write fn fork_session(parent: SessionId, at: Option<seri_core::Seq>, via: seri_core::ForkVia) -> SessionInfo;
    read fn fork_edge(id: SessionId) -> Option<seri_core::ForkEdge>;
    read fn forks_of(parent: SessionId) -> Vec<seri_core::ForkEdge>;

    // Continuation edges.
    read fn continuation_by_tool_call(predecessor: SessionId, tool_call_id: &ToolCallId) -> Option<ContinuationEdge>;
    read fn continuations_from(predecessor: SessionId) -> Vec<ContinuationEdge>;
    read fn continuations() -> Vec<ContinuationEdge>;
    read fn continuation(id: ContinuationId) -> Option<ContinuationEdge>;
    read fn continuation_into(successor: SessionId) -> Option<ContinuationEdge>;
    read fn successor_count(predecessor: SessionId) -> u64;

    // Runs.
    write fn start_run(run: &RunRecord) -> ();
    read fn runs(session: SessionId) -> Vec<RunRecord>;
    read fn child_runs(parent: RunId) -> Vec<RunRecord>;
    read fn run(id: RunId) -> Option<RunRecord>;

    // Attachments and settings.
    read fn resolve_attachment(session: SessionId, reference: &str) -> PathBuf;
    read fn setting(key: &str) -> Option<String>;
    write fn set_setting(key: &str, value: &str) -> ();

    // Checkpoints.
    write fn record_checkpoint(new: &NewCheckpoint<'_>) -> CheckpointRecorded;
    write fn finish_checkpoint(id: &str, after: &FileState) -> ();
    write fn touch_checkpoints(session: SessionId) -> ();
    write fn discard_checkpoints(session: SessionId, from_turn: Seq) -> u64;
    read fn checkpoints_since(session: SessionId, from_turn: Seq) -> Vec<CheckpointFile>;
    read fn checkpoint_history(session: SessionId) -> CheckpointHistory;
    read fn checkpoint_content(sha256: &str) -> Option<Vec<u8>>;

    // Trajectories and their retention.
    write fn append_trajectory_record(run: RunId, record: &TrajectoryRecord) -> u64;
    read fn trajectory(run: RunId) -> Option<Trajectory>;
    read fn trajectory_runs(session: SessionId) -> Vec<RunId>;
    write fn prune_trajectories(policy: &RetentionPolicy) -> PruneReport;
    read fn legacy_trajectory(session: SessionId) -> Option<LegacyTrajectory>;
}
