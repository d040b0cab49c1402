//! The reader's edges and files: continuations by id, by predecessor and
//! successor, a session's `continuedFrom`/`continuedTo`, and attachments.

use super::*;

impl<'a> Reader<'a> {
    /// The edge a `continue_session` call created, if it ran before: the
    /// idempotency check that makes a replayed call return the same successor.
    pub fn continuation_by_tool_call(
        &self,
        predecessor: SessionId,
        tool_call_id: &ToolCallId,
    ) -> Result<Option<ContinuationEdge>> {
        self.require_session(predecessor)?;
        let sql = format!(
            "SELECT {EDGE_COLUMNS} FROM session_continuations \
             WHERE predecessor_session_id = ?1 AND tool_call_id = ?2"
        );
        let params = params![predecessor.to_string(), tool_call_id.as_str()];
        query_first(self.db, "reading a continuation", &sql, params, rows::read_edge)
    }

    /// Every edge out of a predecessor, oldest first.
    pub fn continuations_from(&self, predecessor: SessionId) -> Result<Vec<ContinuationEdge>> {
        self.require_session(predecessor)?;
        let sql = format!(
            "SELECT {EDGE_COLUMNS} FROM session_continuations \
             WHERE predecessor_session_id = ?1 ORDER BY created_at, id"
        );
        query_all(self.db, "reading continuations", &sql, params![predecessor.to_string()], rows::read_edge)
    }

    /// Every continuation edge of this agent's sessions, oldest first.
    pub fn continuations(&self) -> Result<Vec<ContinuationEdge>> {
        let sql = format!(
            "SELECT {EDGE_COLUMNS} FROM session_continuations \
             WHERE predecessor_session_id IN (SELECT id FROM sessions WHERE agent_id = ?1) ORDER BY created_at, id"
        );
        query_all(self.db, "reading continuations", &sql, params![self.agent.as_str()], rows::read_edge)
    }

    /// The edge into a successor, if it continues a session.
    pub fn continuation_into(&self, successor: SessionId) -> Result<Option<ContinuationEdge>> {
        self.require_session(successor)?;
        let sql = format!("SELECT {EDGE_COLUMNS} FROM session_continuations WHERE successor_session_id = ?1");
        query_first(self.db, "reading a continuation", &sql, params![successor.to_string()], rows::read_edge)
    }

    /// One continuation edge by its id, if its predecessor is this agent's:
    /// another agent's edge looks exactly like a missing one.
    pub fn continuation(&self, id: seri_core::ContinuationId) -> Result<Option<ContinuationEdge>> {
        let sql = format!(
            "SELECT {EDGE_COLUMNS} FROM session_continuations WHERE id = ?1 \
             AND predecessor_session_id IN (SELECT id FROM sessions WHERE agent_id = ?2)"
        );
        query_first(
            self.db,
            "reading a continuation",
            &sql,
            params![id.to_string(), self.agent.as_str()],
            rows::read_edge,
        )
    }

    /// How many successors a predecessor has (the cap on continuations counts these).
    pub fn successor_count(&self, predecessor: SessionId) -> Result<u64> {
        self.require_session(predecessor)?;
        let sql = "SELECT count(*) FROM session_continuations WHERE predecessor_session_id = ?1";
        let count = query_first(self.db, "counting continuations", sql, params![predecessor.to_string()], |r| {
            Ok(rows::uint(r.get(0)?))
        })?;
        Ok(count.unwrap_or(0))
    }

    /// The file an `attachment:<id>` reference in one of the session's messages names.
    pub fn resolve_attachment(&self, session: SessionId, reference: &str) -> Result<PathBuf> {
        let id = attachments::parse_reference(reference)?;
        self.attachment_path(session, id)
    }

    /// The file of one of the session's attachments: the cached file, or
    /// (stored through another server, or the cache was cleared) the
    /// database's bytes written to the cache first.
    pub fn attachment_path(&self, session: SessionId, attachment_id: &str) -> Result<PathBuf> {
        self.require_session(session)?;
        let root = self.store.attachments_dir().ok_or(StoreError::Attachment(AttachmentError::NoDir))?;
        match attachments::existing(root, session, attachment_id) {
            Err(missing @ StoreError::Attachment(AttachmentError::Unknown { .. })) => {
                match self.attachment_bytes(session, attachment_id)? {
                    Some(bytes) => attachments::write(root, session, attachment_id, &bytes),
                    None => Err(missing),
                }
            }
            found => found,
        }
    }

    /// `continuedFrom` and `continuedTo` of a session, titles as they are now.
    pub(super) fn links(
        &self,
        id: SessionId,
    ) -> Result<(Option<SessionContinuationLink>, Option<SessionContinuationLink>)> {
        let context = "reading continuation links";
        let from = "SELECT c.id, c.predecessor_session_id, s.title, c.reason, c.created_at \
             FROM session_continuations c JOIN sessions s ON s.id = c.predecessor_session_id \
             WHERE c.successor_session_id = ?1";
        let to = "SELECT c.id, c.successor_session_id, s.title, c.reason, c.created_at \
             FROM session_continuations c JOIN sessions s ON s.id = c.successor_session_id \
             WHERE c.predecessor_session_id = ?1 ORDER BY c.created_at DESC, c.id DESC LIMIT 1";
        let id = id.to_string();
        Ok((
            query_first(self.db, context, from, params![&id], read_link)?,
            query_first(self.db, context, to, params![&id], read_link)?,
        ))
    }
}

pub(super) fn read_link(row: &crate::db::sql::Row<'_>) -> Result<SessionContinuationLink, RowError> {
    let id: String = row.get(0)?;
    let other: String = row.get(1)?;
    let reason: String = row.get(3)?;
    let corrupt = |problem: String| {
        RowError::Store(StoreError::Data(DataError::CorruptRow {
            table: "session_continuations",
            id: id.clone(),
            problem,
        }))
    };
    Ok(SessionContinuationLink {
        continuation_id: id.parse().map_err(|_| corrupt("id is not an id".into()))?,
        session_id: other.parse().map_err(|_| corrupt(format!("`{other}` is not a session id")))?,
        title: row.get(2)?,
        reason: rows::reason_from_sql(&reason).ok_or_else(|| corrupt(format!("unknown reason `{reason}`")))?,
        at: Timestamp(row.get(4)?),
    })
}
