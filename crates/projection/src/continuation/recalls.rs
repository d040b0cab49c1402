//! Recalls: a successor reading back (`read` of `thread:PREDECESSOR`) a part
//! of its predecessor's thread. Measured against the continuation's
//! manifest, a recall says whether the budget was right: reading back an
//! omitted range means the budget was too small for what the successor
//! needed; reading a range the projection never meant to carry (neither
//! cited nor recent) means the handoff missed it; reading back what was
//! already included costs the successor twice.
//!
//! Pure: the caller finds the reads (the successor's `read` calls) and the
//! manifest; [`classify`] sorts each read.

use serde::Serialize;
use seri_core::{ManifestRange, SessionContinuationManifest};

/// How a read of the predecessor's thread relates to what the projection carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecallKind {
    /// It overlaps a range the projection omitted for lack of budget.
    Omitted,
    /// It reaches seqs the projection neither carried nor omitted.
    NotIncluded,
    /// Everything it read was already in the projection.
    AlreadyIncluded,
}

/// One read of the predecessor's thread, sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recall {
    /// The first seq read.
    pub from_seq: u64,
    /// The last seq read.
    pub to_seq: u64,
    /// How it relates to the projection.
    pub kind: RecallKind,
}

/// The reads of one continuation, counted by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallCounts {
    /// Reads that overlapped an omitted range.
    pub omitted: u64,
    /// Reads of seqs the projection neither carried nor omitted.
    pub not_included: u64,
    /// Reads of what the projection already carried.
    pub already_included: u64,
}

impl RecallCounts {
    /// Counts `recalls`.
    pub fn of(recalls: &[Recall]) -> Self {
        let mut counts = Self::default();
        for recall in recalls {
            counts.add(recall.kind, 1);
        }
        counts
    }

    /// Adds `n` reads of `kind`.
    pub fn add(&mut self, kind: RecallKind, n: u64) {
        match kind {
            RecallKind::Omitted => self.omitted += n,
            RecallKind::NotIncluded => self.not_included += n,
            RecallKind::AlreadyIncluded => self.already_included += n,
        }
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &RecallCounts) {
        self.omitted += other.omitted;
        self.not_included += other.not_included;
        self.already_included += other.already_included;
    }

    /// Every read.
    pub fn total(&self) -> u64 {
        self.omitted + self.not_included + self.already_included
    }
}

/// Sorts a read of seqs `from..=to` of the predecessor's thread.
pub fn classify(manifest: &SessionContinuationManifest, from: u64, to: u64) -> Recall {
    let (from, to) = (from.min(to), from.max(to));
    let overlaps = |r: &ManifestRange| r.from_seq.get() <= to && from <= r.to_seq.get();
    let kind = if manifest.omitted.iter().any(overlaps) {
        RecallKind::Omitted
    } else if covered(&manifest.included, from, to) {
        RecallKind::AlreadyIncluded
    } else {
        RecallKind::NotIncluded
    };
    Recall { from_seq: from, to_seq: to, kind }
}

/// Whether `ranges` together hold every seq of `from..=to`.
fn covered(ranges: &[ManifestRange], from: u64, to: u64) -> bool {
    let mut spans: Vec<(u64, u64)> = ranges.iter().map(|r| (r.from_seq.get(), r.to_seq.get())).collect();
    spans.sort_unstable();
    let mut next = from;
    for (start, end) in spans {
        if start > next {
            break;
        }
        if end >= next {
            next = end.saturating_add(1);
        }
        if next > to {
            return true;
        }
    }
    next > to
}

#[cfg(test)]
mod tests {
    use seri_core::{ProjectionPart, Seq, SessionId};

    use super::*;

    fn range(part: ProjectionPart, from: u64, to: u64) -> ManifestRange {
        ManifestRange { part, from_seq: Seq(from), to_seq: Seq(to), bytes: 10 }
    }

    fn manifest() -> SessionContinuationManifest {
        let id = SessionId::from_bytes([1; 16]);
        SessionContinuationManifest {
            format_version: 1,
            budget_bytes: 100,
            used_bytes: 50,
            projection_bytes: 400,
            origin_session_id: id,
            predecessor_session_id: id,
            depth: 1,
            initiating_seq: Seq(40),
            sources: Vec::new(),
            // Cited 5..=9 and the exchanges 30..=39 were carried; 10..=14 was omitted.
            included: vec![range(ProjectionPart::Excerpt, 5, 9), range(ProjectionPart::RecentExchange, 30, 39)],
            omitted: vec![range(ProjectionPart::Excerpt, 10, 14)],
        }
    }

    #[track_caller]
    fn check(from: u64, to: u64, expect: RecallKind) {
        assert_eq!(
            classify(&manifest(), from, to),
            Recall { from_seq: from.min(to), to_seq: from.max(to), kind: expect }
        );
    }

    #[test]
    fn a_read_is_sorted_by_what_the_projection_carried() {
        check(10, 12, RecallKind::Omitted);
        check(8, 11, RecallKind::Omitted);
        check(1, 40, RecallKind::Omitted);
        check(15, 20, RecallKind::NotIncluded);
        check(1, 4, RecallKind::NotIncluded);
        check(35, 45, RecallKind::NotIncluded);
        check(5, 9, RecallKind::AlreadyIncluded);
        check(31, 33, RecallKind::AlreadyIncluded);
        check(9, 5, RecallKind::AlreadyIncluded);
    }

    #[test]
    fn adjacent_included_ranges_cover_a_read_across_them() {
        let mut m = manifest();
        m.included.push(range(ProjectionPart::RecentExchange, 15, 29));
        assert_eq!(classify(&m, 15, 39).kind, RecallKind::AlreadyIncluded);
        assert_eq!(classify(&m, 14, 39).kind, RecallKind::Omitted);
        let counts = RecallCounts::of(&[classify(&m, 15, 39), classify(&m, 1, 2), classify(&m, 1, 2)]);
        assert_eq!((counts.already_included, counts.not_included, counts.total()), (1, 2, 3));
    }
}
