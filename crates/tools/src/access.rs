//! The narrow read interface tools use, implemented by the run loop over the
//! store (and by [`crate::InMemorySessions`] for tests).

use std::path::Path;

use async_trait::async_trait;
use seri_core::{AgentId, Event, Seq, SessionId, SessionInfo, Timestamp};

/// Reads tools need. Implementations read; they never write.
///
/// Agent scoping is enforced by the tools themselves: an implementation may
/// return another agent's session from [`SessionAccess::session`], and the
/// tool reports it exactly like a missing one. Prefix lookups are scoped by
/// the implementation, because an unscoped lookup would let another agent's
/// ids make a prefix ambiguous.
#[async_trait]
pub trait SessionAccess: Send + Sync {
    /// A session folded to its current state, with `continuedFrom` and
    /// `continuedTo` attached (`SessionInfo::with_links`); `None` when there
    /// is none with this id.
    async fn session(&self, id: SessionId) -> Result<Option<SessionInfo>, AccessError>;

    /// Ids of `agent`'s sessions whose id, as lowercase hyphenated text,
    /// starts with `prefix` (already lowercase), at most `limit` of them.
    async fn session_ids_with_prefix(
        &self,
        agent: &AgentId,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<SessionId>, AccessError>;

    /// The events of a session with `from <= seq <= to`, in seq order, at
    /// most `limit` of them (the store reads only that range).
    async fn events(&self, id: SessionId, from: Seq, to: Seq, limit: usize) -> Result<Vec<Event>, AccessError>;

    /// The newest message of a session written by a person or a trigger
    /// (`Message::is_from_user_or_trigger`): the one a successor would answer.
    async fn newest_user_message(&self, id: SessionId) -> Result<Option<Event>, AccessError>;

    /// The profile's `memory/` folder, what `~/memory/…` resolves to. It may
    /// not exist.
    fn memory_dir(&self) -> &Path;

    /// An attachment of `session` (what `attachment:<id>` in one of its
    /// messages names): its size and at most its first `head` bytes; `None`
    /// when the session has no attachment by that id. None by default.
    async fn attachment(
        &self,
        session: SessionId,
        id: &str,
        head: usize,
    ) -> Result<Option<AttachmentHead>, AccessError> {
        let _ = (session, id, head);
        Ok(None)
    }

    /// Full-text search over this agent's sessions for `query`, written as
    /// a person writes one (`"a phrase"`, `prefix*`, `AND`, `OR`, `NOT`),
    /// at most `limit` hits, those of `cwd`'s sessions first:
    /// `Ok(Err(why))` when the query's syntax is refused. No search (an
    /// empty answer) by default.
    async fn search(
        &self,
        query: &str,
        cwd: &str,
        limit: usize,
    ) -> Result<Result<Vec<FoundEvent>, String>, AccessError> {
        let _ = (query, cwd, limit);
        Ok(Ok(Vec::new()))
    }
}

/// One event a search found ([`SessionAccess::search`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FoundEvent {
    /// The session whose history holds it.
    pub session_id: SessionId,
    /// Its seq there.
    pub seq: Seq,
    /// What kind of content matched (`user`, `assistant`, `tool_call`, …).
    pub kind: String,
    /// The text around the match, matched words between `«` and `»`.
    pub snippet: String,
    /// When it was written.
    pub at: Timestamp,
    /// The forks that share it.
    pub shared_with: Vec<SessionId>,
    /// The session that carries its session's work on.
    pub continued_in: Option<SessionId>,
    /// The session's title.
    pub title: String,
    /// The folder the session was started in.
    pub cwd: String,
}

/// The start of an attachment's bytes, and how many there are in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentHead {
    /// Its size in bytes.
    pub len: u64,
    /// Its first bytes.
    pub head: Vec<u8>,
}

/// The store failed to answer a read.
#[derive(Debug, thiserror::Error)]
#[error("the session store failed: {source}")]
pub struct AccessError {
    /// What failed underneath.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl AccessError {
    /// Wraps any error of the implementation.
    pub fn new(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self { source: source.into() }
    }
}
