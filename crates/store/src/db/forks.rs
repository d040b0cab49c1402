//! Fork edges (`session_forks`): reading a session's lineage of forks, and
//! the segments its history is read from.
//!
//! A fork copies no events. Every read of a session's events goes through
//! [`Reader::segments`]: for a session that is no fork, one segment (its
//! own rows); for a fork, the parent's rows up to the fork point (through
//! the parent's own edge when it is a fork too), then its own.

use seri_core::{ForkEdge, ForkVia, HistorySegment, Seq, SessionForkLink, SessionId, SessionInfo, Timestamp};

use crate::db::read::Reader;
use crate::db::rows::{self, Db, RowError, query_all, query_first};
use crate::db::sql::{Conn, Row, params};
use crate::db::write::WriteTx;
use crate::error::{DataError, Result, StoreError, WriteError};

/// The columns [`read_edge`] expects.
const FORK_COLUMNS: &str = "session_id, parent_session_id, fork_seq, created_at, via";

fn read_edge(row: &Row<'_>) -> std::result::Result<ForkEdge, RowError> {
    let fork: String = row.get(0)?;
    let corrupt = |problem: String| {
        RowError::Store(StoreError::Data(DataError::CorruptRow { table: "session_forks", id: fork.clone(), problem }))
    };
    let parent: String = row.get(1)?;
    let via: String = row.get(4)?;
    Ok(ForkEdge {
        session_id: fork.parse().map_err(|_| corrupt("session_id is not an id".into()))?,
        parent_session_id: parent.parse().map_err(|_| corrupt(format!("`{parent}` is not a session id")))?,
        fork_seq: Seq(rows::uint(row.get(2)?)),
        created_at: Timestamp(row.get(3)?),
        via: ForkVia::parse(&via).ok_or_else(|| corrupt(format!("unknown via `{via}`")))?,
    })
}

/// The fork edges from `session` up, its own first: empty for a session
/// that is no fork. One statement, however deep the lineage; none on
/// PostgreSQL for a session found before to be no fork. The caller has
/// checked that `session` exists.
///
/// A session's edge is written with it, in the transaction that makes it
/// ([`WriteTx::fork_session`]; a copy brings both in one transaction too),
/// and never changes nor goes: a session that exists and is no fork never
/// becomes one (forks made *of* it later are edges of other sessions), so
/// what a committed transaction found stays true (see `Db::session_known`).
pub(crate) fn chain(db: Db<'_>, session: SessionId) -> Result<Vec<ForkEdge>> {
    let forkless = format!("forkless:{session}");
    if let Conn::Postgres(conn) = db.conn
        && conn.knows(&forkless)
    {
        return Ok(Vec::new());
    }
    let sql = "WITH RECURSIVE chain (session_id, parent_session_id, fork_seq, created_at, via, depth) AS ( \
                   SELECT session_id, parent_session_id, fork_seq, created_at, via, 0 \
                   FROM session_forks WHERE session_id = ?1 \
                   UNION ALL \
                   SELECT f.session_id, f.parent_session_id, f.fork_seq, f.created_at, f.via, c.depth + 1 \
                   FROM session_forks f JOIN chain c ON f.session_id = c.parent_session_id \
               ) SELECT session_id, parent_session_id, fork_seq, created_at, via FROM chain ORDER BY depth";
    let edges = query_all(db, "reading a session's forks", sql, params![session.to_string()], read_edge)?;
    if let Conn::Postgres(conn) = db.conn
        && edges.is_empty()
    {
        conn.learn(forkless);
    }
    Ok(edges)
}

/// Records a fork edge.
pub(crate) fn insert(db: Db<'_>, edge: &ForkEdge) -> Result<()> {
    let fail = db.fail("recording a fork");
    db.conn
        .prepare_cached(&format!("INSERT INTO session_forks ({FORK_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5)"))
        .map_err(&fail)?
        .execute(params![
            edge.session_id.to_string(),
            edge.parent_session_id.to_string(),
            rows::int(edge.fork_seq.get()),
            edge.created_at.millis(),
            edge.via.as_str(),
        ])
        .map_err(&fail)?;
    Ok(())
}

impl Reader<'_> {
    /// The segments the session's history is read from, oldest first (see
    /// [`seri_core::history_segments`]). The caller has checked the session
    /// is this agent's; every session of a lineage is its agent's.
    pub(crate) fn segments(&self, id: SessionId) -> Result<Vec<HistorySegment>> {
        Ok(seri_core::history_segments(id, &chain(self.db(), id)?))
    }

    /// The edge from a fork to its parent; `None` for a session that is no fork.
    pub fn fork_edge(&self, id: SessionId) -> Result<Option<ForkEdge>> {
        self.require_session(id)?;
        let sql = format!("SELECT {FORK_COLUMNS} FROM session_forks WHERE session_id = ?1");
        query_first(self.db(), "reading a fork", &sql, params![id.to_string()], read_edge)
    }

    /// The forks made of `parent`, oldest first.
    pub fn forks_of(&self, parent: SessionId) -> Result<Vec<ForkEdge>> {
        self.require_session(parent)?;
        let sql = format!(
            "SELECT {FORK_COLUMNS} FROM session_forks WHERE parent_session_id = ?1 ORDER BY created_at, session_id"
        );
        query_all(self.db(), "listing a session's forks", &sql, params![parent.to_string()], read_edge)
    }

    /// `forkedFrom` of a session: its parent, with the parent's title as it is now.
    pub(crate) fn fork_link(&self, id: SessionId) -> Result<Option<SessionForkLink>> {
        let sql = format!("{LINK_SELECT} WHERE f.session_id = ?1");
        query_first(self.db(), "reading a fork link", &sql, params![id.to_string()], |row| Ok(read_link(row)?.1))
    }

    /// `forkedFrom` of every fork of this agent (given `only`, of those of
    /// them), by fork. One query.
    pub(crate) fn all_fork_links(
        &self,
        only: Option<&[SessionId]>,
    ) -> Result<std::collections::HashMap<SessionId, SessionForkLink>> {
        let (ids, values) = crate::db::read::id_list(self.agent_id(), only);
        let sql = match (only, self.db().conn) {
            // A page's links: SQLite's planner would start at the agent's
            // sessions (an equality on an index) and look each up among the
            // forks, so a page would cost every session of the store.
            // `CROSS JOIN` makes it start at the page's own forks.
            (Some(_), crate::db::sql::Conn::Sqlite(_)) => {
                format!("{LINK_SELECT_FROM_FORKS} WHERE f.session_id IN ({ids}) AND s.agent_id = ?1")
            }
            (Some(_), crate::db::sql::Conn::Postgres(_)) => {
                format!("{LINK_SELECT} WHERE f.session_id IN ({ids}) AND s.agent_id = ?1")
            }
            (None, _) => format!("{LINK_SELECT} WHERE s.agent_id = ?1"),
        };
        let params: Vec<&dyn crate::db::sql::Param> = values.iter().map(|v| v.as_ref()).collect();
        let links = query_all(self.db(), "reading fork links", &sql, params.as_slice(), read_link)?;
        Ok(links.into_iter().collect())
    }
}

/// A fork's link to its parent, with the parent's title.
const LINK_SELECT: &str = "SELECT f.session_id, f.parent_session_id, s.title, f.fork_seq, f.created_at, f.via \
                           FROM session_forks f JOIN sessions s ON s.id = f.parent_session_id";

/// [`LINK_SELECT`] read from the forks first, on SQLite (whose planner
/// keeps the order a `CROSS JOIN` names).
const LINK_SELECT_FROM_FORKS: &str = "SELECT f.session_id, f.parent_session_id, s.title, f.fork_seq, f.created_at, \
                                      f.via FROM session_forks f CROSS JOIN sessions s ON s.id = f.parent_session_id";

fn read_link(row: &Row<'_>) -> std::result::Result<(SessionId, SessionForkLink), RowError> {
    let fork: String = row.get(0)?;
    let parent: String = row.get(1)?;
    let via: String = row.get(5)?;
    let corrupt = |problem: String| {
        RowError::Store(StoreError::Data(DataError::CorruptRow { table: "session_forks", id: fork.clone(), problem }))
    };
    let id = fork.parse().map_err(|_| corrupt("session_id is not an id".into()))?;
    Ok((
        id,
        SessionForkLink {
            session_id: parent.parse().map_err(|_| corrupt(format!("`{parent}` is not a session id")))?,
            title: row.get(2)?,
            fork_seq: Seq(rows::uint(row.get(3)?)),
            at: Timestamp(row.get(4)?),
            via: ForkVia::parse(&via).ok_or_else(|| corrupt(format!("unknown via `{via}`")))?,
        },
    ))
}

impl WriteTx<'_> {
    /// Forks `parent` at `at` (its newest event when `None`): a new session
    /// that shares the parent's events `1..=at` by reference and appends its
    /// own from `at + 1` on. Nothing of the parent is copied or changed.
    ///
    /// The fork starts from the parent's seed (its frozen prompt and tools,
    /// so the model sees the same prefix), as a top-level session of the
    /// same folder. Its view as of the fork point is written as its
    /// snapshot, so opening it never folds the parent's history again.
    pub fn fork_session(&mut self, parent: SessionId, at: Option<Seq>, via: ForkVia) -> Result<SessionInfo> {
        self.fork_session_from(parent, at, via, None)
    }

    /// [`WriteTx::fork_session`], given the parent's view as of the fork
    /// point when the caller has it (the import, which folds the session
    /// it writes as it goes and forks it many times): then the parent's
    /// history is not folded again. `view` must be exactly what folding
    /// the parent's events `1..=at` gives; `seri store check` compares.
    pub fn fork_session_from(
        &mut self,
        parent: SessionId,
        at: Option<Seq>,
        via: ForkVia,
        view: Option<SessionInfo>,
    ) -> Result<SessionInfo> {
        // The fork takes a copy of the parent's undo history (below): the
        // checkpoint tables' lock comes before any session's.
        self.db().lock(crate::db::checkpoints::CHECKPOINTS_LOCK);
        let row = self.read().session_row(parent)?;
        let fork_seq = at.map_or(row.last_seq, Seq::get);
        if fork_seq > row.last_seq {
            return Err(StoreError::Write(WriteError::ForkPointPastEnd {
                session_id: parent,
                fork_seq,
                last_seq: row.last_seq,
            }));
        }
        let mut seed = row.seed()?;
        let parent_seed = seed.clone();
        seed.id = self.store().new_session_id();
        seed.created_at = self.now();
        seed.parent_run_id = None;
        self.create_session(&seed)?;
        let edge = ForkEdge {
            session_id: seed.id,
            parent_session_id: parent,
            fork_seq: Seq(fork_seq),
            created_at: seed.created_at,
            via,
        };
        insert(self.db(), &edge)?;
        let mut info = SessionInfo::from_seed(&seed);
        if fork_seq > 0 {
            let base = match view {
                Some(view) if view.id == parent && view.last_seq == fork_seq => view,
                _ => self.read().folded_upto(parent, &parent_seed, Seq(fork_seq))?,
            };
            info = SessionInfo {
                id: seed.id,
                created_at: seed.created_at,
                updated_at: base.updated_at.max(seed.created_at),
                parent_run_id: None,
                continued_from: None,
                continued_to: None,
                forked_from: None,
                ..base
            };
            crate::db::snapshot::write(self.db(), &info)?;
            // The cached title columns are the fold's, as after any append.
            crate::db::write::write_cached(self.db(), seed.id, &crate::db::rows::Cached::of(&info))?;
        }
        self.share_checkpoints(parent, seed.id, Seq(fork_seq))?;
        info.forked_from = self.read().fork_link(seed.id)?;
        Ok(info)
    }
}

/// How many events [`Reader::folded_upto`] folds at a time.
const FOLD_PAGE: u64 = 1024;

impl Reader<'_> {
    /// The session's view as of `upto` (its seed folded with its history's
    /// events `1..=upto`): from its snapshot when the snapshot is not past
    /// `upto`, else from the seed.
    fn folded_upto(&self, id: SessionId, seed: &seri_core::SessionSeed, upto: Seq) -> Result<SessionInfo> {
        let (mut info, from) = match crate::db::snapshot::read(self.db(), id)? {
            Some((seq, info)) if seq <= upto.get() && info.id == id => (info, seq + 1),
            _ => (SessionInfo::from_seed(seed), 1),
        };
        // A page at a time: a long history is folded in bounded memory.
        let mut from = from;
        while from <= upto.get() {
            let range = seri_core::SeqRange::between(Seq(from), upto);
            let page = self.events_page(id, range, Some(FOLD_PAGE))?;
            let Some(last) = page.last().map(|event| event.seq.get()) else { break };
            for event in &page {
                info.apply(event);
            }
            from = last + 1;
        }
        Ok(info)
    }
}
