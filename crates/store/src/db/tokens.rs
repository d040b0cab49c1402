//! Server tokens: which agent a bearer token speaks for. Only hashes are
//! kept; the token is shown once, when it is made.
//!
//! These are the store's only reads that do not start from an agent: a
//! token is how a request comes to have one.

use crate::db::sql::params;
use seri_core::AgentId;

use crate::db::rows::query_first;
use crate::error::Result;
use crate::store::Store;

impl Store {
    /// Records that the token whose SHA-256 is `token_sha256` (lowercase
    /// hex) speaks for `agent`. Recording the same hash again is a no-op.
    pub fn record_server_token(&self, agent: &AgentId, token_sha256: &str) -> Result<()> {
        let now = self.now();
        self.transaction(crate::db::connection::TxKind::Write, |db| {
            db.conn
                .execute(
                    "INSERT INTO server_tokens (token_sha256, agent_id, created_at) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (token_sha256) DO NOTHING",
                    params![token_sha256, agent.as_str(), now.millis()],
                )
                .map_err(db.fail("recording a server token"))?;
            Ok(())
        })
    }

    /// The agent the token whose SHA-256 is `token_sha256` speaks for, if
    /// it is a recorded token.
    pub fn server_token_agent(&self, token_sha256: &str) -> Result<Option<AgentId>> {
        self.transaction(crate::db::connection::TxKind::Read, |db| {
            query_first(
                db,
                "checking a server token",
                "SELECT agent_id FROM server_tokens WHERE token_sha256 = ?1",
                params![token_sha256],
                |r| Ok(AgentId(r.get(0)?)),
            )
        })
    }
}
