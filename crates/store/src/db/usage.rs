//! Reading what sessions hold and how they are linked: the facts
//! [`Store::usage`] sums and the prune planner decides on. Each query reads
//! a whole table once, grouped by session, so a report costs the store's
//! size, not its size times its sessions.

use std::collections::{BTreeMap, HashMap, HashSet};

use seri_core::{AgentId, SessionId, Timestamp};

use crate::db::connection::TxKind;
use crate::db::rows::{self, Db, corrupt, query_all};
use crate::db::sql::{Conn, params};
use crate::error::Result;
use crate::lease::LeaseOwner;
use crate::prune::{PruneGraph, PruneSession};
use crate::store::Store;
use crate::usage::{SessionUsage, StoreUsage};

fn session_id(table: &'static str, text: &str) -> std::result::Result<SessionId, rows::RowError> {
    text.parse().map_err(|_| corrupt(table, text, "session_id is not an id"))
}

/// What every session of the store holds, by id.
pub(crate) fn session_usage(db: Db<'_>) -> Result<Vec<SessionUsage>> {
    let sql = "SELECT s.id, s.agent_id, s.cwd, s.title, coalesce(l.created_at, s.created_at) \
               FROM sessions s LEFT JOIN session_last_events l ON l.session_id = s.id ORDER BY s.id";
    let mut sessions = query_all(db, "measuring sessions", sql, params![], |r| {
        let id: String = r.get(0)?;
        Ok(SessionUsage {
            id: session_id("sessions", &id)?,
            agent: AgentId(r.get(1)?),
            cwd: r.get(2)?,
            title: r.get(3)?,
            last_active: Timestamp(r.get(4)?),
            events: 0,
            event_bytes: 0,
            trajectory_bytes: 0,
            attachments: BTreeMap::new(),
        })
    })?;
    let index: HashMap<SessionId, usize> = sessions.iter().enumerate().map(|(i, s)| (s.id, i)).collect();

    let events = "SELECT session_id, count(*), \
                  sum(octet_length(payload) + octet_length(id) + octet_length(type)) \
                  FROM session_events GROUP BY session_id";
    for (id, count, bytes) in query_all(db, "measuring events", events, params![], |r| {
        let id: String = r.get(0)?;
        Ok((session_id("session_events", &id)?, rows::uint(r.get(1)?), rows::uint(r.get(2)?)))
    })? {
        if let Some(&i) = index.get(&id) {
            sessions[i].events = count;
            sessions[i].event_bytes = bytes;
        }
    }

    let headers = "SELECT session_id, sum(octet_length(header)) FROM trajectories GROUP BY session_id";
    let records = "SELECT t.session_id, sum(octet_length(r.data)) FROM trajectory_records r \
                   JOIN trajectories t ON t.run_id = r.run_id GROUP BY t.session_id";
    for sql in [headers, records] {
        for (id, bytes) in query_all(db, "measuring trajectories", sql, params![], |r| {
            let id: String = r.get(0)?;
            Ok((session_id("trajectories", &id)?, rows::uint(r.get(1)?)))
        })? {
            if let Some(&i) = index.get(&id) {
                sessions[i].trajectory_bytes = sessions[i].trajectory_bytes.saturating_add(bytes);
            }
        }
    }

    let attachments = "SELECT a.session_id, a.sha256, CAST(octet_length(b.bytes) AS BIGINT) FROM session_attachments a \
                       JOIN attachment_blobs b ON b.sha256 = a.sha256";
    for (id, sha, bytes) in query_all(db, "measuring attachments", attachments, params![], |r| {
        let id: String = r.get(0)?;
        Ok((session_id("session_attachments", &id)?, r.get::<_, String>(1)?, rows::uint(r.get(2)?)))
    })? {
        if let Some(&i) = index.get(&id) {
            sessions[i].attachments.insert(sha, bytes);
        }
    }
    Ok(sessions)
}

/// Pairs of sessions.
type Pairs = Vec<(SessionId, SessionId)>;

/// The edges that make lineages (continuations, delegations) and the fork
/// edges, for [`crate::prune::lineages`] and the planner.
pub(crate) fn links(db: Db<'_>) -> Result<(Pairs, Pairs)> {
    let pair = |table: &'static str| {
        move |r: &crate::db::sql::Row<'_>| {
            let (a, b): (String, String) = (r.get(0)?, r.get(1)?);
            Ok((session_id(table, &a)?, session_id(table, &b)?))
        }
    };
    let mut same = query_all(
        db,
        "reading continuation edges",
        "SELECT predecessor_session_id, successor_session_id FROM session_continuations",
        params![],
        pair("session_continuations"),
    )?;
    // A delegated child's session, with the session of the run that started it.
    same.extend(query_all(
        db,
        "reading delegations",
        "SELECT s.id, r.session_id FROM sessions s JOIN runs r ON r.id = s.parent_run_id",
        params![],
        pair("sessions"),
    )?);
    same.extend(query_all(
        db,
        "reading delegations",
        "SELECT r.session_id, p.session_id FROM runs r JOIN runs p ON p.id = r.parent_run_id \
         WHERE r.session_id <> p.session_id",
        params![],
        pair("runs"),
    )?);
    let forks = query_all(
        db,
        "reading fork edges",
        "SELECT session_id, parent_session_id FROM session_forks",
        params![],
        pair("session_forks"),
    )?;
    Ok((same, forks))
}

/// The sessions a live process holds: a lease whose holder is alive, a
/// waiter still waiting, a job not done.
pub(crate) fn held_sessions(db: Db<'_>, now: Timestamp) -> Result<HashSet<SessionId>> {
    let leases = "SELECT session_id, owner_instance, owner_pid, owner_host, owner_started, expires_at \
                  FROM session_leases UNION ALL \
                  SELECT session_id, owner_instance, owner_pid, owner_host, owner_started, expires_at \
                  FROM session_waiters";
    let mut held = HashSet::new();
    for (id, owner, expires) in query_all(db, "reading leases", leases, params![], |r| {
        let id: String = r.get(0)?;
        let owner = LeaseOwner {
            instance: r.get(1)?,
            pid: u32::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
            host: r.get(3)?,
            started: rows::uint(r.get(4)?),
        };
        Ok((session_id("session_leases", &id)?, owner, Timestamp(r.get(5)?)))
    })? {
        if owner.is_alive(expires, now) {
            held.insert(id);
        }
    }
    let jobs = "SELECT DISTINCT session_id FROM run_jobs WHERE state <> 'done'";
    held.extend(query_all(db, "reading queued jobs", jobs, params![], |r| {
        let id: String = r.get(0)?;
        session_id("run_jobs", &id)
    })?);
    Ok(held)
}

/// The planner's graph of the whole store: every session with its age,
/// bytes, pin and hold, and the edges between them.
pub(crate) fn prune_graph(db: Db<'_>, now: Timestamp) -> Result<(PruneGraph, Vec<SessionUsage>)> {
    let usage = session_usage(db)?;
    let (same_lineage, forks) = links(db)?;
    let held = held_sessions(db, now)?;
    let pinned: HashSet<SessionId> =
        query_all(db, "reading pins", "SELECT session_id FROM session_pins", params![], |r| {
            let id: String = r.get(0)?;
            session_id("session_pins", &id)
        })?
        .into_iter()
        .collect();
    let sessions = usage
        .iter()
        .map(|s| PruneSession {
            id: s.id,
            last_active: s.last_active,
            bytes: s.event_bytes.saturating_add(s.trajectory_bytes).saturating_add(s.attachments.values().sum()),
            pinned: pinned.contains(&s.id),
            held: held.contains(&s.id),
        })
        .collect();
    Ok((PruneGraph { sessions, same_lineage, forks }, usage))
}

impl Store {
    /// `seri store du`: what every session holds, summed per agent, folder
    /// and lineage, and what the database takes. One read transaction.
    pub fn usage(&self) -> Result<StoreUsage> {
        let (sessions, same_lineage, forks) = self.read_transaction(|db| {
            let sessions = session_usage(db)?;
            let (same, forks) = links(db)?;
            Ok((sessions, same, forks))
        })?;
        let graph = PruneGraph {
            sessions: sessions
                .iter()
                .map(|s| PruneSession { id: s.id, last_active: s.last_active, bytes: 0, pinned: false, held: false })
                .collect(),
            same_lineage,
            forks,
        };
        let lineages = crate::prune::lineages(&graph);
        let database = self.database_space()?;
        Ok(crate::usage::summarize(database, &sessions, &lineages))
    }

    /// What the database takes; see [`crate::usage::DatabaseSpace`].
    pub(crate) fn database_space(&self) -> Result<crate::usage::DatabaseSpace> {
        self.transaction(TxKind::Read, |db| match db.conn {
            Conn::Sqlite(conn) => crate::db::sqlite::space::measure(conn, db.path),
            Conn::Postgres(_) => crate::db::postgres::space::measure(db),
        })
    }
}
