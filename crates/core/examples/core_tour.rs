//! Builds a session's events by hand and folds them into a `SessionInfo`,
//! the way any user of `seri-core` would, through its public API only.
//!
//! Core reads no clock and no random source, so this example supplies every
//! id and timestamp itself. It shows the three things core is for: the event
//! model (typed bodies that round-trip through their stored JSON payload),
//! the fold (events in, a view out, never an error), and the context
//! estimate that decides when a working context is full.
//!
//! ```sh
//! cargo run -p seri-core --example core_tour
//! ```

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use seri_core::{
    AgentId, ContextEstimate, Event, EventBody, EventId, Message, MessageMeta, ModelRef, Plan, PlanStep, PlanUpdated,
    Seq, SessionId, SessionInfo, SessionSeed, StatusChanged, StepStatus, Timestamp, TitleSource, ToolCall, ToolResult,
    Usage, model_context_window,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The caller owns time and randomness: a fixed start and fixed "random" bytes.
    let start = Timestamp::parse("2026-11-30T06:00:00Z")?;
    let session = SessionId::v7(u64::try_from(start.millis())?, [7; 10]);
    let seed = SessionSeed::new(session, AgentId::local(), "/home/me/parser", start);

    let model = ModelRef::new("anthropic", "claude-sonnet-4-5");
    let bodies = vec![
        EventBody::Message(Message::user("Why does `parse(\"\")` panic?\nIt should return an error.")),
        EventBody::ToolCall(ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: serde_json::json!({ "path": "src/parser.rs" }),
        }),
        EventBody::ToolResult(ToolResult {
            tool_call_id: "call_1".into(),
            name: "read_file".into(),
            content: "41 | let first = tokens[0];\n42 | // …".into(),
            is_error: false,
            facts: None,
        }),
        EventBody::Message(Message {
            meta: Some(Box::new(MessageMeta {
                usage: Some(Usage { input: 1_200, cache_read: 8_000, cache_write: 300, output: 90 }),
                model: Some(model.clone()),
                stop_reason: Some("end_turn".into()),
                ..MessageMeta::default()
            })),
            ..Message::assistant("Line 41 indexes an empty token list. I will match on `tokens.first()`.")
        }),
        EventBody::StatusChanged(StatusChanged {
            title: Some("Make the parser total".into()),
            description: Some("Fixing the empty-input panic".into()),
            source: TitleSource::Agent,
        }),
        EventBody::PlanUpdated(PlanUpdated {
            plan: Some(Plan {
                steps: vec![
                    PlanStep { text: "Match on tokens.first()".into(), status: StepStatus::InProgress },
                    PlanStep { text: "Add a regression test".into(), status: StepStatus::Pending },
                ],
                owner_run_id: None,
            }),
        }),
        // A type this build does not know (a newer seri wrote it): kept verbatim, folded as a no-op.
        EventBody::from_payload("checkpoint_recorded", br#"{"files":2}"#)?,
    ];

    // Seqs start at 1 with no gaps; each event one second after the last.
    let mut events = Vec::new();
    for (n, body) in (1u64..).zip(bodies) {
        let at = Timestamp(start.millis() + i64::try_from(n)? * 1_000);
        let id = EventId::v7(u64::try_from(at.millis())?, [n.to_le_bytes()[0]; 10]);
        events.push(Event { id, session_id: session, seq: Seq(n), at, body });
    }

    println!("events, as a store would keep them (type + JSON payload):");
    for event in &events {
        let payload = event.body.to_payload();
        // Decoding the stored form gives the same body back.
        let decoded = EventBody::from_payload(event.body.kind(), payload.to_string().as_bytes())?;
        let same = if decoded == event.body { "round-trips" } else { "DIFFERS" };
        println!("  [{}] {:<19} {payload} ({same})", event.seq, event.body.kind());
    }

    // Folding cannot fail and reads nothing but its inputs.
    let info = SessionInfo::fold(&seed, &events);
    println!();
    println!("folded SessionInfo:");
    println!("  id            {}", info.id);
    println!("  title         {:?} (set by {:?})", info.title, info.title_source);
    println!("  description   {:?}", info.description);
    println!(
        "  messages      {} user, {} assistant, {} tool calls",
        info.message_counts.user, info.message_counts.assistant, info.message_counts.tool_calls
    );
    println!("  last seq      {} (next append gets {})", info.last_seq, info.next_seq());
    println!("  updated at    {}", info.updated_at);
    let open_steps = info.plan.as_ref().is_some_and(Plan::has_unfinished_steps);
    println!("  plan          {} steps, unfinished: {open_steps}", info.plan.as_ref().map_or(0, |p| p.steps.len()));

    // Folding is incremental: applying one more event equals folding them all.
    let mut incremental = SessionInfo::fold(&seed, &events[..3]);
    for event in &events[3..] {
        incremental.apply(event);
    }
    println!("  fold == fold-then-apply: {}", incremental == info);

    // The context estimate: max(last billed prompt, ceil(chars / 4)).
    let billed = info.last_usage.map(|u| u.prompt_tokens());
    let estimate = ContextEstimate::over(billed, events.iter().map(|e| &e.body));
    let window = model_context_window(&model.provider, &model.model);
    println!();
    println!(
        "context: billed {billed:?}, local {} → {} of {} tokens (table knows the model: {})",
        estimate.local,
        estimate.tokens(),
        window.tokens,
        window.known
    );
    Ok(())
}
