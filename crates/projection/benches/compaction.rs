//! Benchmark: planning a compaction is one pass over the working context.
//!
//! Plans a cut over a working context of 100,000 messages (the estimate,
//! the cut point and the file lists) and prints its time next to the time
//! to merely iterate those messages, reading each one's size and kind. A
//! plan that went over the messages more than once, or did per-message work
//! that grows with the context (a scan for each boundary), would show as a
//! ratio far above a small constant. A second line does the same for
//! building the working context from its events, against cloning them.
//!
//! The session is exchanges of a question, an answer that reads a file, its
//! result, an edit, its result and a closing answer: tool pairs everywhere,
//! as in a coding session.

// A benchmark reports on stdout; that is what `cargo xtask bench` reads.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use seri_core::{
    CompactionTrigger, Event, EventBody, EventId, Message, ModelRef, Seq, SessionId, Timestamp, ToolCall, ToolResult,
};
use seri_projection::compaction::ContextBody;
use seri_projection::{CompactionDecision, CompactionSettings, WorkingContext, plan_compaction};

const MESSAGES: usize = 100_000;
/// Messages per generated exchange (seven events).
const EXCHANGE_MESSAGES: usize = 6;
const MIN_RUN: Duration = Duration::from_secs(2);

fn model() -> ModelRef {
    ModelRef::new("script", "bench")
}

/// Seven events, six messages: question; answer with a `read_file` call;
/// its result; an `edit` call; its result; a closing answer.
fn exchange(first_seq: u64, n: u64) -> Vec<EventBody> {
    let call = |name: &str, seq: u64, arguments| {
        EventBody::ToolCall(ToolCall { id: format!("call_{seq}").as_str().into(), name: name.into(), arguments })
    };
    let result = |name: &str, seq: u64, content: String| {
        EventBody::ToolResult(ToolResult {
            tool_call_id: format!("call_{seq}").as_str().into(),
            name: name.into(),
            content,
            is_error: false,
            facts: None,
        })
    };
    let path = format!("src/module_{}.rs", n % 500);
    vec![
        EventBody::Message(Message::user(format!("Question {n}: why does parse fail on empty input?"))),
        EventBody::Message(Message::assistant("Let me read the module.")),
        call("read_file", first_seq + 2, serde_json::json!({ "path": path })),
        result("read_file", first_seq + 2, "fn parse(input: &str) -> Result<Ast, Error> {\n    todo\n}\n".repeat(4)),
        call("edit", first_seq + 4, serde_json::json!({ "path": path, "old": "todo", "new": "lex(input)" })),
        result("edit", first_seq + 4, "Edited.".to_owned()),
        EventBody::Message(Message::assistant("Fixed: the parser now lexes its input first.")),
    ]
}

fn events() -> Vec<Event> {
    let mut events = Vec::new();
    for n in 0..MESSAGES.div_ceil(EXCHANGE_MESSAGES) as u64 {
        let first_seq = events.len() as u64 + 1;
        for (i, body) in exchange(first_seq, n).into_iter().enumerate() {
            events.push(Event {
                id: EventId::from_bytes([0; 16]),
                session_id: SessionId::from_bytes([1; 16]),
                seq: Seq(first_seq + i as u64),
                at: Timestamp(1_700_000_000_000),
                body,
            });
        }
    }
    events
}

/// Five rounds, each the mean time of `f` over a fifth of [`MIN_RUN`]:
/// the median, fastest and slowest round.
fn time<T>(mut f: impl FnMut() -> T) -> (Duration, Duration, Duration) {
    let mut rounds: Vec<Duration> = (0..5)
        .map(|_| {
            let start = Instant::now();
            let mut runs = 0u32;
            while start.elapsed() < MIN_RUN / 5 || runs == 0 {
                black_box(f());
                runs += 1;
            }
            start.elapsed() / runs
        })
        .collect();
    rounds.sort();
    (rounds[2], rounds[0], rounds[4])
}

/// The baseline: read each message's size and kind, nothing more.
fn iterate(context: &WorkingContext) -> (u64, usize) {
    let mut chars = 0;
    let mut calls = 0;
    for message in context.messages() {
        chars += message.chars;
        if let ContextBody::Assistant(turn) = &message.body {
            calls += turn.tool_calls.len();
        }
    }
    (chars, calls)
}

fn run() -> Result<(), String> {
    let events = events();
    let context = WorkingContext::from_events(&events).map_err(|e| e.to_string())?;
    let messages = context.messages().len();
    if messages < MESSAGES {
        return Err(format!("the generated context has {messages} messages, not {MESSAGES}"));
    }
    let settings = CompactionSettings::new(200_000, model());
    let plan = || plan_compaction(black_box(&context), &settings, CompactionTrigger::Manual, None);
    match plan() {
        CompactionDecision::Compact(plan) if plan.modified.len() as u64 + plan.modified_unlisted == 500 => {}
        other => return Err(format!("expected a cut that lists 500 modified files, got {other}")),
    }
    let planning = time(plan);
    let iterating = time(|| iterate(black_box(&context)));
    let building = time(|| WorkingContext::from_events(black_box(&events)));
    let cloning = time(|| black_box(&events).to_vec());

    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let spread = |(_, lo, hi): (Duration, Duration, Duration)| format!("{:.1}–{:.1}", micros(lo), micros(hi));
    println!(
        "bench: plan a compaction cut over {messages} messages, estimate + cut + file lists (median of 5: {} us) | {:.1} us \
         | baseline iterate {messages} messages ({}) {:.1} us | ratio {:.2}",
        spread(planning),
        micros(planning.0),
        spread(iterating),
        micros(iterating.0),
        micros(planning.0) / micros(iterating.0),
    );
    println!(
        "bench: build the working context from {} events (median of 5: {} us) | {:.1} us | baseline clone {} events ({}) {:.1} us | ratio {:.2}",
        events.len(),
        spread(building),
        micros(building.0),
        events.len(),
        spread(cloning),
        micros(cloning.0),
        micros(building.0) / micros(cloning.0),
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("compaction bench: {message}");
            ExitCode::FAILURE
        }
    }
}
