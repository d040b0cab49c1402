//! The run vocabulary as a client reads it, through `seri-protocol`'s
//! public API only and without the engine: lines of `seri -p …
//! --output-format stream-json` (the same `event` a server's `run-event`
//! frame carries) parsed into typed events, and a run's status as the
//! headless contract's word.
//!
//! ```sh
//! cargo run -p seri-protocol --example protocol_tour
//! ```

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use seri_core::RunStatus;
use seri_protocol::{StreamEvent, TaskStatus};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let lines = [
        r#"{"type":"run_started","run_id":"01a22b56-d880-7000-8000-000000000001","session_id":"01a22b56-d880-7000-8000-000000000002"}"#,
        r#"{"type":"text_delta","text":"Hello"}"#,
        r#"{"type":"turn","usage":{"input":1200,"cache_read":300,"cache_write":0,"output":8},"context_window":128000}"#,
    ];
    println!("stream-json, one event a line, read back typed:");
    for line in lines {
        match serde_json::from_str::<StreamEvent>(line)? {
            StreamEvent::RunStarted { run_id, .. } => println!("  a run began: {run_id}"),
            StreamEvent::TextDelta { text } => println!("  the model wrote {text:?}"),
            StreamEvent::Turn { usage, context_window } => {
                let input = usage.map(|u| u.input);
                println!("  a turn ended: {input:?} input tokens of a {context_window}-token window");
            }
            other => println!("  {}", other.to_value()),
        }
    }
    println!("how a task ends, in headless JSON's words:");
    for status in [Some(RunStatus::Succeeded), Some(RunStatus::MaxTurns), Some(RunStatus::Cancelled), None] {
        println!("  {status:?} -> {}", TaskStatus::of(status));
    }
    Ok(())
}
