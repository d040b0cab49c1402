//! Turn overhead on a long session: one whole turn with the scripted
//! provider (read the working context, fold the view, build and check the
//! request, call the provider, append the answer and the run record) on a
//! compacted 100,000-event session, next to the same turn on a compacted
//! 1,000-event one. Both recaps keep the newest 400 events, so both
//! requests are the same size: the ratio says what the history behind the
//! recap costs a turn (goal ≤ 2; it should be about 1). A second figure is
//! the turn on the 1,000-event session against reading its 400 kept events
//! from the store, the part a turn must read anyway.
//!
//! Each figure is the median of 15 turns, with the fastest and slowest.
//! Both figures are measured on SQLite, then on PostgreSQL when
//! `SERI_TEST_POSTGRES_URL` names a database (`cargo xtask bench` starts a
//! throw-away cluster): there a turn's newest-first reads must ask for a
//! page (`LIMIT`), not every message row of the session.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use seri_core::{AgentId, FrozenPrompt, Message, Seq, SessionId};
use seri_prompt::ContextStrategy;
use seri_providers::{ProviderKind, Settings, build_provider};
use seri_runloop::{Lane, Quiet, RunSpec, Runtime, RuntimeParts, RuntimeSettings};
use seri_store::{Profile, SeqRange, Store};
use seri_tools::{PermissionPolicy, Permissions, RunKind, ToolRegistry};

const TURNS: usize = 15;
const KEPT: u64 = 400;

fn main() {
    figures("", None);
    // The same on PostgreSQL when a database is given (`cargo xtask bench`
    // starts a throw-away cluster): the history behind the recap must cost
    // a turn as little there.
    match std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) {
        Some(base) => {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            let join = if base.contains('?') { '&' } else { '?' };
            figures(" on PostgreSQL", Some(format!("{base}{join}options=-csearch_path%3Dbench_turn_{nanos}")));
        }
        None => {
            println!("one turn on PostgreSQL: skipped (SERI_TEST_POSTGRES_URL is not set; cargo xtask bench sets it)")
        }
    }
}

/// The figures on the store `url` names (`None`: a profile's seri.db).
fn figures(on: &str, url: Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let profile = Profile::at(dir.path().join("profile"));
    profile.create().unwrap();
    let store = Arc::new(profile.open_store_url(url.as_deref(), seri_store::StoreOptions::default()).unwrap());
    let script = dir.path().join("script.json");
    let turns: Vec<serde_json::Value> =
        (0..2 * TURNS).map(|i| serde_json::json!({ "text": format!("answer {i}") })).collect();
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
            strategy: ContextStrategy::Compact,
            // Wide enough that no turn compacts again: the figure is the turn.
            context_window: std::num::NonZeroU64::new(100_000_000),
            ..RuntimeSettings::default()
        },
        session_prompts: None,
    });
    let long = compacted_session(&runtime, &store, dir.path().to_str().unwrap(), 100_000);
    let short = compacted_session(&runtime, &store, dir.path().to_str().unwrap(), 1_000);

    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let on_long = turns_on(&runtime, &tokio, long);
    let on_short = turns_on(&runtime, &tokio, short);
    let agent = store.agent(&AgentId::local());
    let last = agent.event_count(short).unwrap();
    let read: Vec<Duration> = (0..TURNS)
        .map(|_| {
            let started = Instant::now();
            black_box(agent.events(short, SeqRange::between(Seq(last - KEPT), Seq(last))).unwrap());
            started.elapsed()
        })
        .collect();
    let (l, llo, lhi) = stats(on_long);
    let (s, slo, shi) = stats(on_short);
    let (r, rlo, rhi) = stats(read);
    println!(
        "bench: one turn{on}, compacted 100k-event session (median of {TURNS}: {llo:.2}–{lhi:.2} ms; goal ≤ 2×) | {l:.2} ms | baseline the same turn at 1k events ({slo:.2}–{shi:.2}) {s:.2} ms | ratio {:.2}",
        l / s
    );
    println!(
        "bench: one turn{on}, compacted 1k-event session (median of {TURNS}: {slo:.2}–{shi:.2} ms) | {s:.2} ms | baseline read its {KEPT} kept events ({rlo:.2}–{rhi:.2}) {r:.2} ms | ratio {:.2}",
        s / r
    );
}

/// A session of `events` ordinary messages, compacted so its recap keeps the newest `KEPT`.
fn compacted_session(runtime: &Runtime, store: &Store, cwd: &str, events: u64) -> SessionId {
    let prompt = FrozenPrompt { text: "You are a benchmark.".into(), ..FrozenPrompt::default() };
    let session = runtime.create_session(cwd, prompt).unwrap().id;
    common::fill_and_compact(&store.agent(&AgentId::local()), session, events, KEPT);
    session
}

/// The time of each of `TURNS` turns on `session`.
fn turns_on(runtime: &Runtime, tokio: &tokio::runtime::Runtime, session: SessionId) -> Vec<Duration> {
    let (_cancel_tx, cancel) = tokio::sync::watch::channel(false);
    (0..TURNS)
        .map(|i| {
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
            started.elapsed()
        })
        .collect()
}

/// The median, fastest and slowest, in milliseconds.
fn stats(mut times: Vec<Duration>) -> (f64, f64, f64) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(times[times.len() / 2]), ms(times[0]), ms(times[times.len() - 1]))
}
