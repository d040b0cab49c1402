//! [`AgentStore`]: one agent's handle on the store. Everything an agent
//! reads or writes goes through it, and it reaches only that agent's sessions.

use std::path::{Path, PathBuf};

use seri_core::{
    AgentId, Attachment, ContinuationEdge, Event, EventBody, EventId, SessionId, SessionInfo, SessionSeed, ToolCallId,
};

use crate::attachments::{self, LinkOutcome};
use crate::error::{Result, StoreError};
use crate::sessions::{SeqRange, SessionQuery, SessionSummary};
use crate::store::Store;

/// One agent's view of the store: [`AgentStore::read`] and
/// [`AgentStore::write`] run closures in one transaction each; the other
/// methods are one-step shorthands for them.
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

    /// Creates a session; see [`WriteTx::create_session`](crate::WriteTx::create_session).
    pub fn create_session(&self, seed: &SessionSeed) -> Result<SessionInfo> {
        self.write(|tx| tx.create_session(seed))
    }

    /// Appends events in one transaction; see [`WriteTx::append`](crate::WriteTx::append).
    pub fn append(&self, session: SessionId, bodies: impl IntoIterator<Item = EventBody>) -> Result<Vec<Event>> {
        self.write(|tx| tx.append(session, bodies))
    }

    /// See [`Reader::seed`](crate::Reader::seed).
    pub fn seed(&self, id: SessionId) -> Result<SessionSeed> {
        self.read(|r| r.seed(id))
    }

    /// See [`Reader::info`](crate::Reader::info).
    pub fn info(&self, id: SessionId) -> Result<SessionInfo> {
        self.read(|r| r.info(id))
    }

    /// See [`Reader::summary`](crate::Reader::summary).
    pub fn summary(&self, id: SessionId) -> Result<SessionSummary> {
        self.read(|r| r.summary(id))
    }

    /// See [`Reader::events`](crate::Reader::events).
    pub fn events(&self, id: SessionId, range: SeqRange) -> Result<Vec<Event>> {
        self.read(|r| r.events(id, range))
    }

    /// See [`Reader::events_page`](crate::Reader::events_page).
    pub fn events_page(&self, id: SessionId, range: SeqRange, limit: Option<u64>) -> Result<Vec<Event>> {
        self.read(|r| r.events_page(id, range, limit))
    }

    /// See [`Reader::event_count`](crate::Reader::event_count).
    pub fn event_count(&self, id: SessionId) -> Result<u64> {
        self.read(|r| r.event_count(id))
    }

    /// See [`Reader::event`](crate::Reader::event).
    pub fn event(&self, id: EventId) -> Result<Event> {
        self.read(|r| r.event(id))
    }

    /// See [`Reader::newest_user_message`](crate::Reader::newest_user_message).
    pub fn newest_user_message(&self, id: SessionId) -> Result<Option<Event>> {
        self.read(|r| r.newest_user_message(id))
    }

    /// See [`Reader::newest_assistant_message`](crate::Reader::newest_assistant_message).
    pub fn newest_assistant_message(&self, id: SessionId) -> Result<Option<Event>> {
        self.read(|r| r.newest_assistant_message(id))
    }

    /// See [`Reader::most_recent_session`](crate::Reader::most_recent_session).
    pub fn most_recent_session(&self, cwd: Option<&str>) -> Result<Option<SessionSummary>> {
        self.read(|r| r.most_recent_session(cwd))
    }

    /// See [`Reader::list_sessions`](crate::Reader::list_sessions).
    pub fn list_sessions(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>> {
        self.read(|r| r.list_sessions(query))
    }

    /// See [`Reader::resolve_session`](crate::Reader::resolve_session).
    pub fn resolve_session(&self, text: &str) -> Result<SessionId> {
        self.read(|r| r.resolve_session(text))
    }

    /// See [`Reader::short_id`](crate::Reader::short_id).
    pub fn short_id(&self, id: SessionId) -> Result<String> {
        self.read(|r| r.short_id(id))
    }

    /// See [`Reader::continuation_by_tool_call`](crate::Reader::continuation_by_tool_call).
    pub fn continuation_by_tool_call(
        &self,
        predecessor: SessionId,
        tool_call_id: &ToolCallId,
    ) -> Result<Option<ContinuationEdge>> {
        self.read(|r| r.continuation_by_tool_call(predecessor, tool_call_id))
    }

    /// See [`WriteTx::start_run`](crate::WriteTx::start_run).
    pub fn start_run(&self, run: &crate::RunRecord) -> Result<()> {
        self.write(|tx| tx.start_run(run))
    }

    /// See [`WriteTx::finish_run`](crate::WriteTx::finish_run).
    pub fn finish_run(
        &self,
        run: seri_core::RunId,
        status: seri_core::RunStatus,
        result: &serde_json::Value,
    ) -> Result<()> {
        self.write(|tx| tx.finish_run(run, status, result))
    }

    /// See [`Reader::runs`](crate::Reader::runs).
    pub fn runs(&self, session: SessionId) -> Result<Vec<crate::RunRecord>> {
        self.read(|r| r.runs(session))
    }

    /// See [`Reader::child_runs`](crate::Reader::child_runs).
    pub fn child_runs(&self, parent: seri_core::RunId) -> Result<Vec<crate::RunRecord>> {
        self.read(|r| r.child_runs(parent))
    }

    /// See [`Reader::run`](crate::Reader::run).
    pub fn run(&self, id: seri_core::RunId) -> Result<Option<crate::RunRecord>> {
        self.read(|r| r.run(id))
    }

    /// See [`Reader::continuations_from`](crate::Reader::continuations_from).
    pub fn continuations_from(&self, predecessor: SessionId) -> Result<Vec<ContinuationEdge>> {
        self.read(|r| r.continuations_from(predecessor))
    }

    /// See [`Reader::continuation`](crate::Reader::continuation).
    pub fn continuation(&self, id: seri_core::ContinuationId) -> Result<Option<ContinuationEdge>> {
        self.read(|r| r.continuation(id))
    }

    /// See [`Reader::continuation_into`](crate::Reader::continuation_into).
    pub fn continuation_into(&self, successor: SessionId) -> Result<Option<ContinuationEdge>> {
        self.read(|r| r.continuation_into(successor))
    }

    /// See [`Reader::successor_count`](crate::Reader::successor_count).
    pub fn successor_count(&self, predecessor: SessionId) -> Result<u64> {
        self.read(|r| r.successor_count(predecessor))
    }

    /// See [`Reader::resolve_attachment`](crate::Reader::resolve_attachment).
    pub fn resolve_attachment(&self, session: SessionId, reference: &str) -> Result<PathBuf> {
        self.read(|r| r.resolve_attachment(session, reference))
    }

    /// See [`Reader::setting`](crate::Reader::setting).
    pub fn setting(&self, key: &str) -> Result<Option<String>> {
        self.read(|r| r.setting(key))
    }

    /// See [`WriteTx::set_setting`](crate::WriteTx::set_setting).
    pub fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        self.write(|tx| tx.set_setting(key, value))
    }

    /// See [`WriteTx::link_attachment`](crate::WriteTx::link_attachment).
    pub fn link_attachment(&self, from: SessionId, to: SessionId, attachment_id: &str) -> Result<LinkOutcome> {
        self.write(|tx| tx.link_attachment(from, to, attachment_id))
    }

    /// Imports the older release's session files in `dir` (usually
    /// [`crate::Profile::legacy_sessions_dir`]): every `*.jsonl` file, by
    /// name, each into one new session of this agent in one transaction.
    /// The files are only ever read. The format, and what becomes of each
    /// line, is described in [`crate::legacy`].
    ///
    /// Importing is idempotent: a file whose bytes were imported before (by
    /// path and SHA-256) is skipped, and one whose bytes changed since is
    /// imported again as a new session. A session gets the header's `cwd`,
    /// else `cwd_fallback`. A malformed line is reported and skipped, a file
    /// with no importable line or one that cannot be read is reported, and
    /// a folder that does not exist is an empty report.
    ///
    /// Errors: [`StoreError::LegacyDir`] when the folder exists but cannot
    /// be listed; [`StoreError::LegacyImport`] when the store fails on a
    /// file, which is then not imported at all while the files before it are.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), seri_store::StoreError> {
    /// let profile = seri_store::Profile::from_env()?;
    /// let store = profile.open_store()?;
    /// let agent = store.agent(&seri_core::AgentId::local());
    /// let report = agent.import_legacy_sessions(&profile.legacy_sessions_dir(), "/home/me")?;
    /// if !report.is_quiet() {
    ///     tracing::info!("{report}");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn import_legacy_sessions(&self, dir: &Path, cwd_fallback: &str) -> Result<crate::ImportReport> {
        crate::legacy::import(self, dir, cwd_fallback)
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
        let root = self.store.attachments_dir().ok_or(StoreError::NoAttachmentsDir)?;
        let id = self.store.new_attachment_id();
        attachments::write(root, session, &id, bytes)?;
        Ok(Attachment { id, name: name.into(), media_type, bytes: bytes.len() as u64 })
    }
}
