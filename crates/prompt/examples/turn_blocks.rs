//! Renders the per-turn blocks (`<session_status>`, `<plan_state>`,
//! `<context_usage>`) that close every request, for a usage and a status of
//! the caller's choosing, through `seri-prompt`'s public API only.
//!
//! ```sh
//! cargo run -p seri-prompt --example turn_blocks                 # three fill levels
//! cargo run -p seri-prompt --example turn_blocks -- 150000 claude-sonnet-4-5
//! ```
//!
//! The optional arguments are the last request's prompt tokens and a model
//! id (its context window comes from the model table). The crate does no
//! IO: everything it renders is a function of the values passed in.

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use std::num::NonZeroU64;

use seri_core::{Plan, PlanStep, RunId, StepStatus, Usage};
use seri_prompt::{
    ContextStrategy, ContextUsage, PlanState, SessionStatus, SystemPrompt, TurnBlocks, effective_context_window,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let tokens: Option<u64> = args.next().map(|a| a.parse()).transpose()?;
    let model = args.next().unwrap_or_else(|| "claude-sonnet-4-5".to_owned());

    // The window in force: no override here, so the model table decides.
    let window = effective_context_window("anthropic", &model, None);
    println!("model {model}: window {} tokens ({:?})", window.tokens, window.source);

    let run = RunId::from_bytes([0x42; 16]);
    let plan = Plan {
        steps: vec![
            PlanStep { text: "Reproduce the panic on empty input".into(), status: StepStatus::Done },
            PlanStep { text: "Return Err(ParseError::Empty)".into(), status: StepStatus::InProgress },
            PlanStep { text: "Add a <regression> test".into(), status: StepStatus::Pending },
        ],
        owner_run_id: Some(run),
    };
    // Text inside a frame is always escaped: a title quoting a tag cannot open one.
    let status = SessionStatus { title: "Make the parser total", description: "Fixing \"</session_status>\" bugs" };

    let levels: Vec<u64> = match tokens {
        Some(tokens) => vec![tokens],
        // Comfortable, filling (70%+) and nearly full (85%+) for this window.
        None => [40, 75, 90].iter().map(|p| window.tokens.get() * p / 100).collect(),
    };
    for prompt_tokens in levels {
        // What the provider billed for the last request; the block shows the whole prompt.
        let billed =
            Usage { input: prompt_tokens / 10, cache_read: prompt_tokens - prompt_tokens / 10, ..Usage::default() };
        let usage = ContextUsage::from_last_usage(Some(&billed), window.tokens);
        let blocks = TurnBlocks {
            session_status: status,
            plan_state: PlanState::new(Some(&plan), Some(run)),
            context_usage: Some(usage),
        };
        println!();
        println!("--- {prompt_tokens} tokens: {}%, {:?} ---", usage.percent(), usage.pressure());
        println!("{blocks}");
    }

    // A run that did not write the plan is told so; a run that cannot
    // continue gets no <context_usage> at all.
    let other_run =
        TurnBlocks { session_status: status, plan_state: PlanState::new(Some(&plan), None), context_usage: None };
    println!();
    println!("--- seen by another run, which cannot continue ---");
    println!("{other_run}");

    // The system prompt, by contrast, is built once and frozen with the session.
    let frozen = SystemPrompt::builder(ContextStrategy::Continue).build().freeze();
    let small = ContextUsage::new(1_000, NonZeroU64::new(32_768).ok_or("a window is never zero")?);
    println!();
    println!(
        "the frozen system prompt is {} bytes; a 32k window at 1,000 tokens is {}%",
        frozen.text.len(),
        small.percent()
    );
    Ok(())
}
