//! Forks by reference: a session that branches from another at a seq and
//! shares the parent's events up to it without copying them.
//!
//! A fork's own events are numbered from the fork point on (`seq + 1`), so
//! reading a fork is reading the parent's events `1..=seq` and then the
//! fork's own, under one numbering. The parent never changes; a fork of a
//! fork, or of a continued session, reads through each edge in turn.

use serde::{Deserialize, Serialize};

use crate::id::{Seq, SessionId};
use crate::time::Timestamp;

/// Who asked for a fork: the surface a person (or a program) used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForkVia {
    /// `seri fork ID[@SEQ]` on the command line.
    Cli,
    /// `/fork` in the REPL.
    Repl,
    /// `POST /api/sessions/{id}/fork` (the web UI's "Fork from here" too).
    Api,
    /// A branch of another agent's session, imported.
    Import,
    /// `session/fork` from an editor, over the Agent Client Protocol.
    Acp,
}

impl ForkVia {
    /// The wire name, e.g. `repl`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ForkVia::Cli => "cli",
            ForkVia::Repl => "repl",
            ForkVia::Api => "api",
            ForkVia::Import => "import",
            ForkVia::Acp => "acp",
        }
    }

    /// The variant named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        [ForkVia::Cli, ForkVia::Repl, ForkVia::Api, ForkVia::Import, ForkVia::Acp]
            .into_iter()
            .find(|v| v.as_str() == name)
    }
}

/// One row of `session_forks`: the edge from a fork to its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkEdge {
    /// The fork.
    pub session_id: SessionId,
    /// The session it branches from.
    pub parent_session_id: SessionId,
    /// The parent's newest event the fork shares: the fork's own events
    /// start at `fork_seq + 1`. 0 shares nothing.
    pub fork_seq: Seq,
    /// When the fork was made.
    pub created_at: Timestamp,
    /// Who asked for it.
    pub via: ForkVia,
}

/// The other side of a fork, as a session's view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionForkLink {
    /// The session on the other side (the parent, or the fork).
    pub session_id: SessionId,
    /// Its current title.
    pub title: String,
    /// The fork point: the parent's newest event the fork shares.
    pub fork_seq: Seq,
    /// When the fork was made.
    pub at: Timestamp,
    /// Who asked for it.
    pub via: ForkVia,
}

/// One stretch of a session's history as a fork reads it: the events
/// `from..=to` of `session` (a `to` of `None`: to its end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistorySegment {
    /// The session whose rows hold the stretch.
    pub session: SessionId,
    /// The first seq of the stretch.
    pub from: Seq,
    /// The last seq, or `None` for the reading session's own open end.
    pub to: Option<Seq>,
}

/// The segments a session's history is read from, oldest first: for a
/// session that is no fork, its own events alone. `chain` holds the fork
/// edges from the session up (its own edge first, then its parent's, …).
///
/// Each ancestor contributes its own events after its own fork point, up to
/// the lowest fork point below it on the way down; an ancestor whose whole
/// share lies before its own fork point contributes nothing.
pub fn history_segments(session: SessionId, chain: &[ForkEdge]) -> Vec<HistorySegment> {
    let own_from = chain.first().map_or(Seq::FIRST, |edge| Seq(edge.fork_seq.get() + 1));
    let mut segments = vec![HistorySegment { session, from: own_from, to: None }];
    let mut bound = chain.first().map(|edge| edge.fork_seq.get());
    for (at, edge) in chain.iter().enumerate() {
        let Some(upto) = bound else { break };
        let parent = edge.parent_session_id;
        let parent_from = chain.get(at + 1).map_or(1, |up| up.fork_seq.get() + 1);
        if upto >= parent_from {
            segments.push(HistorySegment { session: parent, from: Seq(parent_from), to: Some(Seq(upto)) });
        }
        bound = chain.get(at + 1).map(|up| up.fork_seq.get().min(upto));
    }
    segments.reverse();
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> SessionId {
        SessionId::from_bytes(n.to_be_bytes())
    }

    fn edge(fork: u128, parent: u128, seq: u64) -> ForkEdge {
        ForkEdge {
            session_id: id(fork),
            parent_session_id: id(parent),
            fork_seq: Seq(seq),
            created_at: Timestamp(0),
            via: ForkVia::Cli,
        }
    }

    fn check(session: u128, chain: &[ForkEdge], expect: &[(u128, u64, Option<u64>)]) {
        let got: Vec<_> = history_segments(id(session), chain)
            .into_iter()
            .map(|s| (u128::from_be_bytes(*s.session.as_bytes()), s.from.get(), s.to.map(|t| t.get())))
            .collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn a_session_that_is_no_fork_reads_its_own_events() {
        check(1, &[], &[(1, 1, None)]);
    }

    #[test]
    fn a_fork_reads_its_parent_up_to_the_fork_point_then_its_own() {
        check(2, &[edge(2, 1, 10)], &[(1, 1, Some(10)), (2, 11, None)]);
        check(2, &[edge(2, 1, 0)], &[(2, 1, None)]);
    }

    #[test]
    fn a_fork_of_a_fork_reads_through_both_edges() {
        // 3 forks 2 at 15; 2 forked 1 at 10.
        check(3, &[edge(3, 2, 15), edge(2, 1, 10)], &[(1, 1, Some(10)), (2, 11, Some(15)), (3, 16, None)]);
        // 3 forks 2 at 7, inside what 2 shares with 1: 2's own events are not read.
        check(3, &[edge(3, 2, 7), edge(2, 1, 10)], &[(1, 1, Some(7)), (3, 8, None)]);
        check(3, &[edge(3, 2, 10), edge(2, 1, 10)], &[(1, 1, Some(10)), (3, 11, None)]);
    }
}
