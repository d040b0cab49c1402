//! Benchmark: checking a typed child's returned value against its result
//! schema, next to parsing the same value from JSON text (the cost the
//! `return_result` call pays anyway). Prints one `bench:` line per figure
//! for `cargo xtask bench`.

#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use serde_json::{Value, json};
use seri_tools::ResultSchema;

const ITERATIONS: u32 = 2_000;

/// A report of 500 findings, each an object of five checked fields.
fn report() -> Value {
    let findings: Vec<Value> = (0..500)
        .map(|n| {
            json!({
                "path": format!("crates/c{}/src/lib.rs", n % 9),
                "line": n * 7,
                "severity": if n % 3 == 0 { "high" } else { "low" },
                "note": if n % 2 == 0 { Value::Null } else { Value::from("unwrap outside tests") },
                "tags": ["style", "safety"]
            })
        })
        .collect();
    json!({ "summary": "500 findings", "findings": findings })
}

fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["summary", "findings"],
        "additionalProperties": false,
        "properties": {
            "summary": { "type": "string" },
            "findings": { "type": "array", "items": {
                "type": "object",
                "required": ["path", "line", "severity"],
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string" },
                    "line": { "type": "integer" },
                    "severity": { "enum": ["low", "high"] },
                    "note": { "type": ["string", "null"] },
                    "tags": { "type": "array", "items": { "type": "string" } }
                }
            } }
        }
    })
}

/// Five rounds of `ITERATIONS / 5` calls after a warm-up: the median,
/// fastest and slowest time of one call, in microseconds.
fn per_call_us(mut f: impl FnMut()) -> (f64, f64, f64) {
    for _ in 0..ITERATIONS / 10 {
        f();
    }
    let mut rounds: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..ITERATIONS / 5 {
                f();
            }
            start.elapsed().as_secs_f64() * 1e6 / f64::from(ITERATIONS / 5)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    (rounds[2], rounds[0], rounds[4])
}

fn main() {
    let value = report();
    let text = value.to_string();
    let Ok(schema) = ResultSchema::parse(&schema(), "resultSchema") else {
        println!("bench: result schema check | the benchmark's schema was refused");
        return;
    };
    assert!(schema.check(&value, "value").is_ok(), "the benchmark's value matches its schema");
    let baseline = per_call_us(|| {
        let parsed: Value = serde_json::from_str(black_box(&text)).unwrap_or_default();
        black_box(parsed);
    });
    let measured = per_call_us(|| {
        black_box(schema.check(black_box(&value), "value").is_ok());
    });
    let ((m, mlo, mhi), (b, blo, bhi)) = (measured, baseline);
    println!(
        "bench: result schema check of 500 findings, {} KiB (median of 5: {mlo:.1}–{mhi:.1} µs) | {m:.1} µs | baseline serde_json parse of the same value ({blo:.1}–{bhi:.1}) {b:.1} µs | ratio {:.2}",
        text.len() / 1024,
        m / b
    );
}
