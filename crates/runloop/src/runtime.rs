//! [`Runtime`]: the run loop. It builds each request from events, calls the
//! provider, records what came back, runs the tools, and repeats until the
//! model ends its turn, the turn budget runs out, the run is cancelled, or
//! the session continues into a successor.
//!
//! This file holds what a runtime is (its parts, settings and accessors);
//! each job it does has a module of its own:
//!
//! - `run`: a run from the queue to its recorded end, under its lease;
//! - `turn`: the turn loop, one model call after another;
//! - `request`: the request for one model call, pairing-checked;
//! - `tool_call`: one tool call, decided and recorded;
//! - `settle`: results for calls a stopped run left unanswered;
//! - `children`: a turn's `delegate` calls and the child runs they start.
//!
//! The recorder, the compactor and the checkpoints are values held in
//! `Inner`; they know nothing of the runtime, which calls them.

use std::num::NonZeroU64;
use std::sync::Arc;

use seri_core::{AgentId, FrozenPrompt, ModelRef, SessionId, SessionInfo};
use seri_projection::compaction::{CompactionSettings, WorkingContext};
use seri_prompt::{ContextStrategy, effective_context_window};
use seri_providers::ConfiguredProvider;
use seri_store::{LeaseOwner, Store};
use seri_tools::{Permissions, ToolRegistry};
use tokio::sync::watch;

use crate::access::StoreAccess;
use crate::checkpoint::Checkpoints;
use crate::compaction::Compactor;
use crate::continuation;
use crate::error::RunError;
use crate::lease::{BusyPolicy, LEASE_TTL, Leases};
use crate::notify::{AccountChangeReason, Notification, Notifier};
use crate::protocol::Lane;
use crate::queue::RunQueue;
use crate::trajectory::{Recorder, RuntimeFacts, TrajectoryFacts};

mod children;
mod context_report;
mod hook_calls;
mod overflow;
mod request;
mod rewind;
mod rules;
mod run;
mod settle;
mod submit;
mod tool_call;
mod turn;

pub use children::MAX_PARALLEL_CHILDREN;
pub use context_report::{ContextPart, ContextReport, measure as measure_request};

/// The default turn budget of a task.
pub const DEFAULT_MAX_TURNS: u32 = 500;

/// A subagent's turn budget. Never the parent's: three concurrent children
/// on the session's own cap would multiply tokens without a ceiling.
pub const CHILD_MAX_TURNS: u32 = 25;

/// How the runtime manages context and budgets.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeSettings {
    /// Continue into successors, or compact in place.
    pub strategy: ContextStrategy,
    /// Overrides the model table's context window.
    pub context_window: Option<NonZeroU64>,
    /// Compaction's keep budget, in tokens.
    pub keep_tokens: u64,
    /// Whether a person chose `keep_tokens`: then it is used as given
    /// (checked against the window by whoever read it), never cut to the
    /// quarter of the window the default is cut to.
    pub keep_tokens_chosen: bool,
    /// Turn budget per task.
    pub max_turns: u32,
    /// Turn budget of each child run ([`CHILD_MAX_TURNS`] by default),
    /// whatever the parent's `max_turns`.
    pub child_max_turns: u32,
    /// How many child runs of one turn run at the same time
    /// ([`MAX_PARALLEL_CHILDREN`] by default; the rest wait their turn).
    pub max_parallel_children: usize,
    /// What a run does when another run holds its session: wait its turn
    /// (the default) or fail at once naming the holder (`--no-wait`).
    pub busy: BusyPolicy,
    /// How long a session lease holds without a heartbeat ([`LEASE_TTL`]).
    pub lease_ttl: std::time::Duration,
    /// What every model request of a run asks for beyond the messages:
    /// sampling knobs, an output cap, a reasoning effort. Unset ones are
    /// not sent (the provider's defaults apply).
    pub generation: Generation,
    /// Commands run before and after tool calls, on a submitted prompt and
    /// when a turn ends (`config.json` `hooks`); none by default.
    pub hooks: crate::shell_hooks::Hooks,
    /// The folders a person chose for this runtime's sessions to work in
    /// (`seri serve`'s folder and its `--folder`s), canonical: a session
    /// whose recorded folder is in none of them does not run, whoever
    /// recorded it (an import, an API client). `None`: any folder (the
    /// CLI, which asks a person before it goes on in another folder).
    pub folders: Option<Vec<std::path::PathBuf>>,
}

/// Why a session of `folder` does not run on a runtime limited to
/// `folders` ([`RuntimeSettings::folders`]).
pub fn folder_refusal(folder: &std::path::Path, folders: &[std::path::PathBuf]) -> String {
    let chosen: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
    format!(
        "this session works in {}, which is not a folder this server was given ({}): a folder recorded by an import or an API client is never a grant; start `seri serve` there, or add `--folder {}` to let its sessions work there",
        folder.display(),
        chosen.join(", "),
        folder.display()
    )
}

/// [`RuntimeSettings::generation`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Generation {
    /// Temperature and top-p.
    pub sampling: seri_providers::Sampling,
    /// The most output tokens one response may take.
    pub max_output_tokens: Option<u32>,
    /// How hard the model should think, for models that can.
    pub reasoning: Option<seri_providers::ReasoningEffort>,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        Self {
            strategy: ContextStrategy::Continue,
            context_window: None,
            keep_tokens: 20_000,
            keep_tokens_chosen: false,
            max_turns: DEFAULT_MAX_TURNS,
            child_max_turns: CHILD_MAX_TURNS,
            max_parallel_children: MAX_PARALLEL_CHILDREN,
            busy: BusyPolicy::Wait,
            lease_ttl: LEASE_TTL,
            generation: Generation::default(),
            hooks: crate::shell_hooks::Hooks::default(),
            folders: None,
        }
    }
}

/// Everything a runtime is built from.
pub struct RuntimeParts {
    /// The database.
    pub store: Arc<Store>,
    /// The agent whose sessions this runtime works on.
    pub agent: AgentId,
    /// The model and its provider.
    pub provider: ConfiguredProvider,
    /// The tools.
    pub tools: ToolRegistry,
    /// Where `~/memory/…` sources resolve.
    pub memory_dir: std::path::PathBuf,
    /// Who may do what, and who is asked.
    pub permissions: Permissions,
    /// Settings.
    pub settings: RuntimeSettings,
    /// How a successor builds its own system prompt; `None` keeps its
    /// predecessor's.
    pub session_prompts: Option<Arc<dyn SessionPrompts>>,
}

/// Builds the system prompt a new session freezes, from the files of its
/// working directory and profile as they are now (AGENTS.md, rules,
/// memory). A successor is a new session: it freezes its own prompt when it
/// is created, so a change made since its predecessor started reaches it.
pub trait SessionPrompts: Send + Sync {
    /// The prompt a session in `cwd` freezes now.
    fn freeze(&self, cwd: &str) -> Result<FrozenPrompt, SessionPromptError>;

    /// The glob rules of a session in `cwd`, read now: the rule files whose
    /// front matter declares `globs`, kept out of the frozen prompt. A run
    /// reads them once, when a call first works on a file. None by default.
    fn glob_rules(&self, cwd: &str) -> Result<crate::rules::GlobRules, SessionPromptError> {
        let _ = cwd;
        Ok(crate::rules::GlobRules::default())
    }
}

/// [`SessionPrompts::freeze`] could not read what the prompt is built from.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the system prompt: {0}")]
pub struct SessionPromptError(pub String);

/// The run loop. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<Store>,
    agent: AgentId,
    provider: ConfiguredProvider,
    tools: ToolRegistry,
    access: StoreAccess,
    permissions: Permissions,
    settings: RuntimeSettings,
    session_prompts: Option<Arc<dyn SessionPrompts>>,
    notifier: Notifier,
    queue: RunQueue,
    /// Each run's trajectory.
    recorder: Recorder,
    /// The compact strategy's summarizer.
    compactor: Compactor,
    /// The files `write_file` and `edit` are about to change.
    checkpoints: Checkpoints,
    continuation_hooks: continuation::CreationHooks,
    /// How this runtime holds sessions.
    leases: Leases,
    /// The submissions running now, each cancelled on its own.
    submissions: submit::Submissions,
    /// The seeds of the sessions this runtime ran: a seed never changes
    /// once its session is created, so a run reads it once, not per turn.
    seeds: std::sync::Mutex<std::collections::HashMap<SessionId, Arc<seri_core::SessionSeed>>>,
    /// The built-in tools' definitions as requests send them, one shared
    /// list per set of tools a run may use (by their names): built once,
    /// not per request.
    tool_lists: std::sync::Mutex<std::collections::HashMap<Vec<String>, Arc<[seri_providers::ToolSpec]>>>,
    /// What `SessionStart` hooks said, by session, until its next message
    /// carries it to the model.
    hook_context: std::sync::Mutex<std::collections::HashMap<SessionId, Vec<String>>>,
    /// First messages `UserPromptSubmit` hooks let through before their
    /// session existed ([`Runtime::screen_first_prompt`]), with what the
    /// hooks added: not screened twice.
    screened: std::sync::Mutex<std::collections::HashMap<SessionId, Vec<String>>>,
}

/// How many seeds a runtime keeps ([`Runtime::seed`]) before it forgets them
/// all: more than the sessions a busy server runs at once (a thousand in
/// `benches/load.rs`), or every message reads its seed again. A seed holds
/// the frozen prompt's text and files (the built-in tools are shared
/// elsewhere), a few KiB each.
const KEPT_SEEDS: usize = 2048;

impl Runtime {
    /// A runtime over its parts.
    pub fn new(parts: RuntimeParts) -> Self {
        let access = StoreAccess::new(parts.store.clone(), parts.agent.clone(), parts.memory_dir);
        let owner = LeaseOwner::this_process(parts.store.new_run_id().to_string());
        let window = context_window_of(&parts.provider.model, &parts.settings);
        let notifier = Notifier::default();
        let recorder = Recorder::new(
            parts.store.clone(),
            parts.agent.clone(),
            RuntimeFacts {
                model: parts.provider.model.clone(),
                strategy: parts.settings.strategy,
                context_window: window,
            },
        );
        let compactor = Compactor::new(
            parts.store.clone(),
            parts.agent.clone(),
            parts.provider.clone(),
            notifier.clone(),
            owner.clone(),
        );
        let checkpoints = Checkpoints::new(parts.store.clone(), parts.agent.clone());
        let leases =
            Leases::new(parts.store.clone(), parts.agent.clone(), owner, parts.settings.lease_ttl, parts.settings.busy);
        Self {
            inner: Arc::new(Inner {
                store: parts.store,
                agent: parts.agent,
                provider: parts.provider,
                tools: parts.tools,
                access,
                permissions: parts.permissions,
                settings: parts.settings,
                session_prompts: parts.session_prompts,
                notifier,
                queue: RunQueue::default(),
                recorder,
                compactor,
                checkpoints,
                continuation_hooks: continuation::CreationHooks::default(),
                leases,
                submissions: submit::Submissions::default(),
                seeds: std::sync::Mutex::default(),
                tool_lists: std::sync::Mutex::default(),
                hook_context: std::sync::Mutex::default(),
                screened: std::sync::Mutex::default(),
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.inner.store
    }

    /// The agent.
    pub fn agent(&self) -> &AgentId {
        &self.inner.agent
    }

    /// The model in use.
    pub fn model(&self) -> &ModelRef {
        &self.inner.provider.model
    }

    /// The settings in force.
    pub fn settings(&self) -> &RuntimeSettings {
        &self.inner.settings
    }

    /// Who may do what, and who is asked.
    pub fn permissions(&self) -> &Permissions {
        &self.inner.permissions
    }

    /// How this runtime takes and holds session leases.
    pub(crate) fn leases(&self) -> &Leases {
        &self.inner.leases
    }

    pub(crate) fn submissions(&self) -> &submit::Submissions {
        &self.inner.submissions
    }

    /// The seed of `session`: read once, then kept (a seed never changes;
    /// see `Inner::seeds`).
    pub(crate) fn seed(&self, session: SessionId) -> Result<Arc<seri_core::SessionSeed>, seri_store::StoreError> {
        let seeds = || self.inner.seeds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(seed) = seeds().get(&session) {
            return Ok(seed.clone());
        }
        let seed = Arc::new(self.agent_store().seed(session)?);
        let mut kept = seeds();
        if kept.len() >= KEPT_SEEDS {
            kept.clear();
        }
        kept.insert(session, seed.clone());
        Ok(seed)
    }

    pub(crate) fn agent_store(&self) -> seri_store::AgentStore<'_> {
        self.inner.store.agent(&self.inner.agent)
    }

    pub(crate) fn notify_session(&self, session_id: SessionId) {
        self.inner.notifier.session_changed(session_id);
    }

    /// The models the configured provider lists (for `/model NAME` to check
    /// a name against): `Ok(None)` when it has no list (the scripted
    /// provider), an error when asking it failed.
    pub async fn provider_models(&self) -> Result<Option<Vec<String>>, seri_providers::ProviderError> {
        self.inner.provider.provider.models().await
    }

    /// Sets the model `session` talks to from its next request on
    /// (`/model`), as a `model_changed` event; `None` goes back to the
    /// configured model. The model must be the configured provider's: its
    /// client (and key) is this runtime's. A run holding the session (another
    /// terminal's) makes this a clear refusal.
    pub fn set_model(&self, session: SessionId, model: Option<ModelRef>) -> Result<(), RunError> {
        if let Some(chosen) = &model
            && chosen.provider != self.inner.provider.model.provider
        {
            return Err(RunError::OtherProvider {
                chosen: format!("{}/{}", chosen.provider, chosen.model),
                configured: self.inner.provider.model.provider.clone(),
            });
        }
        let _lease = self.leases().try_now(session)?;
        self.settle_then_append(session, Some(seri_core::EventBody::ModelChanged(seri_core::ModelChanged { model })))?;
        self.notify_session(session);
        Ok(())
    }

    /// Sets the permission mode `session` runs under from its next call on
    /// (Shift+Tab in the REPL, `--permission-mode`, the API), as a
    /// `permission_mode_changed` event. A run holding the session makes this
    /// a clear refusal, as for `/model`.
    pub fn set_permission_mode(&self, session: SessionId, mode: seri_core::PermissionMode) -> Result<(), RunError> {
        let _lease = self.leases().try_now(session)?;
        let changed = seri_core::PermissionModeChanged { mode };
        self.settle_then_append(session, Some(seri_core::EventBody::PermissionModeChanged(changed)))?;
        self.notify_session(session);
        Ok(())
    }

    /// Changes `session`'s sandbox from its next call on (`/sandbox` in the
    /// REPL, the API's `PUT …/sandbox`), as a `sandbox_changed` event: what
    /// is set is chosen, what is left out stays. Stored, so every process
    /// on the database applies it, a restarted one and `seri -r` too. A run
    /// holding the session makes this a clear refusal, as for `/model`.
    pub fn set_sandbox(
        &self,
        session: SessionId,
        mode: Option<seri_core::SandboxMode>,
        network: Option<bool>,
    ) -> Result<(), RunError> {
        let _lease = self.leases().try_now(session)?;
        let changed = seri_core::SandboxChanged { mode, network };
        self.settle_then_append(session, Some(seri_core::EventBody::SandboxChanged(changed)))?;
        self.notify_session(session);
        Ok(())
    }

    /// The permission mode a session runs under: its own choice, else the
    /// runtime's (`--permission-mode`, `permissions.mode`).
    pub fn session_permission_mode(&self, info: &seri_core::SessionInfo) -> seri_core::PermissionMode {
        info.permission_mode.unwrap_or_else(|| self.inner.permissions.mode())
    }

    /// The permission mode a call of `run` runs under: its session's choice,
    /// else that of the nearest session up its delegations that made one (a
    /// plan-mode session's children only read too), else the runtime's.
    pub(crate) fn call_permission_mode(
        &self,
        run: &seri_tools::RunContext,
    ) -> Result<seri_core::PermissionMode, RunError> {
        self.permission_mode_above(run, None)
    }

    /// [`Runtime::call_permission_mode`], given the view of the run's own
    /// session, read already.
    pub(crate) fn call_permission_mode_from(
        &self,
        run: &seri_tools::RunContext,
        info: &SessionInfo,
    ) -> Result<seri_core::PermissionMode, RunError> {
        self.permission_mode_above(run, Some(info))
    }

    fn permission_mode_above(
        &self,
        run: &seri_tools::RunContext,
        mut known: Option<&SessionInfo>,
    ) -> Result<seri_core::PermissionMode, RunError> {
        let store = self.agent_store();
        let mut session = run.session_id;
        let mut parent = run.run.and_then(|r| r.kind.parent_run_id());
        // A bound on how far up delegations are followed, as the sandbox's.
        for _ in 0..16 {
            let mode = match known.take().filter(|info| info.id == session) {
                Some(info) => info.permission_mode,
                None => store.info(session)?.permission_mode,
            };
            if let Some(mode) = mode {
                return Ok(mode);
            }
            let Some(above) = parent else { break };
            let Some(record) = store.read(|r| r.run(above))? else { break };
            (session, parent) = (record.session_id, record.parent_run_id);
        }
        Ok(self.inner.permissions.mode())
    }

    /// The model a session's requests go to: its override (`/model`), when
    /// it is this runtime's provider's, else the configured model.
    pub fn session_model(&self, info: &seri_core::SessionInfo) -> ModelRef {
        match &info.model_override {
            Some(chosen) if chosen.provider == self.inner.provider.model.provider => chosen.clone(),
            _ => self.inner.provider.model.clone(),
        }
    }

    /// The context window of a session's model (see [`Runtime::session_model`]).
    pub fn session_context_window(&self, info: &seri_core::SessionInfo) -> u64 {
        context_window_of(&self.session_model(info), &self.inner.settings)
    }

    /// How a session is compacted: at half its model's window, keeping the
    /// budget in force, the recap written by the model its turns use.
    pub(crate) fn compaction_settings(&self, info: &seri_core::SessionInfo) -> CompactionSettings {
        let model = self.session_model(info);
        let settings = CompactionSettings::new(context_window_of(&model, &self.inner.settings), model);
        let keep = self.inner.settings.keep_tokens;
        if self.inner.settings.keep_tokens_chosen {
            settings.with_chosen_keep_tokens(keep)
        } else {
            settings.with_keep_tokens(keep)
        }
    }

    /// The continuation's test seams (fault injection in its creation
    /// transaction). For tests only.
    #[doc(hidden)]
    pub fn continuation_hooks(&self) -> &continuation::CreationHooks {
        &self.inner.continuation_hooks
    }

    /// Change notifications.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Notification> {
        self.inner.notifier.subscribe()
    }

    /// The context window in force for this runtime's model.
    pub fn context_window(&self) -> u64 {
        context_window_of(&self.inner.provider.model, &self.inner.settings)
    }

    /// Whether new runs are recorded.
    pub fn trajectory_recording(&self) -> bool {
        self.inner.recorder.recording()
    }

    /// Turns recording of new runs on or off (a run in progress keeps what
    /// it started with).
    pub fn set_trajectory_recording(&self, on: bool) {
        self.inner.recorder.set_recording(on);
    }

    /// Sets the configured knobs every new trajectory's header lists.
    pub fn set_trajectory_facts(&self, facts: TrajectoryFacts) {
        self.inner.recorder.set_facts(facts);
    }

    /// The working context of a session: its events from the newest recap
    /// on (only those are read), grouped into messages.
    pub(crate) fn working_context(&self, session: SessionId) -> Result<WorkingContext, RunError> {
        crate::compaction::working_context(&self.agent_store(), session)
    }

    /// `/compact [focus]`: compacts now, whatever the estimate. Returns
    /// what to tell the person; too little history is
    /// `Not enough history to compact.`; on the continue strategy nothing is
    /// compacted and it returns [`NOT_ON_CONTINUE`](crate::NOT_ON_CONTINUE).
    pub async fn compact_now(&self, session: SessionId, focus: &str) -> Result<String, RunError> {
        // The continue strategy's prompt tells the model its transcript is
        // never compacted; compacting it anyway would make that a lie.
        if self.inner.settings.strategy == ContextStrategy::Continue {
            return Ok(crate::compaction::NOT_ON_CONTINUE.to_owned());
        }
        // The recap must not land inside another run's turn: wait for the
        // session like a run does.
        let (_sender, never) = watch::channel(false);
        let no_write = |_: &mut seri_store::WriteTx<'_>| Ok(());
        let (_lease, _) = self.inner.leases.acquire(session, None, Lane::Interactive, &never, &no_write).await?;
        self.pre_compact_hooks(session, "manual", focus).await?;
        let settings = self.compaction_settings(&self.agent_store().info(session)?);
        self.inner.compactor.compact_now(session, &settings, focus).await
    }

    /// Creates a session in `cwd` with its system prompt frozen, so that
    /// every request of its life (and every `--resume`) sends the same
    /// cacheable prefix.
    pub fn create_session(&self, cwd: &str, system_prompt: FrozenPrompt) -> Result<SessionInfo, RunError> {
        self.create_titled_session(cwd, system_prompt, None)
    }

    /// [`Runtime::create_session`], with a title a person gave it (title
    /// source `user`); `None` leaves it untitled.
    pub fn create_titled_session(
        &self,
        cwd: &str,
        system_prompt: FrozenPrompt,
        title: Option<String>,
    ) -> Result<SessionInfo, RunError> {
        self.create_session_as(None, cwd, system_prompt, title)
    }

    /// A fresh session id, for a session created later with
    /// [`Runtime::create_session_as`] (the REPL screens a first message
    /// with its `UserPromptSubmit` hooks before its session exists).
    pub fn new_session_id(&self) -> SessionId {
        self.agent_store().new_seed("").id
    }

    /// [`Runtime::create_titled_session`], under `id` when given (from
    /// [`Runtime::new_session_id`]).
    pub fn create_session_as(
        &self,
        id: Option<SessionId>,
        cwd: &str,
        system_prompt: FrozenPrompt,
        title: Option<String>,
    ) -> Result<SessionInfo, RunError> {
        let store = self.inner.store.agent(&self.inner.agent);
        let mut seed = store.new_seed(cwd);
        if let Some(id) = id {
            seed.id = id;
        }
        seed.system_prompt = Some(system_prompt);
        if let Some(title) = title {
            seed.title = Some(title);
            seed.title_source = Some(seri_core::TitleSource::User);
        }
        let info = store.create_session(&seed)?;
        self.inner.notifier.session_changed(info.id);
        self.inner.notifier.send(Notification::AccountChange {
            reasons: vec![AccountChangeReason::SessionCreated],
            session_ids: vec![info.id],
        });
        Ok(info)
    }
}

/// The context window in force for `model` under `settings`.
fn context_window_of(model: &ModelRef, settings: &RuntimeSettings) -> u64 {
    effective_context_window(&model.provider, &model.model, settings.context_window).tokens.get()
}
