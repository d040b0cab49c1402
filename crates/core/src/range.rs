//! [`SeqRange`]: an inclusive range of seqs of one session, the one range
//! type every crate reads events by.

use std::fmt;

use crate::id::Seq;

/// An inclusive seq range of one session, `from <= to`. `to` may be
/// [`Seq::LAST`]: to the end, however long the session grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeqRange {
    /// The first seq.
    pub from: Seq,
    /// The last seq, inclusive.
    pub to: Seq,
}

impl SeqRange {
    /// Every event of a session.
    pub const ALL: SeqRange = SeqRange { from: Seq::FIRST, to: Seq::LAST };

    /// The range `from..=to`, or `None` when `from` is after `to`.
    pub fn new(from: Seq, to: Seq) -> Option<SeqRange> {
        (from <= to).then_some(SeqRange { from, to })
    }

    /// Seqs `from..=to` (empty when `from` is after `to`).
    pub const fn between(from: Seq, to: Seq) -> SeqRange {
        SeqRange { from, to }
    }

    /// Seqs from `from` to the end.
    pub const fn starting_at(from: Seq) -> SeqRange {
        SeqRange { from, to: Seq::LAST }
    }

    /// The range holding just `seq`.
    pub const fn single(seq: Seq) -> SeqRange {
        SeqRange { from: seq, to: seq }
    }

    /// How many seqs the range holds (0 when `from` is after `to`).
    pub const fn count(&self) -> u64 {
        if self.from.0 > self.to.0 { 0 } else { (self.to.0 - self.from.0).saturating_add(1) }
    }

    /// Whether `seq` is in the range.
    pub fn contains(&self, seq: Seq) -> bool {
        self.from <= seq && seq <= self.to
    }
}

impl Default for SeqRange {
    fn default() -> Self {
        Self::ALL
    }
}

impl fmt::Display for SeqRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.from == self.to {
            write!(f, "seq {}", self.from)
        } else if self.to == Seq::LAST {
            write!(f, "seq {} on", self.from)
        } else {
            write!(f, "seq {} to {}", self.from, self.to)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_count_and_contain_what_they_say() {
        assert_eq!(SeqRange::between(Seq(3), Seq(5)).count(), 3);
        assert_eq!(SeqRange::between(Seq(5), Seq(3)).count(), 0);
        assert_eq!(SeqRange::single(Seq(7)).count(), 1);
        assert!(SeqRange::starting_at(Seq(9)).contains(Seq(1_000_000)));
        assert!(!SeqRange::starting_at(Seq(9)).contains(Seq(8)));
        assert_eq!(SeqRange::new(Seq(2), Seq(1)), None);
        assert_eq!(SeqRange::ALL.to_string(), "seq 1 on");
        assert_eq!(SeqRange::between(Seq(2), Seq(4)).to_string(), "seq 2 to 4");
        assert_eq!(SeqRange::single(Seq(2)).to_string(), "seq 2");
    }
}
