//! Pins (`session_pins`): the sessions a person asked to keep whatever
//! retention says. A pin is a row, not an event (see the schema's
//! migration 20): it is the person's choice about keeping the session,
//! not part of its conversation.

use seri_core::{SessionId, Timestamp};

use crate::db::read::Reader;
use crate::db::rows::{corrupt, query_all, query_first};
use crate::db::sql::{execute, params};
use crate::db::write::WriteTx;
use crate::error::Result;

impl Reader<'_> {
    /// When the session was pinned; `None` when it is not.
    pub fn pinned_at(&self, session: SessionId) -> Result<Option<Timestamp>> {
        self.require_session(session)?;
        let sql = "SELECT pinned_at FROM session_pins WHERE session_id = ?1 AND agent_id = ?2";
        let params = params![session.to_string(), self.agent_id().as_str()];
        query_first(self.db(), "reading a pin", sql, params, |r| Ok(Timestamp(r.get(0)?)))
    }

    /// This agent's pinned sessions, by id.
    pub fn pinned_sessions(&self) -> Result<Vec<SessionId>> {
        let sql = "SELECT session_id FROM session_pins WHERE agent_id = ?1 ORDER BY session_id";
        query_all(self.db(), "listing pins", sql, params![self.agent_id().as_str()], |r| {
            let text: String = r.get(0)?;
            text.parse().map_err(|_| corrupt("session_pins", &text, "session_id is not an id"))
        })
    }
}

impl WriteTx<'_> {
    /// Pins the session: pruning never takes it (nor its lineage). Whether
    /// it was not pinned before.
    pub fn pin_session(&mut self, session: SessionId) -> Result<bool> {
        self.read().require_session(session)?;
        let agent = self.read().agent_id().as_str().to_owned();
        let sql = "INSERT INTO session_pins (session_id, agent_id, pinned_at) VALUES (?1, ?2, ?3) \
                   ON CONFLICT (session_id) DO NOTHING";
        let added =
            execute(self.db(), "pinning a session", sql, params![session.to_string(), agent, self.now().millis()])?;
        Ok(added > 0)
    }

    /// Unpins the session. Whether it was pinned.
    pub fn unpin_session(&mut self, session: SessionId) -> Result<bool> {
        self.read().require_session(session)?;
        let agent = self.read().agent_id().as_str().to_owned();
        let sql = "DELETE FROM session_pins WHERE session_id = ?1 AND agent_id = ?2";
        let removed = execute(self.db(), "unpinning a session", sql, params![session.to_string(), agent])?;
        Ok(removed > 0)
    }
}
