//! What the store tells listeners: every transaction that creates a
//! session, appends to one or continues one announces it, delivered once it
//! commits (never when it rolls back), and
//! [`Store::subscribe_changes`](crate::Store::subscribe_changes) hears
//! them. On PostgreSQL it is a notification (`NOTIFY`), heard whichever
//! server (on whichever machine) wrote; SQLite has no channel between
//! processes, and there a listener hears its own process's commits.

use serde::{Deserialize, Serialize};
use seri_core::{AgentId, SessionId};

/// What happened to a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// It was created.
    Created,
    /// Events were appended (or its title changed).
    Updated,
    /// It continued into a successor.
    Continued,
}

/// One committed change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreChange {
    /// Whose session.
    pub agent: AgentId,
    /// The session.
    pub session: SessionId,
    /// What happened.
    pub change: ChangeKind,
    /// For [`ChangeKind::Continued`]: the successor it continued into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<SessionId>,
}
