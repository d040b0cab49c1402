//! Full-text search over every session of an agent: what a search asks
//! ([`SearchRequest`], with a parsed [`Query`]) and what it finds
//! ([`SearchHit`]), the same on both backends.
//!
//! Everything here is pure: [`query`] parses a person's query into a tree
//! and renders it for each engine, [`document`] says what of an event is
//! indexed, [`snippet`] cuts a hit's snippet. The index itself (SQLite's
//! FTS5 table, PostgreSQL's `tsvector` with a GIN index) is written by the
//! append, in the events' own transaction, and read by
//! [`AgentStore::search`](crate::AgentStore::search), both in `db/search.rs`.

pub mod document;
pub mod query;
pub mod snippet;

use serde::{Deserialize, Serialize};
use seri_core::{EventId, Seq, SessionId, Timestamp};

pub use document::SearchKind;
pub use query::{Query, QueryError, Term};

/// The most hits one search returns.
pub const MAX_SEARCH_LIMIT: u64 = 200;

/// The hits a search returns unless told otherwise.
pub const DEFAULT_SEARCH_LIMIT: u64 = 20;

/// Which sessions a search looks in, by the folder they were started in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SearchScope {
    /// Every session of the agent, best hits first.
    #[default]
    All,
    /// Every session, but those started in this folder first.
    FolderFirst(String),
    /// Only the sessions started in this folder.
    Folder(String),
}

/// One search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// What to find.
    pub query: Query,
    /// At most this many hits (capped at [`MAX_SEARCH_LIMIT`]).
    pub limit: u64,
    /// Which sessions.
    pub scope: SearchScope,
    /// Only events written at or after this time.
    pub since: Option<Timestamp>,
}

impl SearchRequest {
    /// A search of every session for `query`, with the default limit.
    pub fn new(query: Query) -> Self {
        Self { query, limit: DEFAULT_SEARCH_LIMIT, scope: SearchScope::All, since: None }
    }
}

/// One event that matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The session whose history holds the event (for history forks
    /// share, the session it was written in).
    pub session_id: SessionId,
    /// The event's seq in that session (and in every fork sharing it).
    pub seq: Seq,
    /// The event.
    pub event_id: EventId,
    /// What kind of content matched.
    pub kind: SearchKind,
    /// The text around the match, one line, matched words between `«` and `»`.
    pub snippet: String,
    /// When the event was written.
    pub at: Timestamp,
    /// How well it matched, higher is better: comparable within one
    /// search, not across searches or backends.
    pub score: f64,
    /// The forks that share this event (their history holds it by
    /// reference), nearest first; empty when none does.
    pub shared_with: Vec<SessionId>,
    /// The session that carries this one's work on (its continuation's
    /// successor), when it was continued.
    pub continued_in: Option<SessionId>,
    /// The session's title as it is now.
    pub title: String,
    /// The folder the session was started in.
    pub cwd: String,
}
