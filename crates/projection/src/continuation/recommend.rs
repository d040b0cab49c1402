//! Recommended sources: the ranges of a thread worth citing when it
//! continues, proposed so the agent may cite them as they are.
//!
//! Pure and rule-based. The thread is cut into exchanges (a message from a
//! person or a trigger and everything up to the next one); an exchange is
//! recommended when
//! - a call changed files in it (`write_file` or `edit` that succeeded):
//!   the successor will meet those files;
//! - the plan or the session's status was recorded in it: decisions;
//! - it is the latest exchange before the message being answered: the
//!   current request's context.
//!
//! At most [`MAX_RECOMMENDED`] are proposed, the newest, oldest first.

use std::collections::{BTreeSet, HashMap};

use seri_core::{Event, EventBody, Seq, ToolCallId};

/// The most ranges proposed.
pub const MAX_RECOMMENDED: usize = 6;

/// Why a range is worth citing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecommendedWhy {
    /// Calls in it changed these files.
    FilesChanged(BTreeSet<String>),
    /// The plan or the status was recorded in it.
    Decisions,
    /// The exchange just before the message being answered.
    LatestExchange,
}

/// A range worth citing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recommended {
    /// The first seq.
    pub from_seq: Seq,
    /// The last seq, inclusive.
    pub to_seq: Seq,
    /// Every reason it is proposed.
    pub why: Vec<RecommendedWhy>,
}

/// The tools whose successful calls change files.
const FILE_CHANGERS: [&str; 2] = ["write_file", "edit"];

/// The ranges of `events` (a thread's, in seq order, ending before the
/// message at `initiating`) worth citing.
pub fn recommended_sources(events: &[Event], initiating: Seq) -> Vec<Recommended> {
    let events: Vec<&Event> = events.iter().filter(|e| e.seq < initiating).collect();
    let starts: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.body.as_message().is_some_and(seri_core::Message::is_from_user_or_trigger))
        .map(|(i, _)| i)
        .collect();
    let failed: HashMap<&ToolCallId, bool> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some((&r.tool_call_id, r.is_error)),
            _ => None,
        })
        .collect();
    let mut found = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(events.len(), |next| *next);
        let exchange = &events[start..end];
        let (Some(first), Some(last)) = (exchange.first(), exchange.last()) else { continue };
        let mut why = Vec::new();
        let files: BTreeSet<String> = exchange
            .iter()
            .filter_map(|e| match &e.body {
                EventBody::ToolCall(call)
                    if FILE_CHANGERS.contains(&call.name.as_str()) && failed.get(&call.id) == Some(&false) =>
                {
                    call.arguments.get("path").and_then(|p| p.as_str()).map(str::to_owned)
                }
                _ => None,
            })
            .collect();
        if !files.is_empty() {
            why.push(RecommendedWhy::FilesChanged(files));
        }
        if exchange.iter().any(|e| matches!(e.body, EventBody::PlanUpdated(_) | EventBody::StatusChanged(_))) {
            why.push(RecommendedWhy::Decisions);
        }
        if n + 1 == starts.len() {
            why.push(RecommendedWhy::LatestExchange);
        }
        if !why.is_empty() {
            found.push(Recommended { from_seq: first.seq, to_seq: last.seq, why });
        }
    }
    let skip = found.len().saturating_sub(MAX_RECOMMENDED);
    found.into_iter().skip(skip).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use seri_core::{EventId, Message, PlanUpdated, SessionId, Timestamp, ToolCall, ToolResult};

    use super::*;

    fn event(seq: u64, body: EventBody) -> Event {
        Event {
            id: EventId::from_bytes([0; 16]),
            session_id: SessionId::from_bytes([1; 16]),
            seq: Seq(seq),
            at: Timestamp(0),
            body,
        }
    }

    fn call(id: &str, name: &str, path: &str) -> EventBody {
        EventBody::ToolCall(ToolCall {
            id: ToolCallId(id.into()),
            name: name.into(),
            arguments: json!({ "path": path }),
        })
    }

    fn result(id: &str, is_error: bool) -> EventBody {
        EventBody::ToolResult(ToolResult {
            tool_call_id: ToolCallId(id.into()),
            name: "x".into(),
            content: String::new(),
            is_error,
            facts: None,
        })
    }

    fn user(text: &str) -> EventBody {
        EventBody::Message(Message::user(text))
    }

    fn assistant(text: &str) -> EventBody {
        EventBody::Message(Message::assistant(text))
    }

    #[test]
    fn exchanges_that_changed_files_recorded_decisions_or_came_last_are_proposed() {
        let events: Vec<Event> = [
            user("look around"), // 1: read only
            call("r", "read_file", "a.rs"),
            result("r", false),
            assistant("seen"),
            user("fix it"), // 5: changed b.rs (and a failed edit of c.rs)
            call("w", "write_file", "b.rs"),
            result("w", false),
            call("e", "edit", "c.rs"),
            result("e", true),
            assistant("fixed"),
            user("plan the rest"), // 11: decisions
            EventBody::PlanUpdated(PlanUpdated { plan: None }),
            assistant("planned"),
            user("and now?"), // 14: the latest exchange
            assistant("ready"),
            user("new topic"), // 16: the message being answered
        ]
        .into_iter()
        .enumerate()
        .map(|(i, body)| event(i as u64 + 1, body))
        .collect();
        let found = recommended_sources(&events, Seq(16));
        let shape: Vec<(u64, u64, usize)> =
            found.iter().map(|r| (r.from_seq.get(), r.to_seq.get(), r.why.len())).collect();
        assert_eq!(shape, [(5, 10, 1), (11, 13, 1), (14, 15, 1)]);
        assert_eq!(found[0].why, [RecommendedWhy::FilesChanged(["b.rs".to_owned()].into())]);
        assert_eq!(found[1].why, [RecommendedWhy::Decisions]);
        assert_eq!(found[2].why, [RecommendedWhy::LatestExchange]);
        assert!(recommended_sources(&events[..0], Seq(1)).is_empty());
    }

    #[test]
    fn only_the_newest_are_proposed() {
        let mut events = Vec::new();
        for n in 0..10u64 {
            events.push(event(n * 3 + 1, user("change")));
            events.push(event(n * 3 + 2, call(&format!("w{n}"), "edit", "f.rs")));
            events.push(event(n * 3 + 3, result(&format!("w{n}"), false)));
        }
        let found = recommended_sources(&events, Seq(31));
        assert_eq!(found.len(), MAX_RECOMMENDED);
        assert_eq!(found[0].from_seq, Seq(13));
    }
}
