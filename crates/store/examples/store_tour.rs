//! Opens a store in a temporary directory, appends events, folds
//! `SessionInfo`, creates a continuation atomically and reads a range back,
//! through `seri-store`'s public API only.
//!
//! ```sh
//! cargo run -p seri-store --example store_tour
//! ```
//!
//! The continuation's projection is compiled by `seri-projection` over the
//! store, read by seq range through a small `ThreadEvents` adapter: that is
//! all it takes to put the two crates together.

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use seri_core::{
    Actor, AgentId, ContinuationEdge, ContinueReason, ContinuedFrom, Event, EventBody, Handoff, Message, MessageMeta,
    ModelRef, Seq, SessionId, SessionInfo, Source, StatusChanged, Timestamp, TitleSource, ToolCall, ToolResult, Usage,
};
use seri_projection::{ContinuationInput, Lineage, ThreadEvents, compile_continuation_projection, transcript_lines};
use seri_store::{ManualClock, Reader, SeqRange, SessionQuery, Store, StoreError, StoreOptions};

/// Errors from the store and from the projection compiler, in one box.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A thread of the store, read by seq range: what the projection compiler needs.
struct StoredThread<'r> {
    reader: Reader<'r>,
    session: SessionId,
}

impl ThreadEvents for StoredThread<'_> {
    type Error = StoreError;

    fn events(&self, range: seri_projection::SeqRange) -> Result<Vec<Event>, StoreError> {
        self.reader.events(self.session, SeqRange::between(range.from, range.to))
    }
}

fn main() -> Result<(), BoxError> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("seri.db");
    // The store stamps everything with its clock; a manual one makes the times repeatable.
    let clock = Arc::new(ManualClock::new(Timestamp::parse("2026-11-30T06:00:00Z")?));
    let store = Store::open_with(&path, StoreOptions::with_clock(clock.clone()))?;
    println!("opened {} (schema version {})", store.path().display(), seri_store::SCHEMA_VERSION);

    // A file that is not a seri database is refused before anything is written to it.
    let stranger = dir.path().join("notes.db");
    std::fs::write(&stranger, "just some notes\n")?;
    if let Err(refused) = Store::open(&stranger) {
        println!("refused: {refused}");
    }

    // Every read and write goes through one agent's handle.
    let agent = store.agent(&AgentId::local());
    let seed = agent.new_seed("/home/me/parser");
    agent.create_session(&seed)?;
    let session = seed.id;

    // Appends get seq 1, 2, 3, … with no gaps, in one transaction per call.
    let model = ModelRef::new("anthropic", "claude-sonnet-4-5");
    let appended = agent.append(
        session,
        [
            EventBody::Message(Message::user("Plan the migration to the new schema")),
            EventBody::ToolCall(ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: serde_json::json!({ "path": "schema.sql" }),
            }),
            EventBody::ToolResult(ToolResult {
                tool_call_id: "call_1".into(),
                name: "read_file".into(),
                content: "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);".into(),
                is_error: false,
                facts: None,
            }),
            EventBody::Message(Message {
                meta: Some(Box::new(MessageMeta {
                    usage: Some(Usage { input: 900, cache_read: 4_000, cache_write: 0, output: 120 }),
                    model: Some(model),
                    ..MessageMeta::default()
                })),
                ..Message::assistant("Add the column nullable, backfill it, then make it NOT NULL.")
            }),
            EventBody::StatusChanged(StatusChanged {
                title: Some("Schema migration".into()),
                description: Some("Planned in three steps".into()),
                source: TitleSource::Agent,
            }),
        ],
    )?;
    clock.advance(60_000);
    agent.append(session, [EventBody::Message(Message::user("Good. Now, the deploy: how do we roll it out?"))])?;
    println!("appended seq {} to {} to session {session}", appended[0].seq, appended.len() + 1);

    // SessionInfo is a fold of the seed and the events; the store's view is the same fold.
    let events = agent.events(session, SeqRange::ALL)?;
    let folded = SessionInfo::fold(&agent.seed(session)?, &events);
    let info = agent.info(session)?;
    println!(
        "info: {:?}, {} events, last prompt {} tokens; the same as folding it yourself: {}",
        info.title,
        info.last_seq,
        info.last_usage.map_or(0, |u| u.prompt_tokens()),
        folded == info
    );

    // A continuation: the successor session, the edge and the successor's
    // first two events, in one transaction. All of it commits, or none of it.
    clock.advance(1_000);
    let edge = agent.write(|tx| -> Result<ContinuationEdge, BoxError> {
        let initiating = tx.read().newest_user_message(session)?.ok_or("the session has no user message")?;
        let handoff = Handoff {
            purpose: Some("Migrate the users table without downtime.".into()),
            current_request: Some("Roll out the deploy.".into()),
            decisions: vec!["Nullable column first, backfill, then NOT NULL.".into()],
            ..Handoff::default()
        };
        let lineage = Lineage {
            origin_session_id: session,
            predecessor_session_id: session,
            predecessor_title: info.title.clone(),
            depth: 1,
            reason: ContinueReason::PhaseChange,
        };
        let sources = [Source::SessionEvents { session_id: session, from_seq: Seq(1), to_seq: Seq(4) }];
        let input = ContinuationInput::new(&lineage, &handoff, &sources, initiating.seq);
        let projection = compile_continuation_projection(&input, &StoredThread { reader: tx.read(), session })?;

        let mut successor = tx.new_seed("/home/me/parser");
        successor.title = Some("Deploy the migration".into());
        successor.title_source = Some(TitleSource::Agent);
        tx.create_session(&successor)?;
        let edge = ContinuationEdge {
            id: tx.new_continuation_id(),
            predecessor_session_id: session,
            successor_session_id: successor.id,
            origin_session_id: session,
            tool_call_id: "call_continue_1".into(),
            initiating_event_id: initiating.id,
            reason: lineage.reason,
            manifest: projection.manifest,
            created_at: tx.now(),
        };
        tx.insert_continuation(&edge)?;
        let mut first = Message { actor: Actor::System, ..Message::user(projection.text) };
        first.meta_mut().projection_of = Some(edge.id);
        let mut copied = initiating.body.as_message().cloned().ok_or("the initiating event is not a message")?;
        copied.meta_mut().continued_from =
            Some(ContinuedFrom { session_id: session, event_id: initiating.id, seq: initiating.seq });
        tx.append(successor.id, [EventBody::Message(first), EventBody::Message(copied)])?;
        Ok(edge)
    })?;
    let successor = edge.successor_session_id;
    let predecessor_info = agent.info(session)?;
    println!(
        "continued into {successor}: {:?}; the predecessor now links to {:?}",
        agent.info(successor)?.title,
        predecessor_info.continued_to.map(|link| link.title)
    );

    // A transaction that fails half way leaves nothing behind.
    let before = agent.list_sessions(&SessionQuery::default())?.len();
    let failed = agent.write(|tx| -> Result<(), BoxError> {
        let seed = tx.new_seed("/tmp");
        tx.create_session(&seed)?;
        Err("simulated failure after creating the session".into())
    });
    let after = agent.list_sessions(&SessionQuery::default())?.len();
    println!(
        "a failed write ({}) left {before} sessions at {after}",
        failed.err().map(|e| e.to_string()).unwrap_or_default()
    );

    // Reads by seq range: the successor's first two events, and part of the predecessor.
    let opening = agent.events(successor, SeqRange::between(Seq(1), Seq(2)))?;
    let text = opening.first().and_then(|e| e.body.as_message()).map_or("", |m| m.content.as_str());
    let head: Vec<&str> = text.lines().take(3).collect();
    println!("the successor opens with:\n  {}\n  …", head.join("\n  "));
    let middle = agent.events_page(session, SeqRange::starting_at(Seq(2)), Some(3))?;
    println!("seq 2 to 4 of the predecessor:\n{}", transcript_lines(&middle).trim_end());
    Ok(())
}
