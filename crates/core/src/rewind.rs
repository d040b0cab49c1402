//! The rewind vocabulary: the event `/rewind` appends when a person takes
//! the conversation back to before one of their turns.
//!
//! A rewind never rewrites the transcript. It appends a [`ContextRewound`]
//! event whose `toSeq` names the last event the conversation keeps; the
//! events after it, up to the rewind itself, stay in the store (and in
//! `seri thread`) but leave the working context. Several rewinds compose:
//! an event is out of the working context when some rewind after it goes
//! back to before it. Deciding which events that leaves is
//! `seri-projection`'s job; this module only names the fact.

use serde::{Deserialize, Serialize};

use crate::id::Seq;

/// The conversation was taken back to just after `to_seq`.
///
/// The working context after this event holds the events up to `to_seq`
/// (as any earlier rewind or compaction left them), then the events after
/// this one. A rewind never reaches back past a `context_compacted` event:
/// the run loop refuses one, because the compacted prefix is no longer in
/// the working context to go back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextRewound {
    /// The last seq the conversation keeps: the event just before the user
    /// message whose turn was rewound.
    pub to_seq: Seq,
    /// The user message whose turn (and every turn after it) was rewound.
    pub turn_seq: Seq,
}

impl ContextRewound {
    /// A rewind to before the turn the user message at `turn_seq` opened.
    pub const fn before_turn(turn_seq: Seq) -> Self {
        Self { to_seq: Seq(turn_seq.get().saturating_sub(1)), turn_seq }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, EventBody};
    use crate::id::{AgentId, EventId, SessionId};
    use crate::session::{SessionInfo, SessionSeed};
    use crate::time::Timestamp;
    use crate::tokens::model_visible_chars;

    #[test]
    fn round_trips_as_a_camel_case_context_rewound_event() {
        let body = EventBody::ContextRewound(ContextRewound::before_turn(Seq(7)));
        assert_eq!(body.kind(), "context_rewound");
        assert_eq!(body.to_payload().to_string(), r#"{"toSeq":6,"turnSeq":7}"#);
        let decoded = EventBody::from_payload(body.kind(), body.to_payload().to_string().as_bytes()).unwrap();
        assert_eq!(decoded, body);
    }

    #[test]
    fn is_invisible_to_the_model_and_folds_as_a_no_op() {
        let body = EventBody::ContextRewound(ContextRewound::before_turn(Seq(1)));
        assert_eq!(model_visible_chars(&body), 0);
        let seed = SessionSeed::new(SessionId::from_bytes([1; 16]), AgentId::local(), "/w", Timestamp(0));
        let event =
            Event { id: EventId::from_bytes([2; 16]), session_id: seed.id, seq: Seq(4), at: Timestamp(9), body };
        let folded = SessionInfo::fold(&seed, [&event]);
        let mut expected = SessionInfo::from_seed(&seed);
        (expected.last_seq, expected.updated_at) = (4, Timestamp(9));
        assert_eq!(folded, expected);
    }
}
