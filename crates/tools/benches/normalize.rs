//! Benchmark: normalising and parsing a `continue_session` input, next to
//! plain `serde_json` parsing of the same text (the cost every tool call pays
//! anyway). Prints one `bench:` line per figure for `cargo xtask bench`.

#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use seri_tools::parse_continue_session_input;

const ITERATIONS: u32 = 20_000;

/// A realistic call: nested description and sources, extras of every type.
const INPUT: &str = r#"{
  "reason": "phase_change",
  "title": "Implement the continuation edge in the store",
  "handoff": {
    "purpose": "Give seri durable continuation edges between sessions.",
    "currentRequest": "Write the migration and the atomic creation transaction.",
    "establishedFacts": ["session_continuations has UNIQUE(successor_session_id)", "seq starts at 1 with no gaps"],
    "decisions": ["manifest stored as CBOR", "tool_call_id unique with the predecessor"],
    "openQuestions": ["cap per predecessor?"],
    "nextActions": ["write migration 0003", "add fault injection tests"],
    "cautions": ["never rewrite history"],
    "description": "Design agreed; implementation starts.",
    "sources": [{"kind": "session_events", "fromSeq": 3, "toSeq": 40}, {"kind": "resource", "uri": "https://sqlite.org/lang_createtable.html"}],
    "risks": {"schema": ["migration order"], "perf": 2, "blocking": false},
    "notes": null
  }
}"#;

/// Five rounds of `ITERATIONS / 5` calls after a warm-up: the median,
/// fastest and slowest time of one call, in nanoseconds.
fn per_call_ns(mut f: impl FnMut()) -> (f64, f64, f64) {
    for _ in 0..ITERATIONS / 10 {
        f();
    }
    let mut rounds: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..ITERATIONS / 5 {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(ITERATIONS / 5)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    (rounds[2], rounds[0], rounds[4])
}

fn main() {
    let baseline = per_call_ns(|| {
        let value: serde_json::Value = serde_json::from_str(black_box(INPUT)).unwrap_or_default();
        black_box(value);
    });
    let measured = per_call_ns(|| {
        let value: serde_json::Value = serde_json::from_str(black_box(INPUT)).unwrap_or_default();
        black_box(parse_continue_session_input(value).is_ok());
    });
    let ((m, mlo, mhi), (b, blo, bhi)) = (measured, baseline);
    println!(
        "bench: continue_session input JSON parse + normalise + shape checks (median of 5: {mlo:.0}–{mhi:.0} ns) | {m:.0} ns | baseline serde_json parse ({blo:.0}–{bhi:.0}) {b:.0} ns | ratio {:.2}",
        m / b
    );
}
