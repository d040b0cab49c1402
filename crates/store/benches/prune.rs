//! `seri store prune` of half a generated profile: 10,000 sessions (half
//! of them older than the cutoff) against 1,000, each session a short
//! conversation of 8 events, every twentieth a fork of the one before. A
//! prune must cost what it removes: removing 5,000 sessions may take at
//! most 12× what removing 500 takes (10× is linear). Times are the median
//! of 3 runs, on a fresh profile each. `SERI_BENCH_QUICK=1` compares 2,000
//! with 200.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use seri_core::{AgentId, EventBody, ForkVia, Message, SessionId, Timestamp};
use seri_store::{ManualClock, PruneOptions, PrunePolicy, Store, StoreOptions};

const RUNS: usize = 3;
const DAY: i64 = 86_400_000;

fn conversation(n: usize) -> Vec<EventBody> {
    (0..8)
        .map(|i| {
            if i % 2 == 0 {
                EventBody::Message(Message::user(format!("Question {n}.{i}: why does the parser fail on empty input?")))
            } else {
                EventBody::Message(Message::assistant("The parser unwraps the first char; empty input panics."))
            }
        })
        .collect()
}

/// A profile of `sessions` sessions, the first half 100 days old, and how
/// long pruning the older half takes.
fn prune_half(sessions: usize) -> (Duration, usize) {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(Timestamp(1_796_018_400_000)));
    let store = Store::open_with(dir.path().join("seri.db"), StoreOptions::with_clock(clock.clone())).unwrap();
    let agent = store.agent(&AgentId::local());
    let mut previous: Option<SessionId> = None;
    let batch = (sessions / 2).clamp(1, 500);
    let mut n = 0;
    while n < sessions {
        if n == sessions / 2 {
            // The second half is recent; nothing joins the halves.
            clock.advance(100 * DAY);
            previous = None;
        }
        let end = (n + batch).min(sessions);
        agent
            .write(|tx| {
                for n in n..end {
                    clock.advance(1);
                    let id = match previous {
                        Some(parent) if n % 20 == 0 => tx.fork_session(parent, None, ForkVia::Cli)?.id,
                        _ => {
                            let seed = tx.new_seed(format!("/work/{}", n % 7));
                            tx.create_session(&seed)?;
                            seed.id
                        }
                    };
                    tx.append(id, conversation(n))?;
                    previous = Some(id);
                }
                Ok::<_, seri_store::StoreError>(())
            })
            .unwrap();
        n = end;
    }
    let options = PruneOptions { policy: PrunePolicy::of(Some(30), None, store.now()), dry_run: false, keep: None };
    let start = Instant::now();
    let report = store.prune(&options).unwrap();
    (start.elapsed(), report.sessions.len())
}

fn median(sessions: usize) -> (f64, usize) {
    let mut runs: Vec<(Duration, usize)> = (0..RUNS).map(|_| prune_half(sessions)).collect();
    runs.sort();
    (runs[RUNS / 2].0.as_secs_f64() * 1e3, runs[RUNS / 2].1)
}

fn main() {
    let quick = std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1");
    let (big, small) = if quick { (2_000, 200) } else { (10_000, 1_000) };
    let (b, b_removed) = median(big);
    let (s, s_removed) = median(small);
    println!(
        "bench: seri store prune of half a profile, {b_removed} of {big} sessions (median of {RUNS}; goal ≤ 12× the {s_removed}) | {b:.0} ms | baseline {s_removed} of {small} sessions {s:.0} ms | ratio {:.2}",
        b / s
    );
}
