//! Imports a folder with an older release's session file and a file it
//! cannot use into a store in memory, twice, through `seri-import`'s public
//! API only: the first import makes a session and reports the other file,
//! the second finds nothing new.
//!
//! ```sh
//! cargo run -p seri-import --example import_tour
//! ```

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use seri_core::AgentId;
use seri_import::LegacyImport as _;
use seri_store::{SeqRange, Store};

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let folder = std::env::temp_dir().join(format!("seri-import-tour-{}", std::process::id()));
    std::fs::create_dir_all(&folder)?;
    std::fs::write(
        folder.join("parser.jsonl"),
        concat!(
            r#"{"type": "session", "id": "a41f", "cwd": "/home/me/parser", "title": "Empty input", "createdAt": "2025-03-01T09:30:00Z"}"#,
            "\n",
            r#"{"role": "user", "content": "Why does the parser fail on empty input?", "timestamp": "2025-03-01T09:30:05Z"}"#,
            "\n",
            r#"{"role": "assistant", "content": "It calls unwrap on the first character.", "timestamp": "2025-03-01T09:30:20Z"}"#,
            "\n",
        ),
    )?;
    std::fs::write(folder.join("notes.jsonl"), "this is not JSON\n")?;

    let store = Store::open_in_memory()?;
    let agent = store.agent(&AgentId::local());
    let first = agent.import_legacy_sessions(&folder, "/home/me")?;
    println!("first import:\n{first}");
    for id in first.new_sessions() {
        let info = agent.info(id)?;
        println!("session {:?} in {}: {} events", info.title, info.cwd, agent.events(id, SeqRange::ALL)?.len());
    }
    let again = agent.import_legacy_sessions(&folder, "/home/me")?;
    println!("again: {} new sessions; quiet: {}", again.new_sessions().len(), again.is_quiet());
    std::fs::remove_dir_all(&folder)?;
    Ok(())
}
