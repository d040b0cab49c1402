//! The reader's session lists and ids: the newest session, a page of
//! sessions with their continuation links, short ids and what a typed
//! prefix names.

use super::links::read_link;
use super::*;

impl<'a> Reader<'a> {
    /// The session updated most recently, optionally among those started in `cwd`.
    ///
    /// Child sessions are left out: `--continue` opens the conversation a
    /// person had, not a delegated run's session that happened to end later.
    pub fn most_recent_session(&self, cwd: Option<&str>) -> Result<Option<SessionSummary>> {
        let query = SessionQuery {
            cwd: cwd.map(str::to_owned),
            limit: Some(1),
            without_children: true,
            ..SessionQuery::default()
        };
        Ok(self.list_sessions(&query)?.into_iter().next())
    }

    /// This agent's sessions, most recently updated first.
    pub fn list_sessions(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>> {
        let context = "listing sessions";
        let (sql, values) = list_sql(self.agent, query);
        let params: Vec<&dyn crate::db::sql::Param> = values.iter().map(|v| v.as_ref()).collect();
        // A page on PostgreSQL is read in the index's order whatever the
        // planner's statistics say: a plan made while the table was small
        // (and kept as the statement's generic plan, which a setting does
        // not replan) sorts every session.
        if query.limit.is_some()
            && let crate::db::sql::Conn::Postgres(conn) = self.db.conn
        {
            conn.batch("SET LOCAL enable_sort = off; SET LOCAL plan_cache_mode = force_custom_plan")
                .map_err(|e| self.db.fail(context)(e.into()))?;
        }
        let mut sessions = query_all(self.db, context, &sql, params.as_slice(), rows::read_summary)?;
        // Newest first, ties by id, as the database orders them: the ids'
        // text sorts as their bytes do.
        sessions.sort_unstable_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| b.id.cmp(&a.id)));
        if sessions.is_empty() {
            return Ok(sessions);
        }
        // A page reads the edges of its own sessions only; a whole list
        // every edge of the agent (one query each way).
        let page: Option<Vec<SessionId>> = query.limit.map(|_| sessions.iter().map(|s| s.id).collect());
        let (from, to) = self.all_links(page.as_deref())?;
        let mut forks = self.all_fork_links(page.as_deref())?;
        for session in &mut sessions {
            session.continued_from = from.get(&session.id).cloned();
            session.continued_to = to.get(&session.id).cloned();
            session.forked_from = forks.remove(&session.id);
        }
        Ok(sessions)
    }

    /// Every continuation edge touching this agent's sessions (or, given
    /// `only`, touching those of them), as links: by successor (where it
    /// continued from) and by predecessor (the newest edge out of it). One
    /// query.
    pub(super) fn all_links(&self, only: Option<&[SessionId]>) -> Result<(LinksBySession, LinksBySession)> {
        let (ids, values) = id_list(self.agent, only);
        let only = match only {
            Some(_) => format!(" AND (c.predecessor_session_id IN ({ids}) OR c.successor_session_id IN ({ids}))"),
            None => String::new(),
        };
        let sql = format!(
            "SELECT c.id, c.predecessor_session_id, p.title, c.reason, c.created_at, \
             c.successor_session_id, s.title \
             FROM session_continuations c \
             JOIN sessions p ON p.id = c.predecessor_session_id \
             JOIN sessions s ON s.id = c.successor_session_id \
             WHERE (p.agent_id = ?1 OR s.agent_id = ?1){only} ORDER BY c.created_at, c.id"
        );
        let params: Vec<&dyn crate::db::sql::Param> = values.iter().map(|v| v.as_ref()).collect();
        let edges = query_all(self.db, "reading continuation links", &sql, params.as_slice(), |row| {
            let into_predecessor = read_link(row)?;
            let successor: String = row.get(5)?;
            let successor: SessionId = successor.parse().map_err(|_| {
                RowError::Store(StoreError::Data(DataError::CorruptRow {
                    table: "session_continuations",
                    id: into_predecessor.continuation_id.to_string(),
                    problem: format!("`{successor}` is not a session id"),
                }))
            })?;
            let title: String = row.get(6)?;
            Ok((into_predecessor, successor, title))
        })?;
        let (mut from, mut to) = (LinksBySession::new(), LinksBySession::new());
        // Oldest first, so the newest edge out of a session is the one kept.
        for (into_predecessor, successor, title) in edges {
            let predecessor = into_predecessor.session_id;
            let into_successor = SessionContinuationLink { session_id: successor, title, ..into_predecessor.clone() };
            from.insert(successor, into_predecessor);
            to.insert(predecessor, into_successor);
        }
        Ok((from, to))
    }

    /// The short id ([`Reader::short_id`]) of each of `ids`: from a read of
    /// the ids made in the same stretch of time as each (one ranged read
    /// per stretch), or from one sorted read of all the agent's ids when
    /// `ids` span more stretches than `WINDOWS_READ_APART` (32).
    pub fn short_ids(&self, ids: &[SessionId]) -> Result<std::collections::HashMap<SessionId, String>> {
        let context = "shortening session ids";
        let texts: Vec<String> = ids.iter().map(ToString::to_string).collect();
        let windows: std::collections::BTreeSet<&str> =
            texts.iter().map(|text| &text[..prefix::SHORT_TIME_DIGITS]).collect();
        let mut known: Vec<String> = Vec::new();
        if windows.len() > WINDOWS_READ_APART {
            let sql = "SELECT id FROM sessions WHERE agent_id = ?1 ORDER BY id";
            known = query_all(self.db, context, sql, params![self.agent.as_str()], |r| r.get::<_, String>(0))?;
        } else {
            let sql = "SELECT id FROM sessions WHERE agent_id = ?1 AND id >= ?2 AND id < ?3 ORDER BY id";
            for window in windows {
                let upper = prefix::upper_bound(window);
                known.extend(query_all(self.db, context, sql, params![self.agent.as_str(), window, upper], |r| {
                    r.get::<_, String>(0)
                })?);
            }
        }
        let mut shortened = std::collections::HashMap::with_capacity(ids.len());
        for (id, text) in ids.iter().zip(&texts) {
            let time = &text[..prefix::SHORT_TIME_DIGITS];
            let from = known.partition_point(|other| other.as_str() < time);
            let window: Vec<&str> =
                known[from..].iter().take_while(|other| other.starts_with(time)).map(String::as_str).collect();
            shortened.insert(*id, prefix::short(text, &window));
        }
        Ok(shortened)
    }

    /// The session a full id, a printed short id ([`Reader::short_id`]) or
    /// a unique id prefix names, as every command takes it.
    pub fn resolve_session(&self, text: &str) -> Result<SessionId> {
        if let Ok(id) = text.parse::<SessionId>() {
            self.require_session(id)?;
            return Ok(id);
        }
        let (prefix, end) = match prefix::parse_short(text) {
            Some((time, end)) => (time, Some(end)),
            None => (
                prefix::normalize(text)
                    .ok_or_else(|| StoreError::Lookup(LookupError::InvalidSessionPrefix { text: text.to_owned() }))?,
                None,
            ),
        };
        let mut ids = self.sessions_with_prefix(&prefix)?;
        if let Some(end) = end {
            ids.retain(|id| id.to_string().ends_with(&end));
        }
        match ids.as_slice() {
            [] => Err(StoreError::Lookup(LookupError::UnknownSessionPrefix { prefix: text.to_owned() })),
            [id] => Ok(*id),
            _ => {
                let total = ids.len();
                let candidates = ids.into_iter().take(MAX_LISTED_CANDIDATES).collect();
                Err(StoreError::Lookup(LookupError::AmbiguousSessionPrefix {
                    prefix: text.to_owned(),
                    candidates,
                    total,
                }))
            }
        }
    }

    /// This agent's sessions whose id starts with `prefix` (normalised).
    pub(super) fn sessions_with_prefix(&self, prefix: &str) -> Result<Vec<SessionId>> {
        let sql = "SELECT id FROM sessions WHERE id >= ?1 AND id < ?2 AND agent_id = ?3 ORDER BY id";
        query_all(
            self.db,
            "resolving a session id prefix",
            sql,
            params![prefix, prefix::upper_bound(prefix), self.agent.as_str()],
            |r| {
                let text: String = r.get(0)?;
                text.parse().map_err(|_| {
                    RowError::Store(StoreError::Data(DataError::CorruptRow {
                        table: "sessions",
                        id: text.clone(),
                        problem: "not an id".into(),
                    }))
                })
            },
        )
    }

    /// The short id people are shown for `id`: `0198a3b2.8f9a0b`, its time
    /// digits and the end of its random part (`prefix::short`), which
    /// stays unique as sessions are added, unlike a prefix of a
    /// time-ordered id. [`Reader::resolve_session`] takes it back. One
    /// index range read: the sessions of the same stretch of time.
    pub fn short_id(&self, id: SessionId) -> Result<String> {
        let text = id.to_string();
        let window: Vec<String> =
            self.sessions_with_prefix(&text[..prefix::SHORT_TIME_DIGITS])?.iter().map(ToString::to_string).collect();
        let window: Vec<&str> = window.iter().map(String::as_str).collect();
        Ok(prefix::short(&text, &window))
    }
}

/// The query of a session list and its parameters: two queries whatever
/// the count, this one for the rows (their seeds never decoded, each head
/// from `session_last_events`), then the edges of the sessions listed.
///
/// With a limit, the rows are read in the order of
/// `session_last_events_listed` (newest first, ties by id) and the read
/// stops at the limit: a page costs its own rows, however many sessions
/// the store holds. A whole list is sorted by the caller instead, on the
/// two keys alone, rather than by the database carrying every column of
/// every row through its sorter.
pub(super) fn list_sql(agent: &AgentId, query: &SessionQuery) -> (String, Vec<Box<dyn crate::db::sql::Param>>) {
    let mut filters = String::new();
    let mut values: Vec<Box<dyn crate::db::sql::Param>> = vec![Box::new(agent.as_str().to_owned())];
    if let Some(cwd) = &query.cwd {
        values.push(Box::new(cwd.clone()));
        filters.push_str(&format!(" AND cwd = ?{}", values.len()));
    }
    match (query.updated_before, query.before_id) {
        // The list's order is (updated_at, id), newest first: the next page
        // starts right after the last session of the one before, ties and all.
        (Some(before), Some(id)) => {
            values.push(Box::new(before.millis()));
            values.push(Box::new(id.to_string()));
            let (at, id) = (values.len() - 1, values.len());
            filters.push_str(&format!(" AND (updated_at < ?{at} OR (updated_at = ?{at} AND id < ?{id}))"));
        }
        (Some(before), None) => {
            values.push(Box::new(before.millis()));
            filters.push_str(&format!(" AND updated_at < ?{}", values.len()));
        }
        (None, _) => {}
    }
    if query.without_children {
        filters.push_str(" AND parent_run_id IS NULL");
    }
    let order = match query.limit {
        Some(limit) => {
            values.push(Box::new(clamp(limit)));
            format!(" ORDER BY updated_at DESC, id DESC LIMIT ?{}", values.len())
        }
        None => String::new(),
    };
    let sql = format!(
        "SELECT id, agent_id, cwd, created_at, title, description, title_source, last_seq, updated_at, \
         parent_run_id, (SELECT r.session_id FROM runs r WHERE r.id = session_list_heads.parent_run_id) \
         FROM session_list_heads WHERE agent_id = ?1{filters}{order}"
    );
    (sql, values)
}
