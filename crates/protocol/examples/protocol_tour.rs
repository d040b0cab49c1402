//! The run vocabulary as clients read it, through `seri-protocol`'s public
//! API only: a run's events become stream-json lines (the same `event` a
//! server's `run-event` frame carries), and a run's status becomes the
//! headless contract's word.
//!
//! ```sh
//! cargo run -p seri-protocol --example protocol_tour
//! ```

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use seri_core::{RunId, RunStatus, SessionId, Usage};
use seri_protocol::{StreamEvent, TaskStatus};
use seri_runloop::RunEvent;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let run_id: RunId = "01a22b56-d880-7000-8000-000000000001".parse()?;
    let session_id: SessionId = "01a22b56-d880-7000-8000-000000000002".parse()?;
    let usage = Usage { input: 1200, cache_read: 300, cache_write: 0, output: 8 };
    let events = [
        RunEvent::RunStarted { run_id, session_id },
        RunEvent::TextDelta("Hello".to_owned()),
        RunEvent::TurnRecorded { usage: Some(usage), window: 128_000 },
    ];
    println!("stream-json, one event a line:");
    for event in &events {
        println!("  {}", serde_json::to_string(&StreamEvent::of(event))?);
    }
    println!("how a task ends, in headless JSON's words:");
    for status in [Some(RunStatus::Succeeded), Some(RunStatus::MaxTurns), Some(RunStatus::Cancelled), None] {
        println!("  {status:?} -> {}", TaskStatus::of(status));
    }
    Ok(())
}
