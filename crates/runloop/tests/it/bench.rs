//! A run loop whose coding tools may act (write_file, edit and bash
//! allowed unless a test denies one), over a temporary profile and work
//! folder: the fixture of the trajectory and rewind tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seri_core::{AgentId, Event, FrozenPrompt, Message, PromptFile, SessionId};
use seri_providers::{ProviderKind, Settings, build_provider};
use seri_runloop::{Lane, RunOutcome, RunSpec, Runtime, RuntimeParts, RuntimeSettings};
use seri_store::{AgentStore, ManualClock, Profile, SeqRange, Store, StoreOptions};
use seri_tools::{PermissionPolicy, Permissions, RunKind, Tool, ToolRegistry};
use tokio::sync::watch;

/// 2026-11-30T06:00:00Z.
pub(crate) const T0: seri_core::Timestamp = seri_core::Timestamp(1_796_018_400_000);

pub(crate) struct Bench {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) store: Arc<Store>,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) runtime: Runtime,
    pub(crate) session: SessionId,
    pub(crate) cancel: (watch::Sender<bool>, watch::Receiver<bool>),
}

impl Bench {
    /// A bench whose model plays `turns`; `permissions` as in config.json.
    pub(crate) fn new(turns: serde_json::Value) -> Self {
        Self::with(
            turns,
            serde_json::json!({"write_file": "allow", "edit": "allow", "bash": "allow"}),
            RuntimeSettings::default(),
        )
    }

    pub(crate) fn with(turns: serde_json::Value, permissions: serde_json::Value, settings: RuntimeSettings) -> Self {
        Self::with_tools(turns, permissions, settings, |_, _| Vec::new())
    }

    /// A bench with extra tools, made from its store and clock.
    pub(crate) fn with_tools(
        turns: serde_json::Value,
        permissions: serde_json::Value,
        settings: RuntimeSettings,
        extra: impl FnOnce(&Arc<Store>, &Arc<ManualClock>) -> Vec<Arc<dyn Tool>>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let profile = Profile::at(dir.path().join("profile"));
        profile.create().unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        let store = Arc::new(profile.open_store_with(StoreOptions::with_clock(clock.clone())).unwrap());
        let tools = extra(&store, &clock);
        let runtime = runtime(&dir, &store, &turns, &permissions, &settings, tools);
        let work = std::fs::canonicalize(dir.path().join("work")).unwrap();
        let prompt = FrozenPrompt {
            text: "You are a test agent.".into(),
            files: vec![PromptFile { path: "AGENTS.md".into(), sha256: "ab".repeat(32) }],
            tools: Vec::new(),
        };
        let session = runtime.create_session(work.to_str().unwrap(), prompt).unwrap().id;
        Self { dir, store, clock, runtime, session, cancel: watch::channel(false) }
    }

    pub(crate) fn work(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("work")).unwrap()
    }

    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.work().join(name)
    }

    pub(crate) fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.file(name)).ok()
    }

    pub(crate) fn local(&self) -> AgentStore<'_> {
        self.store.agent(&AgentId::local())
    }

    pub(crate) async fn send(&self, text: &str) -> RunOutcome {
        self.send_to(self.session, text).await
    }

    /// [`Bench::send`] to another session of the bench (a fork).
    pub(crate) async fn send_to(&self, session: SessionId, text: &str) -> RunOutcome {
        let event = self.runtime.post_user_message(session, Message::user(text)).unwrap();
        self.runtime.enqueue(RunSpec {
            session_id: session,
            kind: RunKind::Interactive,
            lane: Lane::Interactive,
            user_event_ids: vec![event],
            max_turns: self.runtime.settings().max_turns,
            message: None,
        });
        self.clock.advance(1);
        self.runtime.drain(&seri_runloop::Quiet, &self.cancel.1).await.pop().unwrap()
    }

    /// The user and assistant texts of the last request sent, per-turn blocks left out.
    pub(crate) fn last_request_texts(&self) -> Vec<String> {
        let log = std::fs::read_to_string(self.dir.path().join("requests.jsonl")).unwrap();
        let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
        let messages = last["messages"].as_array().unwrap();
        messages[..messages.len() - 1]
            .iter()
            .map(|m| {
                let text = m["content"].as_str().or_else(|| m["text"].as_str()).unwrap_or("");
                format!("{}: {text}", m["role"].as_str().unwrap_or("?"))
            })
            .collect()
    }

    pub(crate) fn events(&self) -> Vec<Event> {
        self.local().events(self.session, SeqRange::ALL).unwrap()
    }
}

fn runtime(
    dir: &tempfile::TempDir,
    store: &Arc<Store>,
    turns: &serde_json::Value,
    permissions: &serde_json::Value,
    settings: &RuntimeSettings,
    extra: Vec<Arc<dyn Tool>>,
) -> Runtime {
    let script = unique(dir.path(), "script");
    std::fs::write(&script, serde_json::json!({ "turns": turns }).to_string()).unwrap();
    let log = Some(dir.path().join("requests.jsonl"));
    let provider_settings = Settings { script: Some(script), request_log: log, ..Settings::default() };
    let provider = build_provider(ProviderKind::Script, "", &provider_settings, &|_| None).unwrap();
    let profile = Profile::at(dir.path().join("profile"));
    let mut tools = ToolRegistry::with_coding_tools();
    for tool in extra {
        tools.register(tool).unwrap();
    }
    Runtime::new(RuntimeParts {
        store: store.clone(),
        agent: AgentId::local(),
        provider,
        tools,
        memory_dir: profile.memory_dir(),
        permissions: Permissions::headless(PermissionPolicy::from_config(permissions).unwrap()),
        settings: settings.clone(),
        session_prompts: None,
    })
}

fn unique(dir: &Path, stem: &str) -> PathBuf {
    (0..).map(|i| dir.join(format!("{stem}-{i}.json"))).find(|p| !p.exists()).unwrap()
}

/// A scripted turn that calls one tool.
pub(crate) fn call(id: &str, name: &str, arguments: serde_json::Value) -> serde_json::Value {
    serde_json::json!({ "tool_calls": [{ "id": id, "name": name, "arguments": arguments }], "usage": {"input": 100, "output": 10} })
}

/// A scripted turn that answers with text.
pub(crate) fn text(text: &str) -> serde_json::Value {
    serde_json::json!({ "text": text, "usage": {"input": 120, "output": 5} })
}
