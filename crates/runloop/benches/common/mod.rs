//! What the run loop's benchmarks share: the long sessions they are run on.

#![allow(dead_code, reason = "each benchmark uses its part")]

use seri_core::{CompactionRecap, ContextCompacted, EventBody, Message, ModelRef, Seq, SessionId};
use seri_store::AgentStore;

/// A message of ordinary length: user and assistant in turn.
fn body(n: u64) -> EventBody {
    let text = format!("message {n}: a sentence of ordinary length, with a path like src/parser.rs:{n} in it");
    EventBody::Message(if n.is_multiple_of(2) { Message::user(text) } else { Message::assistant(text) })
}

/// Appends `events` ordinary messages to `session`, then a recap that keeps
/// the newest `kept` of them.
pub(crate) fn fill_and_compact(agent: &AgentStore<'_>, session: SessionId, events: u64, kept: u64) {
    append_history(agent, session, events);
    agent.append(session, [EventBody::ContextCompacted(Box::new(recap(events, kept)))]).unwrap();
}

/// Appends `events` ordinary messages to `session`.
pub(crate) fn append_history(agent: &AgentStore<'_>, session: SessionId, events: u64) {
    let history: Vec<EventBody> = (0..events).map(body).collect();
    for chunk in history.chunks(2_000) {
        agent.append(session, chunk.iter().cloned()).unwrap();
    }
}

/// A recap of all but the newest `kept` of `events`.
pub(crate) fn recap(events: u64, kept: u64) -> ContextCompacted {
    ContextCompacted {
        recap: CompactionRecap {
            goal: "Fix the parser.".into(),
            progress: "Most of it.".into(),
            blockers: String::new(),
            next_steps: "Finish.".into(),
        },
        read: Vec::new(),
        modified: Vec::new(),
        read_unlisted: 0,
        modified_unlisted: 0,
        kept_from_seq: Seq(events - kept + 1),
        evicted_from_seq: Seq(1),
        evicted_to_seq: Seq(events - kept),
        tokens_before: 1_000_000,
        tokens_after: 10_000,
        trigger: Default::default(),
        focus: None,
        model: ModelRef::new("script", "scripted"),
    }
}
