//! Calls the session verbs the way a run loop would, through `seri-tools`'
//! public API only: a registry, the runs its availability rules tell apart,
//! and calls over sessions held in memory ([`InMemorySessions`] stands in
//! for the store).
//!
//! ```sh
//! cargo run -p seri-tools --example tools_tour
//! ```
//!
//! Tools decide and never write: a call returns the text the model reads
//! and, at most, events for the caller to append, or an error that names
//! the field that was wrong.

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use serde_json::json;
use seri_core::{AgentId, EventBody, Message, RunId, SessionId, SessionSeed, Timestamp};
use seri_prompt::ContextStrategy;
use seri_tools::{
    InMemorySessions, PermissionPolicy, Permissions, RunContext, RunKind, RunRef, ToolAction, ToolContext,
    ToolRegistry, Workspace,
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let workspace = Workspace::new(dir.path())?;
    let permissions = Permissions::headless(PermissionPolicy::new());

    // One session with a little history, in memory.
    let session = SessionId::from_bytes([0x5e; 16]);
    let seed =
        SessionSeed::new(session, AgentId::local(), dir.path().display().to_string(), Timestamp(1_796_018_400_000));
    let mut sessions = InMemorySessions::new(dir.path().join("memory"));
    sessions.add_session(
        seed,
        [
            EventBody::Message(Message::user("Rename `parse_expr` to `parse_expression` everywhere.")),
            EventBody::Message(Message::assistant("Done in 4 files; the tests pass.")),
        ],
    );

    let registry = ToolRegistry::with_session_verbs();
    let run = |kind| RunContext {
        session_id: session,
        agent_id: AgentId::local(),
        strategy: ContextStrategy::Continue,
        run: Some(RunRef { id: RunId::from_bytes([0x01; 16]), kind, parked_children: 0 }),
    };
    let interactive = run(RunKind::Interactive);
    let child = run(RunKind::DelegatedChild { parent_run_id: RunId::from_bytes([0x02; 16]), depth: 1 });
    let names = |run: &RunContext| registry.available(run).into_iter().map(|spec| spec.name).collect::<Vec<_>>();
    println!("an interactive run is offered: {:?}", names(&interactive));
    println!("a delegated child is offered:  {:?}", names(&child));

    let ctx =
        |run| ToolContext { run, access: &sessions, workspace: &workspace, permissions: &permissions, call: None };

    // A valid call: the text the model reads, and the events the caller appends.
    let outcome = registry
        .call(
            ctx(&interactive),
            "status",
            json!({ "title": "Rename parse_expr", "description": "Renamed; tests pass" }),
        )
        .await?;
    println!();
    println!("status → {:?}", outcome.text);
    if let ToolAction::Append(events) = &outcome.action {
        for event in events {
            println!("  to append: {} {}", event.kind(), event.to_payload());
        }
    }

    // Reads go through the access interface, by seq range.
    let outcome =
        registry.call(ctx(&interactive), "read", json!({ "target": format!("thread:{session}"), "limit": 5 })).await?;
    println!();
    println!("read →\n{}", outcome.text);

    // Wrong input: the error is for the model, and names the field.
    let wrong = registry.call(ctx(&interactive), "status", json!({ "title": 7 })).await;
    println!();
    println!("status with a number for a title → {}", wrong.err().map(|e| e.to_string()).unwrap_or_default());

    // A rule refuses a run that may not use a tool, saying why.
    let refused = registry.call(ctx(&child), "continue_session", json!({})).await;
    println!("continue_session from a child → {}", refused.err().map(|e| e.to_string()).unwrap_or_default());
    Ok(())
}
