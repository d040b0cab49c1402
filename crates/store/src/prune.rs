//! Pruning: which sessions `seri store prune` (or `retention` in
//! `config.json`) removes, decided by a pure planner over the store's
//! graph of sessions, and what a prune reports.
//!
//! The rules, each kept by [`plan`] and checked by its property tests:
//!
//! - Whole lineages only. Sessions joined by a continuation edge
//!   (predecessor → successor), or by a delegation (a child session's run
//!   was started by a run of another session), are one lineage: it goes
//!   whole or not at all, so a predecessor whose successor is kept stays.
//!   A lineage's age is its newest session's.
//! - A fork shares its parent's events by reference: the parent's lineage
//!   stays while a lineage holding one of its forks stays.
//! - A pinned session, and a session a process holds (a live lease, a run
//!   waiting for one, a queued job), keeps its whole lineage, and so the
//!   lineages its forks come from.
//! - The age rule takes every lineage older than the cutoff; the size
//!   budget then takes the oldest lineages left until what sessions hold
//!   fits the budget.
//!
//! Deciding is here; the store gathers the graph and removes what the plan
//! names in one transaction (`db/prune.rs`).

use std::collections::{BTreeMap, HashMap};

use seri_core::{SessionId, Timestamp};

const DAY_MILLIS: i64 = 86_400_000;

/// One session as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneSession {
    /// The session.
    pub id: SessionId,
    /// When it last changed: its newest event's time, else its creation.
    pub last_active: Timestamp,
    /// What it holds, in bytes (its own events, trajectories and attachments).
    pub bytes: u64,
    /// Pinned (`seri sessions pin`): never pruned.
    pub pinned: bool,
    /// Held by a live process (a lease, a waiting run, a queued job): never pruned.
    pub held: bool,
}

/// The sessions of a store and the edges between them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneGraph {
    /// Every session.
    pub sessions: Vec<PruneSession>,
    /// Pairs of sessions of one lineage: continuation edges and delegations.
    pub same_lineage: Vec<(SessionId, SessionId)>,
    /// Fork edges: (fork, parent).
    pub forks: Vec<(SessionId, SessionId)>,
}

/// What to prune.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrunePolicy {
    /// Lineages whose newest session last changed before this go.
    pub older_than: Option<Timestamp>,
    /// Then the oldest lineages go until what sessions hold is at most this.
    pub max_bytes: Option<u64>,
}

impl PrunePolicy {
    /// The policy of `days` (and `max_bytes`), seen from `now`.
    pub fn of(days: Option<u32>, max_bytes: Option<u64>, now: Timestamp) -> Self {
        let older_than = days.map(|d| Timestamp(now.millis().saturating_sub(i64::from(d).saturating_mul(DAY_MILLIS))));
        Self { older_than, max_bytes }
    }

    /// Whether the policy prunes nothing at all.
    pub fn is_empty(&self) -> bool {
        self.older_than.is_none() && self.max_bytes.is_none()
    }
}

/// Why a lineage goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PruneReason {
    /// Older than the cutoff.
    Age,
    /// Taken to fit the size budget.
    Budget,
}

/// A lineage a plan removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedLineage {
    /// Its sessions, by id.
    pub sessions: Vec<SessionId>,
    /// When its newest session last changed.
    pub last_active: Timestamp,
    /// What its sessions hold, in bytes.
    pub bytes: u64,
    /// Why it goes.
    pub reason: PruneReason,
}

/// What a plan removes, oldest lineage first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrunePlan {
    /// The lineages that go.
    pub lineages: Vec<PlannedLineage>,
    /// Lineages old enough that stay because a session of theirs is pinned.
    pub kept_pinned: u64,
    /// Lineages old enough that stay because a process holds a session of theirs.
    pub kept_held: u64,
    /// Lineages old enough that stay because a kept fork shares their history.
    pub kept_shared: u64,
}

impl PrunePlan {
    /// Every session that goes, by id.
    pub fn sessions(&self) -> Vec<SessionId> {
        let mut all: Vec<SessionId> = self.lineages.iter().flat_map(|l| l.sessions.iter().copied()).collect();
        all.sort();
        all
    }
}

/// A lineage while planning.
struct Lineage {
    sessions: Vec<SessionId>,
    last_active: Timestamp,
    bytes: u64,
    pinned: bool,
    held: bool,
    /// Lineages holding forks of this one's sessions.
    dependents: Vec<usize>,
    /// Lineages this one's forks come from.
    depends_on: Vec<usize>,
}

/// Groups the sessions into lineages (see the module's rules), each with
/// its sessions by id; lineages ordered by their first session's id.
pub fn lineages(graph: &PruneGraph) -> Vec<Vec<SessionId>> {
    let (groups, _) = group(graph);
    groups
}

/// The lineages of `graph`, and each session's lineage index.
fn group(graph: &PruneGraph) -> (Vec<Vec<SessionId>>, HashMap<SessionId, usize>) {
    let index: HashMap<SessionId, usize> = graph.sessions.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let mut parent: Vec<usize> = (0..graph.sessions.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (a, b) in &graph.same_lineage {
        if let (Some(&a), Some(&b)) = (index.get(a), index.get(b)) {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            if ra != rb {
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    let mut by_root: BTreeMap<SessionId, Vec<SessionId>> = BTreeMap::new();
    let mut roots: HashMap<usize, Vec<SessionId>> = HashMap::new();
    for (i, s) in graph.sessions.iter().enumerate() {
        roots.entry(root(&mut parent, i)).or_default().push(s.id);
    }
    for (_, mut members) in roots {
        members.sort();
        by_root.insert(members[0], members);
    }
    let groups: Vec<Vec<SessionId>> = by_root.into_values().collect();
    let of = groups.iter().enumerate().flat_map(|(g, members)| members.iter().map(move |s| (*s, g))).collect();
    (groups, of)
}

/// Decides which lineages go under `policy`; see the module's rules.
pub fn plan(graph: &PruneGraph, policy: &PrunePolicy) -> PrunePlan {
    let (groups, of) = group(graph);
    let by_id: HashMap<SessionId, &PruneSession> = graph.sessions.iter().map(|s| (s.id, s)).collect();
    let mut all: Vec<Lineage> = groups
        .into_iter()
        .map(|sessions| {
            let members = sessions.iter().filter_map(|s| by_id.get(s));
            let (mut last_active, mut bytes, mut pinned, mut held) = (Timestamp(i64::MIN), 0u64, false, false);
            for s in members {
                last_active = last_active.max(s.last_active);
                bytes = bytes.saturating_add(s.bytes);
                pinned |= s.pinned;
                held |= s.held;
            }
            Lineage { sessions, last_active, bytes, pinned, held, dependents: Vec::new(), depends_on: Vec::new() }
        })
        .collect();
    for (fork, parent) in &graph.forks {
        if let (Some(&f), Some(&p)) = (of.get(fork), of.get(parent))
            && f != p
        {
            all[p].dependents.push(f);
            all[f].depends_on.push(p);
        }
    }
    let total: u64 = all.iter().map(|l| l.bytes).fold(0, u64::saturating_add);
    let mut plan = PrunePlan::default();
    let mut chosen: Vec<Option<PruneReason>> = vec![None; all.len()];

    if let Some(cutoff) = policy.older_than {
        let old = |l: &Lineage| l.last_active < cutoff;
        let mut kept: Vec<bool> = all.iter().map(|l| !old(l) || l.pinned || l.held).collect();
        // What a kept lineage's forks come from stays: walk up from every kept one.
        let mut stack: Vec<usize> = (0..all.len()).filter(|&i| kept[i]).collect();
        while let Some(i) = stack.pop() {
            for &p in &all[i].depends_on {
                if !kept[p] {
                    kept[p] = true;
                    plan.kept_shared += 1;
                    stack.push(p);
                }
            }
        }
        for (i, l) in all.iter().enumerate() {
            if old(l) && l.pinned {
                plan.kept_pinned += 1;
            } else if old(l) && l.held {
                plan.kept_held += 1;
            }
            if !kept[i] {
                chosen[i] = Some(PruneReason::Age);
            }
        }
    }

    if let Some(budget) = policy.max_bytes {
        let mut left =
            total.saturating_sub(all.iter().zip(&chosen).filter(|(_, c)| c.is_some()).map(|(l, _)| l.bytes).sum());
        let mut order: Vec<usize> = (0..all.len()).collect();
        order.sort_by_key(|&i| (all[i].last_active, all[i].sessions[0]));
        // A lineage may go once every lineage of its forks has gone; a pass
        // that takes a fork may free its parent for the next pass.
        let mut progress = true;
        while left > budget && progress {
            progress = false;
            for &i in &order {
                if left <= budget {
                    break;
                }
                let l = &all[i];
                if chosen[i].is_some() || l.pinned || l.held || l.dependents.iter().any(|&d| chosen[d].is_none()) {
                    continue;
                }
                chosen[i] = Some(PruneReason::Budget);
                left = left.saturating_sub(l.bytes);
                progress = true;
            }
        }
    }

    let mut lineages: Vec<PlannedLineage> = all
        .into_iter()
        .zip(chosen)
        .filter_map(|(l, reason)| {
            reason.map(|reason| PlannedLineage {
                sessions: l.sessions,
                last_active: l.last_active,
                bytes: l.bytes,
                reason,
            })
        })
        .collect();
    lineages.sort_by_key(|l| (l.last_active, l.sessions[0]));
    plan.lineages = lineages;
    plan
}

/// How [`crate::Store::prune`] runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneOptions {
    /// What goes.
    pub policy: PrunePolicy,
    /// Decide and report only: nothing is removed.
    pub dry_run: bool,
    /// A session the caller holds (the one it is about to open): kept
    /// with its lineage, as a held session is.
    pub keep: Option<SessionId>,
}

/// A lineage a prune removed (or, dry, would remove).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrunedLineage {
    /// Its sessions, by id.
    pub sessions: Vec<SessionId>,
    /// Its newest session's title.
    pub title: String,
    /// Its newest session's folder.
    pub cwd: String,
    /// When its newest session last changed.
    pub last_active: Timestamp,
    /// What its sessions hold, in bytes (an attachment it shares with a
    /// kept session counted here too, but not in the prune's `bytes`).
    pub bytes: u64,
    /// Why it goes.
    pub reason: PruneReason,
}

/// How the database's file gave the freed space back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpaceReturned {
    /// The database's size before (see [`crate::usage::DatabaseSpace::bytes`]).
    pub before: u64,
    /// And after; `None` when measuring again failed.
    pub after: Option<u64>,
    /// `incremental` (SQLite's incremental vacuum), `rewritten` (an older
    /// SQLite file turned to incremental vacuum by one `VACUUM`), or
    /// `reused` (PostgreSQL: the server reuses the space for new rows).
    pub how: &'static str,
    /// Why the space was not given back, when it was not (the prune itself
    /// committed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// What a prune removed, or (dry) would remove.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StorePruneReport {
    /// Whether nothing was removed, only decided.
    pub dry_run: bool,
    /// Every session removed, by id.
    pub sessions: Vec<SessionId>,
    /// The bytes removed: the sessions' events and trajectories, and the
    /// attachments no kept session names.
    pub bytes: u64,
    /// The lineages removed, oldest first.
    pub lineages: Vec<PrunedLineage>,
    /// Old lineages kept because a session of theirs is pinned.
    pub kept_pinned: u64,
    /// Old lineages kept because a process holds a session of theirs.
    pub kept_held: u64,
    /// Old lineages kept because a kept fork shares their history.
    pub kept_shared: u64,
    /// The database's space around the prune (not for a dry run, nor
    /// when nothing was removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub space: Option<SpaceReturned>,
}

#[cfg(test)]
mod tests;
