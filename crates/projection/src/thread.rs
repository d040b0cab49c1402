//! Reading a thread by seq range: the only access the compilers have to a
//! session's events.
//!
//! A projection must cost what it includes, not what the thread holds, so
//! the compiler never receives a whole transcript. It asks a
//! [`ThreadEvents`] for the ranges it needs: the store answers with one
//! indexed query per range, tests and benchmarks with a slice or a generator.

use std::convert::Infallible;

use seri_core::{Event, EventBody, Seq};

pub use seri_core::SeqRange;

/// Read access to one thread's events by seq range.
///
/// The store implements it over `session_events`; a slice of events
/// implements it for tests. Implementations return the events whose seq is
/// in the range, in seq order; the compilers check that every seq asked for
/// came back and report a clear error otherwise.
pub trait ThreadEvents {
    /// Why a read failed.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The events with seq in `range`, in seq order.
    fn events(&self, range: SeqRange) -> Result<Vec<Event>, Self::Error>;

    /// Hands `visit` the seq and body of each event with seq in `range`, in
    /// seq order, one at a time: a reader that can stream (the store) never
    /// holds them all, and need not decode what a body does not say (the
    /// event's id, its session, its time). The default reads them with
    /// [`ThreadEvents::events`].
    fn for_each_body(
        &self,
        range: SeqRange,
        visit: &mut (dyn FnMut(Seq, EventBody) + Send),
    ) -> Result<(), Self::Error> {
        for event in self.events(range)? {
            visit(event.seq, event.body);
        }
        Ok(())
    }

    /// The newest `limit` [context marks](is_context_mark) with seq at most
    /// `upto`, in seq order: what decides where the working context starts.
    ///
    /// The default filters [`ThreadEvents::events`]; the store answers from
    /// an index that holds only these events, so finding the newest recap
    /// of a long history reads a few rows, not the history.
    fn context_marks(&self, upto: Seq, limit: u64) -> Result<Vec<Event>, Self::Error> {
        if upto.get() == 0 {
            return Ok(Vec::new());
        }
        let mut marks: Vec<Event> =
            self.events(SeqRange { from: Seq::FIRST, to: upto })?.into_iter().filter(is_context_mark).collect();
        let excess = marks.len().saturating_sub(usize::try_from(limit).unwrap_or(usize::MAX));
        marks.drain(..excess);
        Ok(marks)
    }
}

/// Whether an event changes where the working context starts: a recap
/// (`context_compacted`) or a rewind (`context_rewound`).
pub fn is_context_mark(event: &Event) -> bool {
    matches!(event.body, EventBody::ContextCompacted(_) | EventBody::ContextRewound(_))
}

/// A slice of events in seq order (not necessarily starting at seq 1).
impl ThreadEvents for [Event] {
    type Error = Infallible;

    fn events(&self, range: SeqRange) -> Result<Vec<Event>, Infallible> {
        let start = self.partition_point(|e| e.seq < range.from);
        let end = self.partition_point(|e| e.seq <= range.to);
        Ok(self.get(start..end).unwrap_or_default().to_vec())
    }
}

impl ThreadEvents for Vec<Event> {
    type Error = Infallible;

    fn events(&self, range: SeqRange) -> Result<Vec<Event>, Infallible> {
        self.as_slice().events(range)
    }
}

impl<T: ThreadEvents + ?Sized> ThreadEvents for &T {
    type Error = T::Error;

    fn events(&self, range: SeqRange) -> Result<Vec<Event>, Self::Error> {
        (**self).events(range)
    }

    fn for_each_body(
        &self,
        range: SeqRange,
        visit: &mut (dyn FnMut(Seq, EventBody) + Send),
    ) -> Result<(), Self::Error> {
        (**self).for_each_body(range, visit)
    }

    fn context_marks(&self, upto: Seq, limit: u64) -> Result<Vec<Event>, Self::Error> {
        (**self).context_marks(upto, limit)
    }
}

#[cfg(test)]
mod tests {
    use seri_core::{EventBody, EventId, Message, Seq, SessionId, Timestamp};

    use super::*;

    fn thread(seqs: impl IntoIterator<Item = u64>) -> Vec<Event> {
        seqs.into_iter()
            .map(|seq| Event {
                id: EventId::from_bytes([0; 16]),
                session_id: SessionId::from_bytes([0; 16]),
                seq: Seq(seq),
                at: Timestamp(0),
                body: EventBody::Message(Message::user(seq.to_string())),
            })
            .collect()
    }

    #[track_caller]
    fn check(thread: &[Event], from: u64, to: u64, expected: &[u64]) {
        let range = SeqRange::new(Seq(from), Seq(to)).unwrap();
        let got: Vec<u64> = thread.events(range).unwrap().iter().map(|e| e.seq.0).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn slices_answer_ranges_by_seq() {
        let t = thread(1..=10);
        check(&t, 1, 10, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        check(&t, 4, 6, &[4, 5, 6]);
        check(&t, 9, 20, &[9, 10]);
        check(&t, 11, 20, &[]);
        check(&thread(5..=8), 1, 6, &[5, 6]);
    }

    #[test]
    fn ranges() {
        assert_eq!(SeqRange::new(Seq(3), Seq(2)), None);
        let r = SeqRange::new(Seq(3), Seq(5)).unwrap();
        assert_eq!((r.count(), r.contains(Seq(5)), r.contains(Seq(6))), (3, true, false));
        assert_eq!(r.to_string(), "seq 3 to 5");
        assert_eq!(SeqRange::single(Seq(4)).to_string(), "seq 4");
    }
}
