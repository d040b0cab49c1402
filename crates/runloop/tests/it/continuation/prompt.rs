//! A successor is a new session: it freezes its own system prompt when it is
//! created, and keeps its predecessor's only when that cannot be built.

use std::sync::Arc;

use serde_json::json;
use seri_core::{AgentId, FrozenPrompt};
use seri_runloop::{SessionPromptError, SessionPrompts};

use super::continue_call;
use crate::support::{Harness, Options, text};

/// Builds "Fresh prompt for CWD", or fails.
struct Prompts {
    fail: bool,
}

impl SessionPrompts for Prompts {
    fn freeze(&self, cwd: &str) -> Result<FrozenPrompt, SessionPromptError> {
        if self.fail {
            return Err(SessionPromptError("AGENTS.md: permission denied".to_owned()));
        }
        Ok(FrozenPrompt { text: format!("Fresh prompt for {cwd}"), files: Vec::new(), tools: Vec::new() })
    }
}

async fn successor_prompt(fail: bool) -> (String, String) {
    let options = Options { session_prompts: Some(Arc::new(Prompts { fail })), ..Options::default() };
    let h = Harness::with(json!([continue_call("cont_1", "phase_change"), text("Fresh start.")]), options);
    let outcomes = h.send("On to the next phase.").await;
    let successor = outcomes[0].continued_to.clone().unwrap().session_id;
    let store = h.store.agent(&AgentId::local());
    let prompt = |id| store.seed(id).unwrap().system_prompt.unwrap().text;
    let requests = h.requests();
    assert_eq!(requests[1]["system"], prompt(successor), "the successor's requests send its own prompt");
    (prompt(h.session), prompt(successor))
}

#[tokio::test]
async fn a_successor_freezes_its_own_prompt_in_its_working_directory() {
    let (predecessor, successor) = successor_prompt(false).await;
    assert_eq!(predecessor, "You are a test agent.", "the predecessor's stays as it was");
    assert!(successor.starts_with("Fresh prompt for /"), "{successor}");
}

#[tokio::test]
async fn a_prompt_that_cannot_be_built_leaves_the_successor_its_predecessors() {
    let (predecessor, successor) = successor_prompt(true).await;
    assert_eq!(successor, predecessor);
}
