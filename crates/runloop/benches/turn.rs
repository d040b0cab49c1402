//! Turn overhead: one whole turn with the scripted provider on a session of
//! 10,000 events (read the working context, build and check the request,
//! call the provider, append the answer and the run record) next to the raw
//! cost of reading those 10,000 events from the store.
//!
//! The ratio says what the run loop costs on top of reading the history it
//! must read anyway.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use seri_core::{AgentId, EventBody, FrozenPrompt, Message};
use seri_providers::{ProviderKind, Settings, build_provider};
use seri_runloop::{Lane, Quiet, RunSpec, Runtime, RuntimeParts, RuntimeSettings};
use seri_store::{Profile, SeqRange};
use seri_tools::{PermissionPolicy, Permissions, RunKind, ToolRegistry};

const EVENTS: usize = 10_000;
const TURNS: usize = 20;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let profile = Profile::at(dir.path().join("profile"));
    profile.create().unwrap();
    let store = Arc::new(profile.open_store().unwrap());
    let script = dir.path().join("script.json");
    let turns: Vec<serde_json::Value> =
        (0..TURNS).map(|i| serde_json::json!({ "text": format!("answer {i}") })).collect();
    std::fs::write(&script, serde_json::json!({ "turns": turns }).to_string()).unwrap();
    let provider =
        build_provider(ProviderKind::Script, "", &Settings { script: Some(script), ..Settings::default() }, &|_| None)
            .unwrap();
    let runtime = Runtime::new(RuntimeParts {
        store: store.clone(),
        agent: AgentId::local(),
        provider,
        tools: ToolRegistry::with_coding_tools(),
        memory_dir: profile.memory_dir(),
        permissions: Permissions::headless(PermissionPolicy::new()),
        settings: RuntimeSettings {
            context_window: std::num::NonZeroU64::new(100_000_000),
            ..RuntimeSettings::default()
        },
        session_prompts: None,
    });
    let prompt = FrozenPrompt { text: "You are a benchmark.".into(), files: Vec::new(), tools: Vec::new() };
    let session = runtime.create_session(dir.path().to_str().unwrap(), prompt).unwrap().id;
    let agent = store.agent(&AgentId::local());
    let history: Vec<EventBody> = (0..EVENTS)
        .map(|i| {
            let text = format!("message {i}: a sentence of ordinary length to make the payload realistic");
            EventBody::Message(if i % 2 == 0 { Message::user(text) } else { Message::assistant(text) })
        })
        .collect();
    for chunk in history.chunks(1_000) {
        agent.append(session, chunk.iter().cloned()).unwrap();
    }

    let read = measure(|| {
        black_box(agent.events(session, SeqRange::ALL).unwrap());
    });

    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (_cancel_tx, cancel) = tokio::sync::watch::channel(false);
    let mut total = Duration::ZERO;
    for i in 0..TURNS {
        let started = Instant::now();
        let event = runtime.post_user_message(session, Message::user(format!("question {i}"))).unwrap();
        runtime.enqueue(RunSpec {
            session_id: session,
            kind: RunKind::Interactive,
            lane: Lane::Interactive,
            user_event_ids: vec![event],
            max_turns: 1,
            message: None,
        });
        let outcomes = tokio.block_on(runtime.drain(&Quiet, &cancel));
        assert_eq!(outcomes.len(), 1);
        total += started.elapsed();
    }
    let turn = total / TURNS as u32;
    println!(
        "bench: one turn on a {EVENTS}-event session (scripted provider) | {:.2} ms | baseline read {EVENTS} events {:.2} ms | ratio {:.2}",
        turn.as_secs_f64() * 1e3,
        read.as_secs_f64() * 1e3,
        turn.as_secs_f64() / read.as_secs_f64()
    );
}

/// The median of a few runs of `f`.
fn measure(mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..9)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}
