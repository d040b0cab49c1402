//! The attachment tables: `attachment_blobs` (bytes by SHA-256) and
//! `session_attachments` (which id resolves in which session). The
//! database holds every attachment, so every server on it resolves
//! `attachment:<id>`; the attachments directory is a cache of these rows
//! (see `crate::attachments`).

use seri_core::SessionId;

use crate::db::read::Reader;
use crate::db::rows::query_first;
use crate::db::sql::params;
use crate::db::write::WriteTx;
use crate::error::Result;

impl WriteTx<'_> {
    /// Records attachment `id` of `session`: its bytes (once per content)
    /// and the row that makes the id resolve in the session.
    pub(crate) fn record_attachment(&mut self, session: SessionId, id: &str, bytes: &[u8]) -> Result<()> {
        let db = self.db();
        let fail = db.fail("storing an attachment");
        let sha256 = crate::trajectories::elide::hex_sha256(bytes);
        db.conn
            .prepare_cached("INSERT INTO attachment_blobs (sha256, bytes) VALUES (?1, ?2) ON CONFLICT DO NOTHING")
            .and_then(|mut s| s.execute(params![sha256, bytes]))
            .map_err(&fail)?;
        db.conn
            .prepare_cached("INSERT INTO session_attachments (session_id, attachment_id, sha256) VALUES (?1, ?2, ?3)")
            .and_then(|mut s| s.execute(params![session.to_string(), id, sha256]))
            .map_err(&fail)?;
        Ok(())
    }

    /// Makes attachment `id` of session `from` resolve in session `to` too
    /// (the same content; nothing when `to` has it already or `from` has
    /// no row, as an attachment stored before attachments were kept in the
    /// database has not).
    pub(crate) fn share_attachment(&mut self, from: SessionId, to: SessionId, id: &str) -> Result<()> {
        let db = self.db();
        db.conn
            .prepare_cached(
                "INSERT INTO session_attachments (session_id, attachment_id, sha256) \
                 SELECT ?2, attachment_id, sha256 FROM session_attachments \
                 WHERE session_id = ?1 AND attachment_id = ?3 ON CONFLICT DO NOTHING",
            )
            .and_then(|mut s| s.execute(params![from.to_string(), to.to_string(), id]))
            .map_err(&db.fail("sharing an attachment"))?;
        Ok(())
    }
}

impl Reader<'_> {
    /// The bytes of attachment `id` of `session`, if the database has them.
    pub(crate) fn attachment_bytes(&self, session: SessionId, id: &str) -> Result<Option<Vec<u8>>> {
        let sql = "SELECT b.bytes FROM session_attachments a JOIN attachment_blobs b ON b.sha256 = a.sha256 \
                   WHERE a.session_id = ?1 AND a.attachment_id = ?2";
        query_first(self.db(), "reading an attachment", sql, params![session.to_string(), id], |r| {
            r.get::<_, Vec<u8>>(0)
        })
    }
}
