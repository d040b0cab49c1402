//! What a session list is asked for and shows: [`SessionQuery`] and
//! [`SessionSummary`], the same whichever backend answers, and the seq
//! range events are read by.

use serde::{Deserialize, Serialize};
use seri_core::{AgentId, SessionContinuationLink, SessionId, Timestamp, TitleSource};

pub use seri_core::SeqRange;

/// An append that takes a session past a multiple of this many events
/// writes its folded snapshot anew, so reading the session's view
/// ([`Reader::info`](crate::Reader::info)) folds fewer than this many
/// events, however long its history.
pub const SNAPSHOT_EVERY_EVENTS: u64 = 64;

/// A read of events ([`Reader::each_body`](crate::Reader::each_body))
/// decodes this many as it reads them; the rest of a longer one are decoded
/// on a second thread while the first reads on, when the machine has a
/// second core. A shorter read never starts a thread, which would cost it
/// more than it saves.
pub const DECODE_BESIDE_FROM_ROWS: u64 = 1024;

/// The fewest characters of a short id [`crate::Reader::short_id`] shows:
/// eight digits of time, a dot, six of the id's random end.
pub const SHORT_ID_MIN_LEN: usize = 15;

/// Which sessions to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionQuery {
    /// Only sessions started in this working directory.
    pub cwd: Option<String>,
    /// At most this many, most recent first.
    pub limit: Option<u64>,
    /// Leave out child sessions (the sessions of delegated runs): a person
    /// never talked in one.
    pub without_children: bool,
    /// Only sessions updated before this time: the next page of a list
    /// whose last session was updated then.
    pub updated_before: Option<Timestamp>,
    /// With [`SessionQuery::updated_before`], the rest of the cursor: the
    /// id of the last session of the page before, so the sessions updated
    /// at that same time after it in the list's order (a smaller id) are
    /// listed too, and none twice. Without `updated_before` it is ignored.
    pub before_id: Option<SessionId>,
}

/// A session as lists show it: the cached title columns, the head (newest
/// seq and time) and the continuation links, without folding its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session.
    pub id: SessionId,
    /// Its owner.
    pub agent_id: AgentId,
    /// The working directory it was started in.
    pub cwd: String,
    /// What it is about.
    pub title: String,
    /// Its live status.
    pub description: String,
    /// Who set the title.
    pub title_source: Option<TitleSource>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When its newest event was appended.
    pub updated_at: Timestamp,
    /// Its newest seq (its number of events).
    pub last_seq: u64,
    /// The session it continues.
    pub continued_from: Option<SessionContinuationLink>,
    /// The newest session it continued into.
    pub continued_to: Option<SessionContinuationLink>,
    /// For a child session: the run that delegated to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<seri_core::RunId>,
    /// For a child session: the session of the run that delegated to it,
    /// so a list can nest the child under its parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<SessionId>,
    /// For a fork: the session it branches from, and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<seri_core::SessionForkLink>,
}
