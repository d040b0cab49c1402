//! Which ranges of the predecessor's thread the sources cite, merged.
//!
//! Exposed so a caller can prefetch exactly what the compiler will read for
//! excerpts (the recent exchanges are found by walking back from the
//! initiating message in pages of [`READ_PAGE_EVENTS`](super::READ_PAGE_EVENTS)).

use seri_core::{Seq, SessionId, Source};

use crate::thread::SeqRange;

/// Why a cited range cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CitationError {
    /// A `session_events` source whose first seq is after its last.
    #[error("the source citing thread {session_id} runs backwards: fromSeq {from} is after toSeq {to}")]
    Backwards {
        /// The cited thread.
        session_id: SessionId,
        /// The first seq given.
        from: Seq,
        /// The last seq given.
        to: Seq,
    },
    /// A source citing seq 0, which no thread has.
    #[error("a source cites seq 0 of thread {session_id}: seqs start at 1")]
    SeqZero {
        /// The cited thread.
        session_id: SessionId,
    },
}

/// The ranges of `thread` that `sources` cite, sorted, with overlapping and
/// adjacent ranges merged (`3..=5` and `6..=8` become `3..=8`). Sources of
/// other threads are checked but not returned: a projection lists them as
/// pointers and loads nothing from them.
pub fn cited_ranges(thread: SessionId, sources: &[Source]) -> Result<Vec<SeqRange>, CitationError> {
    Ok(cited_groups(thread, sources)?.into_iter().map(|g| g.range).collect())
}

/// A merged cited range and the distinct citations it was merged from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CitedGroup {
    /// The merged range.
    pub(crate) range: SeqRange,
    /// The citations inside it, sorted, without repeats.
    pub(crate) parts: Vec<SeqRange>,
}

/// [`cited_ranges`], with the citations each merged range came from, so a
/// range too large as a whole can still load the citations that fit alone.
pub(crate) fn cited_groups(thread: SessionId, sources: &[Source]) -> Result<Vec<CitedGroup>, CitationError> {
    let mut ranges = Vec::new();
    for source in sources {
        let (session_id, from, to) = match source {
            Source::SessionEvents { session_id, from_seq, to_seq } => (*session_id, *from_seq, *to_seq),
            Source::SessionEvent { session_id, seq } => (*session_id, *seq, *seq),
            Source::Resource { .. } | Source::Memory { .. } => continue,
        };
        if from.0 == 0 {
            return Err(CitationError::SeqZero { session_id });
        }
        let range = SeqRange::new(from, to).ok_or(CitationError::Backwards { session_id, from, to })?;
        if session_id == thread {
            ranges.push(range);
        }
    }
    Ok(merge(ranges))
}

/// Sorts `ranges` and merges the ones that overlap or touch.
fn merge(mut ranges: Vec<SeqRange>) -> Vec<CitedGroup> {
    ranges.sort_unstable();
    ranges.dedup();
    let mut merged: Vec<CitedGroup> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.from.0 <= last.range.to.0.saturating_add(1) => {
                last.range.to = last.range.to.max(range.to);
                last.parts.push(range);
            }
            _ => merged.push(CitedGroup { range, parts: vec![range] }),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREAD: SessionId = SessionId::from_bytes([1; 16]);
    const OTHER: SessionId = SessionId::from_bytes([2; 16]);

    fn events(from: u64, to: u64) -> Source {
        Source::SessionEvents { session_id: THREAD, from_seq: Seq(from), to_seq: Seq(to) }
    }

    fn event(seq: u64) -> Source {
        Source::SessionEvent { session_id: THREAD, seq: Seq(seq) }
    }

    #[track_caller]
    fn check(sources: &[Source], expected: &[(u64, u64)]) {
        let got: Vec<(u64, u64)> = cited_ranges(THREAD, sources).unwrap().iter().map(|r| (r.from.0, r.to.0)).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn overlapping_and_adjacent_ranges_merge() {
        check(&[], &[]);
        check(&[events(3, 5), events(6, 8)], &[(3, 8)]);
        check(&[events(6, 8), events(3, 5), event(10)], &[(3, 8), (10, 10)]);
        check(&[events(3, 9), events(4, 5)], &[(3, 9)]);
        check(&[events(3, 5), event(5), event(6), event(20)], &[(3, 6), (20, 20)]);
        check(&[event(u64::MAX), event(u64::MAX - 1)], &[(u64::MAX - 1, u64::MAX)]);
    }

    #[test]
    fn other_threads_and_pointers_are_not_loaded() {
        check(
            &[
                Source::Resource { uri: "hm://x".into() },
                Source::Memory { path: "~/memory/notes.md".into() },
                Source::SessionEvents { session_id: OTHER, from_seq: Seq(1), to_seq: Seq(4) },
                event(2),
            ],
            &[(2, 2)],
        );
    }

    #[test]
    fn bad_ranges_are_refused_with_their_thread() {
        let err = cited_ranges(THREAD, &[events(5, 3)]).unwrap_err();
        assert_eq!(err, CitationError::Backwards { session_id: THREAD, from: Seq(5), to: Seq(3) });
        assert!(err.to_string().contains("fromSeq 5 is after toSeq 3"), "{err}");
        let err = cited_ranges(THREAD, &[Source::SessionEvent { session_id: OTHER, seq: Seq(0) }]).unwrap_err();
        assert_eq!(err, CitationError::SeqZero { session_id: OTHER });
    }
}
