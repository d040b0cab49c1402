//! A fork by reference against its parent: a 100,000-event session forked
//! at seq 99,000, then opening each (its view) and reading the newest 1,000
//! events of its history, as a turn's working context would. A fork copies
//! no events, and what it costs must follow what is read, not where the
//! rows live: goal ≤ 1.2× the parent. A second figure counts the event rows
//! of the store before and after the fork (goal: the same).
//! Times are the median of 9 runs, with the fastest and slowest.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use seri_core::{AgentId, EventBody, ForkVia, Message, Seq, SessionId};
use seri_store::{AgentStore, CheckMode, SeqRange, Store};

const LEN: u64 = 100_000;
const FORK_AT: u64 = 99_000;
const TAIL: u64 = 1_000;
const RUNS: usize = 9;

fn body(seq: u64) -> EventBody {
    if seq % 2 == 1 {
        EventBody::Message(Message::user(format!("Question {seq}: why does the parser fail on empty input?")))
    } else {
        EventBody::Message(Message::assistant("The parser unwraps the first char; empty input panics."))
    }
}

/// Opens the session and reads the newest `TAIL` events of its history.
fn open_and_read_tail(store: &AgentStore<'_>, id: SessionId) -> usize {
    let info = store.info(id).unwrap();
    let from = info.last_seq.saturating_sub(TAIL - 1).max(1);
    let mut n = 0;
    store
        .each_body(id, SeqRange::between(Seq(from), Seq(info.last_seq)), &mut |_, body| {
            black_box(body);
            n += 1;
        })
        .unwrap();
    n
}

fn median(store: &AgentStore<'_>, id: SessionId) -> (f64, f64, f64) {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            assert_eq!(open_and_read_tail(store, id), TAIL as usize);
            start.elapsed()
        })
        .collect();
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    (us(times[RUNS / 2]), us(times[0]), us(times[RUNS - 1]))
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("seri.db")).unwrap();
    let agent = store.agent(&AgentId::local());
    let parent = agent.create_session(&agent.new_seed("/w")).unwrap().id;
    let bodies: Vec<EventBody> = (1..=LEN).map(body).collect();
    for chunk in bodies.chunks(5_000) {
        agent.append(parent, chunk.iter().cloned()).unwrap();
    }
    let rows_before = store.check_cached_columns(CheckMode::Report).unwrap().events;
    let fork = agent.fork_session(parent, Some(Seq(FORK_AT)), ForkVia::Cli).unwrap().id;
    let rows_after = store.check_cached_columns(CheckMode::Report).unwrap().events;
    // The fork's own history, as long as the parent's past the fork point.
    agent.append(fork, (FORK_AT + 1..=LEN).map(body)).unwrap();
    let (p, plo, phi) = median(&agent, parent);
    let (f, flo, fhi) = median(&agent, fork);
    println!(
        "bench: open a fork of a 100,000-event session at 99,000 and read its newest 1,000 events (median of {RUNS}: {flo:.0}–{fhi:.0} µs; goal ≤ 1.2×) | {f:.0} µs | baseline the same on the parent ({plo:.0}–{phi:.0}) {p:.0} µs | ratio {:.2}",
        f / p
    );
    println!(
        "bench: event rows after forking a 100,000-event session (goal: none copied) | {rows_after} rows | baseline before the fork {rows_before} rows | ratio {:.2}",
        rows_after as f64 / rows_before as f64
    );
}
