//! Disk usage (`seri store du`): what each session holds, summed per
//! agent, per folder and per lineage, with what the database file itself
//! takes. Summing is pure and here; reading the sizes is `db/usage.rs`.
//!
//! Sizes are the bytes of the stored values: an event's payload, id and
//! type; an attachment's content; a trajectory's header and records. Page
//! and row overhead and the indexes are in the database's own figures
//! ([`DatabaseSpace`]), not split per session. A fork's shared history is
//! its parent's rows, so it is counted once, with the parent; an
//! attachment shared by several sessions (a continuation carries its
//! files on) is counted once in every sum that holds more than one of them.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use seri_core::{AgentId, SessionId, Timestamp};

/// What one session holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionUsage {
    /// The session.
    pub id: SessionId,
    /// Its agent.
    pub agent: AgentId,
    /// Its folder.
    pub cwd: String,
    /// Its title (empty when it has none).
    pub title: String,
    /// When it last changed.
    pub last_active: Timestamp,
    /// Its own events: how many, and their bytes.
    pub events: u64,
    /// The bytes of its own events.
    pub event_bytes: u64,
    /// The bytes of its trajectories.
    pub trajectory_bytes: u64,
    /// Its attachments' contents: SHA-256 and size, each content once.
    pub attachments: BTreeMap<String, u64>,
}

/// Bytes of one group, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sizes {
    /// Sessions in the group.
    pub sessions: u64,
    /// Events in the group.
    pub events: u64,
    /// The events' bytes.
    pub event_bytes: u64,
    /// The attachments' bytes, each content once.
    pub attachment_bytes: u64,
    /// The trajectories' bytes.
    pub trajectory_bytes: u64,
}

impl Sizes {
    /// Everything the group holds.
    pub fn total(&self) -> u64 {
        self.event_bytes.saturating_add(self.attachment_bytes).saturating_add(self.trajectory_bytes)
    }
}

/// One line of a usage report: a group and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    /// The agent, the folder, or the lineage's first session id.
    pub key: String,
    /// For a lineage: its newest session's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// For a lineage: when its newest session last changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_active: Option<Timestamp>,
    /// What it holds.
    #[serde(flatten)]
    pub sizes: Sizes,
    /// Its whole size.
    pub bytes: u64,
}

/// The database itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseSpace {
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// The database file (SQLite: pages × page size), or every table of
    /// the store's schema with its indexes and TOAST (PostgreSQL).
    pub bytes: u64,
    /// SQLite: the write-ahead log beside the file, when it is there.
    pub wal_bytes: Option<u64>,
    /// Of `bytes`, what the indexes take (`dbstat` on SQLite,
    /// `pg_indexes_size` on PostgreSQL).
    pub index_bytes: Option<u64>,
    /// Of `bytes`, what is free inside the file and could be given back
    /// (SQLite: free pages × page size). `None` on PostgreSQL, which
    /// reuses freed space itself and reports no such figure cheaply.
    pub reclaimable_bytes: Option<u64>,
    /// SQLite's `auto_vacuum` mode: `none`, `full` or `incremental`.
    pub auto_vacuum: Option<&'static str>,
}

/// `seri store du`: the whole report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreUsage {
    /// The database.
    pub database: DatabaseSpace,
    /// Every session together.
    pub total: Sizes,
    /// Per agent, largest first.
    pub agents: Vec<UsageRow>,
    /// Per folder, largest first.
    pub folders: Vec<UsageRow>,
    /// Per lineage, largest first.
    pub lineages: Vec<UsageRow>,
}

/// Sums sessions into groups: `key` names each session's group.
fn sum_by<'a>(
    sessions: impl Iterator<Item = &'a SessionUsage>,
    key: impl Fn(&SessionUsage) -> String,
) -> BTreeMap<String, (Sizes, BTreeMap<&'a str, u64>)> {
    let mut groups: BTreeMap<String, (Sizes, BTreeMap<&'a str, u64>)> = BTreeMap::new();
    for s in sessions {
        let (sizes, blobs) = groups.entry(key(s)).or_default();
        add(sizes, blobs, s);
    }
    for (sizes, blobs) in groups.values_mut() {
        sizes.attachment_bytes = blobs.values().sum();
    }
    groups
}

fn add<'a>(sizes: &mut Sizes, blobs: &mut BTreeMap<&'a str, u64>, s: &'a SessionUsage) {
    sizes.sessions += 1;
    sizes.events += s.events;
    sizes.event_bytes = sizes.event_bytes.saturating_add(s.event_bytes);
    sizes.trajectory_bytes = sizes.trajectory_bytes.saturating_add(s.trajectory_bytes);
    blobs.extend(s.attachments.iter().map(|(sha, bytes)| (sha.as_str(), *bytes)));
}

fn rows(groups: BTreeMap<String, (Sizes, BTreeMap<&str, u64>)>) -> Vec<UsageRow> {
    let mut rows: Vec<UsageRow> = groups
        .into_iter()
        .map(|(key, (sizes, _))| UsageRow { key, title: None, last_active: None, bytes: sizes.total(), sizes })
        .collect();
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
    rows
}

/// The report's sums, given every session and the lineages
/// ([`crate::prune::lineages`]) they form.
pub fn summarize(database: DatabaseSpace, sessions: &[SessionUsage], lineages: &[Vec<SessionId>]) -> StoreUsage {
    let total = {
        let (mut sizes, mut blobs) = (Sizes::default(), BTreeMap::new());
        sessions.iter().for_each(|s| add(&mut sizes, &mut blobs, s));
        sizes.attachment_bytes = blobs.values().sum();
        sizes
    };
    let agents = rows(sum_by(sessions.iter(), |s| s.agent.as_str().to_owned()));
    let folders = rows(sum_by(sessions.iter(), |s| s.cwd.clone()));
    let by_id: HashMap<SessionId, &SessionUsage> = sessions.iter().map(|s| (s.id, s)).collect();
    let mut lineage_rows = Vec::new();
    for lineage in lineages {
        let members: Vec<&SessionUsage> = lineage.iter().filter_map(|id| by_id.get(id).copied()).collect();
        let Some(first) = lineage.first() else { continue };
        let (mut sizes, mut blobs) = (Sizes::default(), BTreeMap::new());
        members.iter().for_each(|s| add(&mut sizes, &mut blobs, s));
        sizes.attachment_bytes = blobs.values().sum();
        let newest = members.iter().max_by_key(|s| (s.last_active, s.id));
        lineage_rows.push(UsageRow {
            key: first.to_string(),
            title: newest.map(|s| s.title.clone()),
            last_active: newest.map(|s| s.last_active),
            bytes: sizes.total(),
            sizes,
        });
    }
    lineage_rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
    StoreUsage { database, total, agents, folders, lineages: lineage_rows }
}
