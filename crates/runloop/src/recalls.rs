//! Recalls of omitted sources, measured: for each continuation, the reads
//! its successor made of the predecessor's thread (`read` of
//! `thread:PREDECESSOR`), sorted against the continuation's manifest by
//! [`seri_projection::continuation::recalls::classify`].
//!
//! A fold over what the store already holds (the successor's `read` calls
//! with their arguments, the edge's manifest); nothing new is written, so
//! every figure can be recomputed from events. Only reads that succeeded
//! count.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use seri_core::{ContinuationEdge, ContinuationId, ContinueReason, EventBody, SessionId, ToolCallId};
use seri_projection::continuation::recalls::{Recall, RecallCounts, classify};
use seri_store::{AgentStore, SeqRange, StoreError};

/// The `read` verb's name.
const READ: &str = "read";

/// One continuation's recalls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinuationRecalls {
    /// The continuation.
    pub continuation_id: ContinuationId,
    /// The session continued from.
    pub predecessor_session_id: SessionId,
    /// The successor whose reads these are.
    pub successor_session_id: SessionId,
    /// Why it continued.
    pub reason: ContinueReason,
    /// The projection's budget and what it used, in bytes.
    pub budget_bytes: u64,
    /// Bytes of the budget used.
    pub used_bytes: u64,
    /// Bytes of ranges omitted for lack of budget.
    pub omitted_bytes: u64,
    /// Each read, in the order the successor made them.
    pub recalls: Vec<Recall>,
    /// The reads counted by kind.
    pub counts: RecallCounts,
}

/// Recalls across the profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileRecalls {
    /// Continuations looked at.
    pub continuations: u64,
    /// Continuations whose successor read anything back.
    pub with_recalls: u64,
    /// Every read, counted by kind.
    pub totals: RecallCounts,
    /// Every read, by the continuation's reason (`topic_change`, …).
    pub by_reason: BTreeMap<ContinueReason, RecallCounts>,
    /// Each continuation that had any.
    pub each: Vec<ContinuationRecalls>,
}

/// The recalls of the continuation `edge`.
pub fn continuation_recalls(
    store: &AgentStore<'_>,
    edge: &ContinuationEdge,
) -> Result<ContinuationRecalls, StoreError> {
    let manifest = &edge.manifest;
    let predecessor = edge.predecessor_session_id.to_string();
    let mut reads: Vec<(ToolCallId, u64, u64)> = Vec::new();
    let mut failed: HashMap<ToolCallId, bool> = HashMap::new();
    store.each_body(edge.successor_session_id, SeqRange::ALL, &mut |_, body| match body {
        EventBody::ToolCall(call) if call.name == READ => {
            if let Some((from, to)) = thread_read(&call.arguments, &predecessor, manifest.initiating_seq.get()) {
                reads.push((call.id, from, to));
            }
        }
        EventBody::ToolResult(result) if result.name == READ => {
            failed.insert(result.tool_call_id, result.is_error);
        }
        _ => {}
    })?;
    // A read without a result (its run was cut short) or that failed read nothing.
    let recalls: Vec<Recall> = reads
        .into_iter()
        .filter(|(id, _, _)| failed.get(id) == Some(&false))
        .map(|(_, from, to)| classify(manifest, from, to))
        .collect();
    Ok(ContinuationRecalls {
        continuation_id: edge.id,
        predecessor_session_id: edge.predecessor_session_id,
        successor_session_id: edge.successor_session_id,
        reason: edge.reason,
        budget_bytes: manifest.budget_bytes,
        used_bytes: manifest.used_bytes,
        omitted_bytes: manifest.omitted.iter().map(|r| r.bytes).sum(),
        counts: RecallCounts::of(&recalls),
        recalls,
    })
}

/// The recalls of every continuation of the profile's agent.
pub fn profile_recalls(store: &AgentStore<'_>) -> Result<ProfileRecalls, StoreError> {
    let mut profile = ProfileRecalls::default();
    for edge in store.continuations()? {
        let recalls = continuation_recalls(store, &edge)?;
        profile.continuations += 1;
        profile.totals.merge(&recalls.counts);
        profile.by_reason.entry(edge.reason).or_default().merge(&recalls.counts);
        if recalls.counts.total() > 0 {
            profile.with_recalls += 1;
            profile.each.push(recalls);
        }
    }
    Ok(profile)
}

/// The recalls of the continuations into and out of `session` (each one,
/// whether its successor read anything back or not): its successors' edges,
/// then the edge it was continued through.
pub fn session_recalls(store: &AgentStore<'_>, session: SessionId) -> Result<ProfileRecalls, StoreError> {
    let mut edges = store.continuations_from(session)?;
    edges.extend(store.continuation_into(session)?);
    let mut report = ProfileRecalls::default();
    for edge in edges {
        let recalls = continuation_recalls(store, &edge)?;
        report.continuations += 1;
        report.totals.merge(&recalls.counts);
        report.by_reason.entry(edge.reason).or_default().merge(&recalls.counts);
        report.with_recalls += u64::from(recalls.counts.total() > 0);
        report.each.push(recalls);
    }
    Ok(report)
}

/// The seqs a `read` call's arguments ask of thread `predecessor` (its full
/// id, or a prefix of it as people and models write them), or `None` for a
/// read of anything else. The range defaults as the verb's do: from 1 to
/// the thread's end, which for the projection is the initiating message.
fn thread_read(arguments: &serde_json::Value, predecessor: &str, end: u64) -> Option<(u64, u64)> {
    let target = arguments.get("target")?.as_str()?.trim();
    let id = target.strip_prefix("thread:")?.trim();
    let hex = |text: &str| -> String { text.chars().filter(|c| *c != '-').flat_map(char::to_lowercase).collect() };
    let (wanted, whole) = (hex(id), hex(predecessor));
    if wanted.len() < 4 || !whole.starts_with(&wanted) {
        return None;
    }
    let seq = |key: &str| arguments.get(key).and_then(serde_json::Value::as_u64);
    let from = seq("fromSeq").unwrap_or(1).max(1);
    let to = seq("toSeq").unwrap_or(end.max(from));
    Some((from, to))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_read_of_the_predecessor_by_id_or_prefix_gives_its_range() {
        let id = "01a235a6-4fb0-7000-8000-000000000001";
        let read = |args| thread_read(&args, id, 40);
        assert_eq!(read(json!({ "target": format!("thread:{id}"), "fromSeq": 3, "toSeq": 9 })), Some((3, 9)));
        assert_eq!(read(json!({ "target": "thread:01A235A6-4F", "fromSeq": 3 })), Some((3, 40)));
        assert_eq!(read(json!({ "target": "thread:01a235a64fb0" })), Some((1, 40)));
        assert_eq!(read(json!({ "target": "thread:01a3" })), None, "another thread");
        assert_eq!(read(json!({ "target": "thread:01a" })), None, "too short to say");
        assert_eq!(read(json!({ "target": "attachment:x" })), None);
        assert_eq!(read(json!({ "target": 7 })), None);
    }
}
