//! A continuation projection over a real SQLite store: the same projection
//! (20 cited ranges, the default 32 KiB budget) compiled from a
//! 200,000-event session and from a 10,000-event one in the same database,
//! every event read through the store's own range reads. Its cost must
//! follow what it includes, not what the thread holds: the ratio should stay
//! near 1 (goal ≤ 2). A second figure counts the events each compile read.
//! Times are the median of 7 compiles, with the fastest and slowest.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use seri_core::{
    AgentId, ContinueReason, Event, EventBody, Handoff, Message, Seq, SessionId, Source, ToolCall, ToolResult,
};
use seri_projection::{
    ContinuationInput, ContinuationProjection, Lineage, SeqRange, ThreadEvents, compile_continuation_projection,
};
use seri_store::{AgentStore, Store, StoreError};

const EXCHANGE: u64 = 6;
const CITED_RANGES: u64 = 20;
const CITED_LEN: u64 = 6;
const RUNS: usize = 7;

/// One session of the store, as the projection reads threads.
struct StoreThread<'a> {
    store: &'a AgentStore<'a>,
    session: SessionId,
}

impl ThreadEvents for StoreThread<'_> {
    type Error = StoreError;

    fn events(&self, range: SeqRange) -> Result<Vec<Event>, StoreError> {
        self.store.events(self.session, range)
    }
}

fn body(seq: u64) -> EventBody {
    match seq % EXCHANGE {
        1 => EventBody::Message(Message::user(format!("Question {seq}: why does <parse> fail on empty input?"))),
        2 => EventBody::Message(Message::assistant("Let me read the parser.")),
        3 => EventBody::ToolCall(ToolCall {
            id: format!("call_{seq}").as_str().into(),
            name: "read_file".into(),
            arguments: serde_json::json!({"path": format!("src/module_{seq}.rs")}),
        }),
        4 => EventBody::ToolResult(ToolResult {
            tool_call_id: format!("call_{}", seq - 1).as_str().into(),
            name: "read_file".into(),
            content: "fn parse(input: &str) -> Result<Vec<Token>, Error> {\n    lex(input)\n}\n".repeat(3),
            is_error: false,
            facts: None,
        }),
        _ => EventBody::Message(Message::assistant("The parser unwraps the first char; empty input panics.")),
    }
}

fn session_of(store: &AgentStore<'_>, len: u64) -> SessionId {
    let id = store.create_session(&store.new_seed("/w")).unwrap().id;
    let bodies: Vec<EventBody> = (1..=len).map(body).collect();
    for chunk in bodies.chunks(5_000) {
        store.append(id, chunk.iter().cloned()).unwrap();
    }
    id
}

fn compile(thread: &StoreThread<'_>, len: u64) -> ContinuationProjection {
    let lineage = Lineage {
        origin_session_id: thread.session,
        predecessor_session_id: thread.session,
        predecessor_title: "Parser hardening".into(),
        depth: 1,
        reason: ContinueReason::PhaseChange,
    };
    let handoff = Handoff {
        purpose: Some("Make the parser total.".into()),
        next_actions: vec!["Fix the empty-input case.".into()],
        ..Handoff::default()
    };
    let sources: Vec<Source> = (0..CITED_RANGES)
        .map(|i| {
            let from = 1 + i * (len / CITED_RANGES);
            Source::SessionEvents { session_id: thread.session, from_seq: Seq(from), to_seq: Seq(from + CITED_LEN - 1) }
        })
        .collect();
    // The newest exchange's question.
    let initiating = Seq(len - (len % EXCHANGE) - EXCHANGE + 1);
    let input = ContinuationInput::new(&lineage, &handoff, &sources, initiating);
    compile_continuation_projection(&input, thread).unwrap()
}

/// Median, fastest and slowest compile, in microseconds, and the events one compile read.
fn measure(raw: &Store, thread: &StoreThread<'_>, len: u64) -> ((f64, f64, f64), u64) {
    let before = raw.events_read();
    black_box(compile(thread, len));
    let reads = raw.events_read() - before;
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            black_box(compile(black_box(thread), len));
            started.elapsed()
        })
        .collect();
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    ((us(times[RUNS / 2]), us(times[0]), us(times[RUNS - 1])), reads)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("seri.db")).unwrap();
    let agent = store.agent(&AgentId::local());
    let (large_len, small_len) = (200_000, 10_000);
    let large = StoreThread { store: &agent, session: session_of(&agent, large_len) };
    let small = StoreThread { store: &agent, session: session_of(&agent, small_len) };
    let ((l, llo, lhi), large_reads) = measure(&store, &large, large_len);
    let ((s, slo, shi), small_reads) = measure(&store, &small, small_len);
    println!(
        "bench: continuation projection over SQLite, 200,000-event session (median of {RUNS}: {llo:.0}–{lhi:.0} µs; goal ≤ 2×) | {l:.0} µs | baseline the same over a 10,000-event session ({slo:.0}–{shi:.0}) {s:.0} µs | ratio {:.2}",
        l / s
    );
    println!(
        "bench: events read per projection over SQLite, 200,000-event session | {large_reads} events | baseline the same, 10,000-event session {small_reads} events | ratio {:.2}",
        large_reads as f64 / small_reads as f64
    );
}
