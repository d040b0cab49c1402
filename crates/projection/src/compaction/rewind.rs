//! Rewinds in the working context: which events a `context_rewound` event
//! takes out of it.
//!
//! `/rewind` appends a [`seri_core::ContextRewound`] whose `toSeq` is the
//! last event the conversation keeps. An event is out of the working context
//! when some rewind *after* it went back to before it, that is when a later
//! rewind has a `toSeq` below its seq. That one rule composes every rewind
//! of a session, a rewound rewind included: it is what truncating the
//! conversation at each rewind, in order, leaves.
//!
//! Walking a session newest first, it needs one number, the smallest
//! `toSeq` seen so far ([`RewindMask`]), so [`read_working_context`]
//! decides visibility while it pages backwards and never reads further
//! than it did before rewinds existed, except to step past a compaction a
//! rewind left out.
//!
//! [`read_working_context`]: super::read_working_context

use seri_core::{Event, EventBody, Seq};

/// The rewinds seen so far while walking a session's events newest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewindMask {
    /// The smallest `toSeq` of the rewinds visited.
    back_to: Option<Seq>,
}

impl RewindMask {
    /// Visits the next older event and says whether it is in the working
    /// context: no rewind visited before it (so appended after it) went back
    /// past it. A rewind's own `toSeq` counts from then on, whether or not
    /// the rewind itself was rewound.
    pub fn visit(&mut self, event: &Event) -> bool {
        let visible = self.back_to.is_none_or(|to| event.seq <= to);
        if let EventBody::ContextRewound(rewind) = &event.body {
            self.back_to = Some(self.back_to.map_or(rewind.to_seq, |to| to.min(rewind.to_seq)));
        }
        visible
    }
}

/// For each of `events` (a session's events in seq order, or any suffix of
/// them), whether it is in the working context as far as rewinds go.
pub fn rewind_visibility(events: &[Event]) -> Vec<bool> {
    let mut mask = RewindMask::default();
    let mut visible: Vec<bool> = events.iter().rev().map(|e| mask.visit(e)).collect();
    visible.reverse();
    visible
}

/// The events of `events` that no later rewind took out, in seq order.
pub fn visible_events(events: &[Event]) -> Vec<&Event> {
    events.iter().zip(rewind_visibility(events)).filter_map(|(e, shown)| shown.then_some(e)).collect()
}

#[cfg(test)]
mod tests {
    use seri_core::{ContextRewound, EventId, Message, SessionId, Timestamp};

    use super::*;

    fn event(seq: u64, body: EventBody) -> Event {
        Event {
            id: EventId::from_bytes([seq as u8; 16]),
            session_id: SessionId::from_bytes([1; 16]),
            seq: Seq(seq),
            at: Timestamp(0),
            body,
        }
    }

    /// Events 1..=n are messages, except the rewinds given as (at seq, back to seq).
    #[track_caller]
    fn check(n: u64, rewinds: &[(u64, u64)], expect_visible: &[u64]) {
        let events: Vec<Event> = (1..=n)
            .map(|seq| match rewinds.iter().find(|(at, _)| *at == seq) {
                Some((_, to)) => event(seq, EventBody::ContextRewound(ContextRewound::before_turn(Seq(to + 1)))),
                None => event(seq, EventBody::Message(Message::user(format!("m{seq}")))),
            })
            .collect();
        let shown: Vec<u64> = visible_events(&events).into_iter().map(|e| e.seq.get()).collect();
        assert_eq!(shown, expect_visible);
    }

    #[test]
    fn without_rewinds_everything_is_visible() {
        check(3, &[], &[1, 2, 3]);
    }

    #[test]
    fn a_rewind_takes_out_what_came_between_its_target_and_itself() {
        // Back to after seq 2: 3 and 4 leave, the rewind (5) is not conversation but stays visible.
        check(6, &[(5, 2)], &[1, 2, 5, 6]);
    }

    #[test]
    fn rewinds_compose_like_truncating_in_order() {
        // First back to 2 at seq 5, then at seq 8 back to 6: 3 and 4 stay out, 7 leaves.
        check(9, &[(5, 2), (8, 6)], &[1, 2, 5, 6, 8, 9]);
        // A rewind that reaches back past an earlier one: everything after 1 leaves.
        check(9, &[(5, 3), (8, 1)], &[1, 8, 9]);
    }
}
