//! A tour of seri-mcp that runs offline in a second: an `mcpServers`
//! setting read with `${VAR}` expanded, the seri names of server tools, a
//! tool result rendered for the model, and a server that exits at once
//! reported as failed (with what it said) instead of failing anything else.
//!
//! `cargo run -p seri-mcp --example mcp_tour`

// An example talks to a person on a terminal.
#![allow(clippy::print_stdout)]

use serde_json::json;
use seri_mcp::{McpServers, ServerState, parse_servers, result, seri_name};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let setting = json!({
        "docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN:-none}"}},
        "broken": {"command": "sh", "args": ["-c", "echo 'no API key' >&2; exit 1"]},
    });
    let specs = parse_servers(&setting, "mcpServers", &|name| std::env::var(name).ok())?;
    for spec in &specs {
        println!("{:<8} {:<6} tool timeout {:?}", spec.name, spec.transport.kind(), spec.tool_timeout);
    }
    println!("a tool named `read.file` of `fs` is offered as {}", seri_name("fs", "read.file"));

    let (text, is_error) = result::render(&json!({
        "content": [{"type": "text", "text": "The sum of 2 and 3 is 5."}],
        "structuredContent": {"sum": 5},
    }));
    println!("the model reads (error: {is_error}):\n{text}");

    // Only the stdio server is started here: the HTTP one is an example address.
    let stdio: Vec<_> = specs.into_iter().filter(|s| s.transport.kind() == "stdio").collect();
    let servers = McpServers::start(stdio, &std::env::temp_dir()).await;
    for report in servers.report() {
        if let ServerState::Failed { error } = report.state {
            println!("{} failed alone: {error}", report.name);
        }
    }
    Ok(())
}
