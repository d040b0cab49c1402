//! Reads a schedule's store, after the fact, into the checker's types:
//! through the `seri-store` crate's public API, opened with the same URL or
//! profile the servers and CLIs used.

use std::path::Path;

use seri_core::{Actor, AgentId, EventBody, Role, SeqRange};
use seri_store::{JobState, SessionQuery, Store, StoreOptions};

use super::check::{JobPlace, Kind, Stored, StoredEvent, StoredJob, StoredSession};

/// Opens the store: PostgreSQL at `url`, else the profile's `seri.db`.
pub(crate) fn open(url: Option<&str>, home: &Path) -> Result<Store, String> {
    let file = home.join("seri.db");
    Store::open_url(url, &file, StoreOptions::default()).map_err(|e| format!("cannot open the store: {e}"))
}

/// Whether any job is still queued or running (the queue has not drained).
pub(crate) fn jobs_pending(store: &Store) -> Result<usize, String> {
    let jobs = store.jobs().map_err(|e| format!("cannot read the jobs: {e}"))?;
    Ok(jobs.iter().filter(|j| j.state != JobState::Done).count())
}

/// Every session of the local agent with its events, and every job.
pub(crate) fn read(store: &Store) -> Result<Stored, String> {
    let agent = store.agent(&AgentId::local());
    let failed = |what: &str, e: seri_store::StoreError| format!("cannot read {what}: {e}");
    let summaries = agent.list_sessions(&SessionQuery::default()).map_err(|e| failed("the sessions", e))?;
    let mut sessions = Vec::with_capacity(summaries.len());
    for summary in summaries {
        let events = agent.events(summary.id, SeqRange::ALL).map_err(|e| failed("a session's events", e))?;
        let predecessor = agent
            .continuation_into(summary.id)
            .map_err(|e| failed("a continuation edge", e))?
            .map(|edge| edge.predecessor_session_id.to_string());
        let events = events
            .into_iter()
            .map(|event| StoredEvent { seq: event.seq.0, id: event.id.to_string(), kind: kind(event.body) })
            .collect();
        sessions.push(StoredSession { id: summary.id.to_string(), predecessor, events });
    }
    let jobs = store
        .jobs()
        .map_err(|e| failed("the jobs", e))?
        .into_iter()
        .map(|job| StoredJob {
            id: job.id,
            session: job.session_id.to_string(),
            place: match job.state {
                JobState::Queued => JobPlace::Queued,
                JobState::Running => JobPlace::Running,
                JobState::Done => JobPlace::Done,
            },
            text: job.request["message"]["content"].as_str().unwrap_or("").to_owned(),
            posted_event: job.posted_event_id.map(|e| e.to_string()),
            // As the column keeps it: the checker reads the stored words.
            outcome: job.outcome.and_then(|o| serde_json::to_value(o).ok()),
        })
        .collect();
    Ok(Stored { sessions, jobs })
}

fn kind(body: EventBody) -> Kind {
    match body {
        EventBody::Message(message) => match (message.role, message.actor) {
            (Role::User, Actor::User | Actor::Trigger) => Kind::Person {
                copy_of: message.meta().continued_from.map(|c| c.event_id.to_string()),
                text: message.content,
            },
            (Role::Assistant, _) => Kind::Answer { text: message.content },
            (Role::User, Actor::Agent | Actor::System) => Kind::Other,
        },
        EventBody::ToolCall(call) => Kind::Call { id: call.id.as_str().to_owned(), name: call.name },
        EventBody::ContextCompacted(_) => Kind::Compacted,
        EventBody::ToolResult(result) => Kind::Result { call_id: result.tool_call_id.as_str().to_owned() },
        _ => Kind::Other,
    }
}
