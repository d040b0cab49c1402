//! Small named settings a person changes from inside seri (`/trajectory
//! on|off`), kept per agent in the `settings` table. `config.json` is the
//! person's file and is never rewritten; these are the toggles seri itself
//! is asked to remember.

use crate::db::sql::params;

use crate::db::read::Reader;
use crate::db::rows::query_first;
use crate::db::write::WriteTx;
use crate::error::Result;

impl Reader<'_> {
    /// The stored value of a setting, if one was stored.
    pub fn setting(&self, key: &str) -> Result<Option<String>> {
        let sql = "SELECT value FROM settings WHERE agent_id = ?1 AND key = ?2";
        query_first(self.db(), "reading a setting", sql, params![self.agent_id().as_str(), key], |row| row.get(0))
    }
}

impl WriteTx<'_> {
    /// Stores a setting, replacing its earlier value.
    pub fn set_setting(&mut self, key: &str, value: &str) -> Result<()> {
        let db = self.db();
        let agent = self.read().agent_id().as_str().to_owned();
        db.conn
            .prepare_cached(
                "INSERT INTO settings (agent_id, key, value, updated_at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (agent_id, key) DO UPDATE SET value = ?3, updated_at = ?4",
            )
            .and_then(|mut s| s.execute(params![agent, key, value, self.now().millis()]))
            .map_err(db.fail("storing a setting"))?;
        Ok(())
    }
}
