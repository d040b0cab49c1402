//! Runs one task on the scripted provider with a custom tool registered,
//! through `seri-runloop`'s public API only: a store in a temporary
//! profile, a two-turn script (call the tool, then answer), and an observer
//! that prints what the run reports as it runs.
//!
//! ```sh
//! cargo run -p seri-runloop --example scripted_turn
//! ```

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_core::{AgentId, Message, ModelRef, ToolCall, Usage};
use seri_prompt::{ContextStrategy, SystemPrompt};
use seri_providers::script::{Script, ScriptReply, ScriptTurn, ScriptedProvider};
use seri_providers::{ConfiguredProvider, SCRIPTED_MODEL};
use seri_runloop::{Lane, RunEvent, RunObserver, RunSpec, Runtime, RuntimeParts, RuntimeSettings};
use seri_store::{Profile, SeqRange};
use seri_tools::{
    Availability, InputError, PermissionPolicy, Permissions, RunContext, RunKind, Tool, ToolContext, ToolError,
    ToolOutcome, ToolRegistry,
};
use tokio::sync::watch;

/// A tool of our own: counts the words of a text. Tools decide and never
/// write; the run loop records the call and its result.
struct WordCount;

#[async_trait]
impl Tool for WordCount {
    fn name(&self) -> &str {
        "word_count"
    }

    fn description(&self) -> &str {
        "Counts the words of `text`. Use it instead of counting by eye."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": "The text to count." } },
            "required": ["text"],
            "additionalProperties": false,
        })
    }

    fn availability(&self, _run: &RunContext) -> Availability {
        Availability::Available
    }

    async fn call(&self, _ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let text =
            input.get("text").and_then(Value::as_str).ok_or_else(|| InputError::new("text", "a string is required"))?;
        Ok(ToolOutcome::text(format!("{} words", text.split_whitespace().count())))
    }
}

/// Prints what a run reports, as it happens.
struct Printer;

impl RunObserver for Printer {
    fn event(&self, event: RunEvent) {
        match event {
            RunEvent::RunStarted { run_id, .. } => println!("  run started    {run_id}"),
            RunEvent::TextDelta(text) => println!("  text delta     {text:?}"),
            RunEvent::ToolStarted { name, id, .. } => println!("  tool started   {name} ({id})"),
            RunEvent::ToolFinished { name, is_error, summary, .. } => {
                println!("  tool finished  {name}: {summary}{}", if is_error { " (error)" } else { "" });
            }
            RunEvent::TurnRecorded { usage, window } => {
                let prompt = usage.map_or_else(|| "unreported".to_owned(), |u| u.prompt_tokens().to_string());
                println!("  turn recorded  {prompt} of {window} tokens");
            }
            RunEvent::RunFinished(outcome) => println!("  run finished   {}", outcome.status.as_str()),
            other => println!("  {other:?}"),
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let profile = Profile::at(dir.path().join("profile"));
    profile.create()?;
    std::fs::create_dir_all(profile.memory_dir())?;
    let workspace = dir.path().join("work");
    std::fs::create_dir_all(&workspace)?;
    let store = Arc::new(profile.open_store()?);

    // The model: two scripted turns, whatever the requests say.
    let script = Script::from_turns(
        "tour-script.json",
        vec![
            ScriptTurn::Reply(ScriptReply {
                text: "Let me count.".into(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "word_count".into(),
                    arguments: json!({ "text": "the quick brown fox jumps over the lazy dog" }),
                }],
                usage: Some(Usage { input: 900, output: 30, ..Usage::default() }),
                ..ScriptReply::default()
            }),
            ScriptTurn::Reply(ScriptReply {
                text: "The sentence has 9 words.".into(),
                usage: Some(Usage { input: 60, cache_read: 900, output: 12, ..Usage::default() }),
                ..ScriptReply::default()
            }),
        ],
    );
    let provider = ConfiguredProvider {
        model: ModelRef::new("script", SCRIPTED_MODEL),
        provider: Arc::new(ScriptedProvider::new(script)),
    };

    // The session verbs, plus our tool.
    let mut tools = ToolRegistry::with_session_verbs();
    tools.register(Arc::new(WordCount))?;

    let runtime = Runtime::new(RuntimeParts {
        store: store.clone(),
        agent: AgentId::local(),
        provider,
        tools,
        memory_dir: profile.memory_dir(),
        permissions: Permissions::headless(PermissionPolicy::new()),
        settings: RuntimeSettings::default(),
        session_prompts: None,
    });
    let cwd = workspace.to_str().ok_or("the temporary directory's path is not UTF-8")?;
    let prompt = SystemPrompt::builder(ContextStrategy::Continue).build().freeze();
    let session = runtime.create_session(cwd, prompt)?.id;

    // A person's message, then the run that answers it.
    let message = runtime.post_user_message(session, Message::user("How many words are in the pangram?"))?;
    runtime.enqueue(RunSpec {
        session_id: session,
        kind: RunKind::Interactive,
        lane: Lane::Interactive,
        user_event_ids: vec![message],
        message: None,
        max_turns: runtime.settings().max_turns,
    });
    let (_cancel, cancelled) = watch::channel(false);
    println!("running the task in session {session}:");
    let outcomes = runtime.drain(&Printer, &cancelled).await;
    for outcome in &outcomes {
        println!(
            "outcome: {} after {} turns, {} output tokens: {:?}",
            outcome.status.as_str(),
            outcome.turns,
            outcome.usage.map_or(0, |u| u.output),
            outcome.result.as_deref().unwrap_or("")
        );
    }

    // Everything the run did is events in the store.
    let events = store.agent(&AgentId::local()).events(session, SeqRange::ALL)?;
    println!("the session's transcript:\n{}", seri_projection::transcript_lines(&events).trim_end());
    Ok(())
}
