//! Benchmark: a continuation projection costs what it includes, not what the
//! thread holds.
//!
//! Compiles the same projection (20 cited ranges, the default 32 KiB budget)
//! over a 10,000-event and a 1,000,000-event thread and prints both, the
//! 10,000-event figure as the baseline of the other; the ratio should stay
//! near 1 (the requirement is under 2). A second line compares how many
//! events each compile read. The threads are generated on demand from the
//! seq, the way an indexed store answers a range query, so the large one
//! needs no memory and costs nothing to build.

// A benchmark reports on stdout; that is what `cargo xtask bench` reads.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::cell::Cell;
use std::convert::Infallible;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use seri_core::{
    ContinueReason, Event, EventBody, EventId, Handoff, Message, ProjectionPart, Seq, SessionId, Source, Thinking,
    Timestamp, ToolCall, ToolResult,
};
use seri_projection::{
    ContinuationInput, ContinuationProjection, Lineage, SeqRange, ThreadEvents, compile_continuation_projection,
};

const PREDECESSOR: SessionId = SessionId::from_bytes([2; 16]);
/// Events per exchange in the generated thread.
const EXCHANGE: u64 = 8;
const CITED_RANGES: u64 = 20;
const CITED_LEN: u64 = 6;
const MIN_RUN: Duration = Duration::from_secs(2);

/// A thread of `len` events, generated from the seq on each read.
struct GeneratedThread {
    len: u64,
    events_read: Cell<u64>,
}

impl ThreadEvents for GeneratedThread {
    type Error = Infallible;

    fn events(&self, range: SeqRange) -> Result<Vec<Event>, Infallible> {
        let events: Vec<Event> = (range.from.0..=range.to.0.min(self.len)).map(event_at).collect();
        self.events_read.set(self.events_read.get() + events.len() as u64);
        Ok(events)
    }
}

/// Exchanges of eight events: a question, thinking, a reply, two tool calls
/// with multi-line results, and an answer.
fn event_at(seq: u64) -> Event {
    let body = match seq % EXCHANGE {
        1 => EventBody::Message(Message::user(format!("Question {seq}: why does <parse> fail on empty input?"))),
        2 => EventBody::Thinking(Thinking {
            text: "The test feeds an empty string.".repeat(3),
            signature: None,
            encrypted_content: None,
        }),
        3 => EventBody::Message(Message::assistant("Let me read the parser and run the tests.")),
        4 | 6 => EventBody::ToolCall(ToolCall {
            id: format!("call_{seq}").as_str().into(),
            name: "read_file".into(),
            arguments: serde_json::json!({"path": format!("src/module_{seq}.rs"), "limit": 200}),
        }),
        5 | 7 => EventBody::ToolResult(ToolResult {
            tool_call_id: format!("call_{}", seq - 1).as_str().into(),
            name: "read_file".into(),
            content: "fn parse(input: &str) -> Result<Vec<Token>, Error> {\n    lex(input)\n}\n".repeat(3),
            is_error: false,
            facts: None,
        }),
        _ => EventBody::Message(Message::assistant("The parser unwraps the first char; empty input panics.")),
    };
    Event {
        id: EventId::from_bytes([0; 16]),
        session_id: PREDECESSOR,
        seq: Seq(seq),
        at: Timestamp(1_700_000_000_000 + seq as i64),
        body,
    }
}

fn compile(thread: &GeneratedThread) -> Result<ContinuationProjection, String> {
    let lineage = Lineage {
        origin_session_id: SessionId::from_bytes([1; 16]),
        predecessor_session_id: PREDECESSOR,
        predecessor_title: "Parser hardening".into(),
        depth: 1,
        reason: ContinueReason::PhaseChange,
    };
    let handoff = Handoff {
        purpose: Some("Make the parser total.".into()),
        next_actions: vec!["Fix the empty-input case.".into()],
        ..Handoff::default()
    };
    // Twenty short ranges spread over the whole thread.
    let sources: Vec<Source> = (0..CITED_RANGES)
        .map(|i| {
            let from = 1 + i * (thread.len / CITED_RANGES);
            Source::SessionEvents { session_id: PREDECESSOR, from_seq: Seq(from), to_seq: Seq(from + CITED_LEN - 1) }
        })
        .collect();
    // The newest exchange's question.
    let initiating = Seq(thread.len - EXCHANGE + 1);
    let input = ContinuationInput::new(&lineage, &handoff, &sources, initiating);
    compile_continuation_projection(&input, thread).map_err(|e| e.to_string())
}

/// A median with the fastest and slowest round beside it.
type Spread = (Duration, Duration, Duration);

/// The time of one compile (the median of five rounds, each the mean over
/// a fifth of [`MIN_RUN`], with the fastest and slowest round), and the
/// events read per compile.
fn measure(len: u64) -> Result<(Spread, u64, ContinuationProjection), String> {
    let thread = GeneratedThread { len, events_read: Cell::new(0) };
    let projection = compile(&thread)?;
    let reads = thread.events_read.replace(0);
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut runs = 0u32;
        while start.elapsed() < MIN_RUN / 5 {
            black_box(compile(black_box(&thread))?);
            runs += 1;
        }
        rounds.push(start.elapsed() / runs.max(1));
    }
    rounds.sort();
    Ok(((rounds[2], rounds[0], rounds[4]), reads, projection))
}

fn run() -> Result<(), String> {
    let (small_time, small_reads, small) = measure(10_000)?;
    let (large_time, large_reads, large) = measure(1_000_000)?;
    // Both must do the same work: every cited range loaded and some recent
    // exchanges after them (longer seqs make the large one's lines longer,
    // so the number of exchanges may differ by one).
    for (name, p) in [("10,000", &small), ("1,000,000", &large)] {
        let excerpts = p.manifest.included.iter().filter(|r| r.part == ProjectionPart::Excerpt).count();
        let exchanges = p.manifest.included.len() - excerpts;
        if excerpts as u64 != CITED_RANGES || exchanges == 0 {
            return Err(format!("the {name}-event projection loaded {excerpts} excerpts and {exchanges} exchanges"));
        }
    }
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let ((large, llo, lhi), (small_t, slo, shi)) = (large_time, small_time);
    println!(
        "bench: continuation projection, 1,000,000-event generated thread, 20 cited ranges, 32 KiB (median of 5: {:.1}–{:.1} us; goal ≤ 2×) | {:.1} us \
         | baseline continuation projection, 10,000-event thread ({:.1}–{:.1}) {:.1} us | ratio {:.2}",
        micros(llo),
        micros(lhi),
        micros(large),
        micros(slo),
        micros(shi),
        micros(small_t),
        micros(large) / micros(small_t),
    );
    println!(
        "bench: events read per projection, 1,000,000-event thread | {large_reads} events \
         | baseline events read per projection, 10,000-event thread {small_reads} events | ratio {:.2}",
        large_reads as f64 / small_reads as f64,
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("projection bench: {message}");
            ExitCode::FAILURE
        }
    }
}
