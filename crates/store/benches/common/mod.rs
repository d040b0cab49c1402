//! What the store's benchmarks share: the typical turn mix they append,
//! and how a figure is printed (`cargo xtask bench` collects the lines).

use std::time::Duration;

use seri_core::{
    EventBody, Message, MessageMeta, ModelRef, PlanUpdated, StatusChanged, Thinking, ToolCall, ToolResult, Usage,
};

/// A turn's worth of events, over and over: the user asks, the model thinks,
/// calls a tool, reads its result and answers (with usage); now and then a
/// status or plan change.
pub(crate) fn typical_bodies(n: usize) -> Vec<EventBody> {
    let prose = "The migration adds a column and backfills it in batches of a thousand rows; ";
    let text = |words: usize| prose.repeat(words / 12 + 1);
    (0..n)
        .map(|i| match i % 8 {
            0 => EventBody::Message(Message::user(format!("Turn {i}: {}", text(30)))),
            1 => EventBody::Thinking(Thinking {
                text: text(60),
                signature: Some("sig".repeat(20)),
                encrypted_content: None,
            }),
            2 => EventBody::ToolCall(ToolCall {
                id: format!("call_{i}").as_str().into(),
                name: "read_file".into(),
                arguments: serde_json::json!({ "path": format!("src/module_{i}.rs"), "from": 1, "to": 200 }),
            }),
            3 => EventBody::ToolResult(ToolResult {
                tool_call_id: format!("call_{}", i - 1).as_str().into(),
                name: "read_file".into(),
                content: text(180),
                is_error: false,
                facts: None,
            }),
            4 => EventBody::Message(Message {
                meta: Some(Box::new(MessageMeta {
                    usage: Some(Usage { input: 1_200 + i as u64, cache_read: 40_000, cache_write: 300, output: 250 }),
                    model: Some(ModelRef::new("anthropic", "claude-sonnet-4-5")),
                    stop_reason: Some("end_turn".into()),
                    ..MessageMeta::default()
                })),
                ..Message::assistant(text(80))
            }),
            5 => EventBody::StatusChanged(StatusChanged {
                title: None,
                description: Some(format!("step {i}")),
                source: seri_core::TitleSource::Agent,
            }),
            6 => EventBody::PlanUpdated(PlanUpdated { plan: None }),
            _ => EventBody::Message(Message::user(text(10))),
        })
        .collect()
}

/// Events per second.
pub(crate) fn rate((events, elapsed): (usize, Duration)) -> f64 {
    events as f64 / elapsed.as_secs_f64()
}

/// One figure from its runs: higher is better for both, so the ratio is
/// figure / baseline, of medians; the slowest and fastest runs are shown.
pub(crate) fn report(what: &str, mut values: Vec<f64>, baseline: &str, mut bases: Vec<f64>) {
    let spread = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let ((value, lo, hi), (base, blo, bhi)) = (spread(&mut values), spread(&mut bases));
    let runs = values.len();
    println!(
        "bench: {what} (median of {runs}: {lo:.0}–{hi:.0} events/s) | {value:.0} events/s | baseline {baseline} ({blo:.0}–{bhi:.0}) {base:.0} events/s | ratio {:.2}",
        value / base
    );
}
