//! A run loop on a temporary profile with a scripted provider and a request
//! log, plus helpers to read back what happened.

use std::path::PathBuf;
use std::sync::Arc;

use seri_core::{AgentId, Event, FrozenPrompt, Message, SessionId};
use seri_prompt::ContextStrategy;
use seri_providers::{ProviderKind, Settings, build_provider};
use seri_runloop::{Lane, RunOutcome, RunSpec, Runtime, RuntimeParts, RuntimeSettings};
use seri_store::{Profile, SeqRange, Store};
use seri_tools::{PermissionPolicy, Permissions, RunKind, Tool, ToolRegistry};
use tokio::sync::watch;

/// A runtime over a fresh profile and a script.
pub(crate) struct Harness {
    /// Kept so the temporary profile lives as long as the harness.
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) store: Arc<Store>,
    pub(crate) runtime: Runtime,
    pub(crate) log: PathBuf,
    pub(crate) session: SessionId,
    pub(crate) cancel: (watch::Sender<bool>, watch::Receiver<bool>),
    pub(crate) profile: Profile,
    pub(crate) settings: RuntimeSettings,
}

#[derive(Default)]
pub(crate) struct Options {
    pub(crate) settings: RuntimeSettings,
    pub(crate) extra_tools: Vec<Arc<dyn Tool>>,
    /// Who may do what; headless with the default policy when `None`.
    pub(crate) permissions: Option<Permissions>,
    /// How successors build their own system prompt; they keep their
    /// predecessor's when `None`.
    pub(crate) session_prompts: Option<Arc<dyn seri_runloop::SessionPrompts>>,
    /// The provider and model the scripted provider stands for (its windows
    /// come from the model table); `script` when `None`.
    pub(crate) model: Option<seri_core::ModelRef>,
}

impl Harness {
    /// A harness whose model plays `turns` (the scripted provider's format).
    pub(crate) fn new(turns: serde_json::Value) -> Self {
        Self::with(turns, Options::default())
    }

    pub(crate) fn with(turns: serde_json::Value, options: Options) -> Self {
        Self::with_script(serde_json::json!({ "turns": turns }), options)
    }

    /// A harness whose model plays a whole script file: `{"turns", "children"?}`.
    pub(crate) fn with_script(file: serde_json::Value, options: Options) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let profile = Profile::at(dir.path().join("profile"));
        profile.create().unwrap();
        std::fs::create_dir_all(profile.memory_dir()).unwrap();
        let workspace = dir.path().join("work");
        std::fs::create_dir_all(&workspace).unwrap();
        let script = dir.path().join("script.json");
        std::fs::write(&script, file.to_string()).unwrap();
        let log = dir.path().join("requests.jsonl");
        let settings = Settings { script: Some(script), request_log: Some(log.clone()), ..Settings::default() };
        let mut provider = build_provider(ProviderKind::Script, "", &settings, &|_| None).unwrap();
        if let Some(model) = options.model {
            provider.model = model;
        }
        let store = Arc::new(profile.open_store().unwrap());
        let mut tools = ToolRegistry::with_coding_tools();
        // An extra tool of a registered name replaces it (a configured `delegate`).
        for tool in options.extra_tools {
            tools.replace(tool);
        }
        let settings = options.settings.clone();
        let runtime = Runtime::new(RuntimeParts {
            store: store.clone(),
            agent: AgentId::local(),
            provider,
            tools,
            memory_dir: profile.memory_dir(),
            permissions: options.permissions.unwrap_or_else(|| Permissions::headless(PermissionPolicy::new())),
            settings: options.settings,
            session_prompts: options.session_prompts,
        });
        let prompt = FrozenPrompt { text: "You are a test agent.".into(), files: Vec::new(), tools: Vec::new() };
        let session = runtime.create_session(workspace.to_str().unwrap(), prompt).unwrap().id;
        Self { _dir: dir, store, runtime, log, session, cancel: watch::channel(false), profile, settings }
    }

    /// Replaces the runtime with one whose model plays `turns`, over the same
    /// store, session and request log: for scripts that name ids known only
    /// once the harness exists.
    #[allow(dead_code)]
    pub(crate) fn rescript(&mut self, turns: serde_json::Value) {
        let script = self._dir.path().join("script-again.json");
        std::fs::write(&script, serde_json::json!({ "turns": turns }).to_string()).unwrap();
        let settings = Settings { script: Some(script), request_log: Some(self.log.clone()), ..Settings::default() };
        let provider = build_provider(ProviderKind::Script, "", &settings, &|_| None).unwrap();
        self.runtime = Runtime::new(RuntimeParts {
            store: self.store.clone(),
            agent: AgentId::local(),
            provider,
            tools: ToolRegistry::with_coding_tools(),
            memory_dir: self.profile.memory_dir(),
            permissions: Permissions::headless(PermissionPolicy::new()),
            settings: self.settings.clone(),
            session_prompts: None,
        });
    }

    /// Posts a user message to the harness session and runs everything queued.
    pub(crate) async fn send(&self, text: &str) -> Vec<RunOutcome> {
        self.send_to(self.session, text).await
    }

    pub(crate) async fn send_to(&self, session: SessionId, text: &str) -> Vec<RunOutcome> {
        self.send_message(session, Message::user(text)).await
    }

    /// Posts `message` to `session` and runs everything queued.
    pub(crate) async fn send_message(&self, session: SessionId, message: Message) -> Vec<RunOutcome> {
        let event = self.runtime.post_user_message(session, message).unwrap();
        self.runtime.enqueue(RunSpec {
            session_id: session,
            kind: RunKind::Interactive,
            lane: Lane::Interactive,
            user_event_ids: vec![event],
            max_turns: self.runtime.settings().max_turns,
            message: None,
        });
        self.runtime.drain(&seri_runloop::Quiet, &self.cancel.1).await
    }

    pub(crate) fn events(&self, session: SessionId) -> Vec<Event> {
        self.store.agent(&AgentId::local()).events(session, SeqRange::ALL).unwrap()
    }

    /// The transcript as `[seq] who: text` lines.
    pub(crate) fn transcript(&self, session: SessionId) -> String {
        seri_projection::transcript_lines(&self.events(session))
    }

    /// Every request the provider was sent, as logged.
    pub(crate) fn requests(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

/// The compact strategy, with a window.
#[allow(dead_code)]
pub(crate) fn compact(window: u64) -> RuntimeSettings {
    RuntimeSettings {
        strategy: ContextStrategy::Compact,
        context_window: std::num::NonZeroU64::new(window),
        ..RuntimeSettings::default()
    }
}

/// A scripted turn that calls one tool.
pub(crate) fn call(id: &str, name: &str, arguments: serde_json::Value) -> serde_json::Value {
    serde_json::json!({ "tool_calls": [{ "id": id, "name": name, "arguments": arguments }] })
}

/// A scripted turn that answers with text.
pub(crate) fn text(text: &str) -> serde_json::Value {
    serde_json::json!({ "text": text })
}

/// A tool named `wait` that signals `started` and then never finishes:
/// only cancelling the run ends it.
pub(crate) struct Waits {
    /// One permit per call started: a test waits for as many as it needs,
    /// however many started before it began waiting.
    pub(crate) started: Arc<tokio::sync::Semaphore>,
}

#[async_trait::async_trait]
impl seri_tools::Tool for Waits {
    fn name(&self) -> &str {
        "wait"
    }
    fn description(&self) -> &str {
        "Waits forever."
    }
    fn input_schema(&self) -> serde_json::Value {
        serde_json::json!({ "type": "object" })
    }
    fn availability(&self, _run: &seri_tools::RunContext) -> seri_tools::Availability {
        seri_tools::Availability::Available
    }
    async fn call(
        &self,
        _ctx: seri_tools::ToolContext<'_>,
        _input: serde_json::Value,
    ) -> Result<seri_tools::ToolOutcome, seri_tools::ToolError> {
        self.started.add_permits(1);
        std::future::pending().await
    }
}

/// A person's message to `session_id`, as the REPL sends it.
pub(crate) fn send(session_id: SessionId, text: &str) -> seri_runloop::Command {
    seri_runloop::Command::Send { session_id, message: Message::user(text), lane: Lane::Interactive, max_turns: None }
}

/// The runs a submission ran; any other answer fails the test.
pub(crate) fn ran(submitted: seri_runloop::Submitted) -> Vec<RunOutcome> {
    match submitted {
        seri_runloop::Submitted::Ran(outcomes) => outcomes,
        other => panic!("expected runs, got {other:?}"),
    }
}
