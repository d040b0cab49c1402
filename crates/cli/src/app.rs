//! From the command line to a running [`Runtime`]: the profile, the
//! configuration in force, the provider, the tools, the permissions, and the
//! frozen system prompt of a new session.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use seri_core::{AgentId, FrozenPrompt, SessionId, SessionInfo};
use seri_import::{FolderCheck, LegacyImport as _};
use seri_prompt::{ContextStrategy, SystemPrompt};
use seri_providers::{ProviderKind, REQUEST_LOG_ENV, Settings, build_provider, process_env};
use seri_runloop::{BusyPolicy, GlobRules, Runtime, RuntimeParts, RuntimeSettings, SessionPromptError, SessionPrompts};
use seri_store::{Profile, Store, StoreOptions};
use seri_tools::{PermissionFlags, PermissionPolicy, Permissions, ToolRegistry};

use crate::args::RunFlags;
use crate::config::{ConfigFile, Effective, FlagSettings, resolve};
use crate::exit::Exit;
use crate::prompt_files;

/// Puts a question to a person and returns the line they answered (`None`
/// when the input ended).
pub(crate) type Ask<'a> = &'a mut dyn FnMut(&str) -> Option<String>;

/// An open profile with its configuration resolved.
pub(crate) struct App {
    /// The profile root and its paths.
    pub(crate) profile: Profile,
    /// The store: the profile's `seri.db`, or the database `store.url` names.
    pub(crate) store: Arc<Store>,
    /// Where the store's URL came from (`SERI_STORE_URL`, `store.url`, or
    /// the default: the profile's `seri.db`).
    pub(crate) store_origin: crate::config::Origin,
    /// `config.json` as read.
    pub(crate) config: ConfigFile,
    /// What is in force, and from where.
    pub(crate) effective: Effective,
    /// The flags given.
    pub(crate) flags: RunFlags,
    /// The working directory.
    pub(crate) cwd: PathBuf,
    /// The agent of the local command line.
    pub(crate) agent: AgentId,
    /// The project's `.seri/config.json`, if it has settings, and whether
    /// they were trusted (and so merged over the profile's).
    pub(crate) project_config: Option<(PathBuf, bool)>,
    /// Whether `seri mcp trust` trusted the project's files as they are
    /// now: its commands, skills, subagents, hooks and settings apply.
    pub(crate) project_trusted: bool,
    /// Claude Code's settings files: the person's and the project's, what
    /// each gives and what it does not.
    pub(crate) claude: crate::claude_setup::ClaudeSetup,
    /// The skills offered to new sessions, and those that are not, with why.
    pub(crate) skills: Arc<crate::skills::Skills>,
    /// The person's subagents `delegate` offers, and those it does not, with why.
    pub(crate) agents: crate::agents::Agents,
    /// Codex's `config.toml`, when the person has one: its MCP servers.
    pub(crate) codex: Option<crate::codex_setup::CodexFile>,
    /// The MCP servers, once started (`crate::mcp::start`): their tools join
    /// every runtime made after, and new sessions freeze them.
    pub(crate) mcp: std::sync::OnceLock<Arc<seri_mcp::McpServers>>,
    /// What `bash` may reach: `config.json`'s `sandbox` and `--sandbox`,
    /// with each session's `/sandbox` choices.
    pub(crate) sandbox: Arc<seri_tools::Sandbox>,
    /// The folders a server's sessions may work in (`seri serve`'s folder
    /// and `--folder`s), canonical; `None` in the CLI, which asks.
    pub(crate) folders: Option<Vec<PathBuf>>,
    /// A `git status` started before the profile was opened, for the new
    /// session's environment ([`App::keep_git_status`]).
    early_git: std::sync::Mutex<Option<prompt_files::GitStatus>>,
}

/// The profile's `config.json` with a trusted project's `.seri/config.json`
/// merged over it: objects key by key, anything else replaced. The result
/// is checked like any config file, naming the project's file.
fn merged_config(profile_config: &std::path::Path, project: &crate::mcp::ProjectSettings) -> Result<ConfigFile, Exit> {
    fn merge(base: &mut serde_json::Value, over: &serde_json::Value) {
        match (base, over) {
            (serde_json::Value::Object(base), serde_json::Value::Object(over)) => {
                for (key, value) in over {
                    merge(base.entry(key.clone()).or_insert(serde_json::Value::Null), value);
                }
            }
            (base, over) => *base = over.clone(),
        }
    }
    let mut value = match std::fs::read_to_string(profile_config) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| Exit::usage(format!("{}: not JSON: {e}", profile_config.display())))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("cannot read {}", profile_config.display())).into());
        }
    };
    if project.settings.contains_key("store") {
        return Err(Exit::usage(format!(
            "{}: `store` is read from the profile's config.json ({}) only: a project cannot move where sessions are kept",
            project.path.display(),
            profile_config.display()
        )));
    }
    merge(&mut value, &serde_json::Value::Object(project.settings.clone()));
    let label = format!("{} merged over {}", project.path.display(), profile_config.display());
    ConfigFile::parse(std::path::Path::new(&label), &value.to_string()).map_err(Exit::usage)
}

/// What a start's legacy import has to tell a person, if anything, each
/// session by its short id.
fn tell_news(agent: &seri_store::AgentStore<'_>, report: &seri_import::ImportReport) {
    if !report.is_quiet() {
        let short = |id| short_in(agent, id);
        eprintln!("{}", report.news_naming(&short));
    }
}

impl App {
    /// Opens (creating if needed) the profile and resolves the configuration,
    /// with a trusted project's `.seri/config.json` merged over the profile's,
    /// then imports the legacy session files not imported yet.
    pub(crate) fn open(flags: &RunFlags) -> Result<App, Exit> {
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        Self::open_in(flags, cwd)
    }

    /// [`App::open`] for work in `cwd` rather than the process's working
    /// directory: its project's settings and trust (`seri acp` opens one
    /// for each folder an editor names).
    pub(crate) fn open_in(flags: &RunFlags, cwd: PathBuf) -> Result<App, Exit> {
        let app = Self::open_before_import_in(flags, cwd)?;
        if let Some((dir, home)) = app.legacy_folder() {
            let agent = app.store.agent(&app.agent);
            let bar = crate::progress::Bar::new();
            let (report, _) =
                agent.import_legacy_sessions_and_read(&dir, &home, FolderCheck::FolderFirst, bar.tell(), |_| Ok(()))?;
            bar.done();
            tell_news(&agent, &report);
        }
        Ok(app)
    }

    /// [`App::open`], and `read`'s answer from the store as the legacy
    /// import leaves it. A command that only reads starts this way: `read`
    /// runs while the legacy folder is checked (see
    /// [`seri_import::LegacyImport::import_legacy_sessions_and_read`]), so it
    /// costs about the slower of the two rather than their sum.
    pub(crate) fn open_and_read<T>(
        flags: &RunFlags,
        read: impl FnMut(&seri_store::Reader<'_>) -> seri_store::Result<T>,
    ) -> Result<(App, T), Exit> {
        let app = Self::open_before_import(flags)?;
        let agent = app.store.agent(&app.agent);
        let answer = match app.legacy_folder() {
            Some((dir, home)) => {
                let bar = crate::progress::Bar::new();
                let (report, answer) =
                    agent.import_legacy_sessions_and_read(&dir, &home, FolderCheck::FolderFirst, bar.tell(), read)?;
                bar.done();
                tell_news(&agent, &report);
                answer?
            }
            None => agent.read(read)?,
        };
        Ok((app, answer))
    }

    fn open_before_import(flags: &RunFlags) -> Result<App, Exit> {
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        Self::open_before_import_in(flags, cwd)
    }

    fn open_before_import_in(flags: &RunFlags, cwd: PathBuf) -> Result<App, Exit> {
        let profile = Profile::from_env()?;
        profile.create()?;
        // The store is named by the profile's own config.json (or
        // SERI_STORE_URL), never by a project's: a project cannot move where
        // a person's sessions are kept.
        let profile_file = ConfigFile::load(&profile.config_path()).map_err(Exit::usage)?;
        // SERI_STORE_URL as set: an empty (or not UTF-8) one is refused,
        // never read as unset.
        let as_set = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
        let store_url = crate::config::store_url(&as_set, &profile_file).map_err(Exit::usage)?;
        let store = Arc::new(profile.open_store_url(
            store_url.value.as_deref(),
            StoreOptions { index_progress: crate::progress::index_progress(), ..StoreOptions::default() },
        )?);
        let agent = AgentId::local();
        let project = crate::mcp::project_settings(&store, &agent, &cwd)?;
        let (claude, skills, agents, project_trusted) = {
            let files = crate::mcp::project_files(&cwd)?;
            let trusted = crate::mcp::trusted(&store, &agent, &cwd, &files)?;
            let claude_home = crate::claude_setup::claude_home();
            let places = crate::skills::places(
                &crate::prompt_files::repository_root(&cwd),
                profile.root(),
                claude_home.as_deref(),
            );
            let agent_places = crate::agents::places(
                &crate::prompt_files::repository_root(&cwd),
                profile.root(),
                claude_home.as_deref(),
            );
            (
                crate::claude_setup::ClaudeSetup::find(
                    claude_home.as_deref(),
                    &files,
                    trusted,
                    crate::claude_setup::Places {
                        cwd: &cwd,
                        home: std::env::var_os("HOME").map(PathBuf::from).as_deref(),
                    },
                ),
                Arc::new(crate::skills::Skills::find(&places, trusted)),
                crate::agents::Agents::find(&agent_places, trusted),
                trusted,
            )
        };
        for file in claude.files.iter().filter(|f| !f.applied && !f.used.is_empty()) {
            eprintln!(
                "seri: {} ({}) applies only once you trust this project: seri mcp trust",
                file.path.display(),
                file.used.join("; ")
            );
        }
        let project_config = project.as_ref().map(|p| (p.path.clone(), p.trusted));
        let project_set = project.as_ref().filter(|p| p.trusted).map(|p| p.settings.clone());
        let config = match project {
            Some(project) if project.trusted => merged_config(&profile.config_path(), &project)?,
            Some(project) => {
                eprintln!(
                    "seri: {} has settings that apply only once you trust this project: seri mcp trust",
                    project.path.display()
                );
                profile_file
            }
            None => profile_file,
        };
        let flag_settings = FlagSettings {
            provider: flags.provider.clone().or_else(|| flags.script.as_ref().map(|_| "script".to_owned())),
            model: flags.model.clone(),
            context_strategy: flags.context_strategy.map(Into::into),
            context_window: flags.context_window,
            max_turns: flags.max_turns,
            temperature: flags.temperature,
            top_p: flags.top_p,
            max_output_tokens: flags.max_output_tokens,
            reasoning_effort: flags.reasoning_effort.clone(),
        };
        let mut effective = resolve(&flag_settings, &process_env, &config).map_err(Exit::usage)?;
        if let Some(project) = &project_set {
            crate::config::mark_project(&mut effective, project);
        }
        // A local server's window, when the configuration gives none.
        if effective.context_window.value.is_none()
            && let Ok(kind) = effective.provider.value.parse::<ProviderKind>()
            && crate::server_window::applies_to(kind)
        {
            let model = effective.model.value.clone().unwrap_or_else(|| crate::config::default_model(kind).to_owned());
            let settings = Settings {
                config: config.providers.get(kind.as_str()).cloned().unwrap_or_default(),
                ..Settings::default()
            };
            if let Some(window) = crate::server_window::window(profile.root(), kind, &model, &settings, &process_env) {
                effective.context_window = crate::config::Sourced {
                    value: Some(window.tokens),
                    origin: crate::config::Origin::Server(window.source.as_str()),
                };
            }
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        // seri's own places no command or tool reads or writes: the
        // profile (its config, keys, database, memory, rules; its hooks are
        // read-only) and the store's file where `store.url` puts it.
        let store_file = match seri_store::StoreUrl::parse(store_url.value.as_deref()) {
            Ok(seri_store::StoreUrl::Sqlite(Some(file))) => {
                Some(std::path::absolute(file).unwrap_or_else(|_| PathBuf::from(file)))
            }
            _ => None,
        };
        let mut own = crate::sandbox::own_places(profile.root(), store_file.as_deref());
        // Claude Code's `Read(…)` and `Edit(…)` deny rules: out of reach of tools and commands.
        let (deny_read, deny_write) = claude.kept_out();
        own.hidden.extend(deny_read);
        own.read_only.extend(deny_write);
        // Claude Code's and Codex's own folders are configuration seri
        // obeys (settings, hooks, rules, commands, skills, subagents, MCP
        // servers): never written by a command or tool, even where the
        // workspace or a writable path holds them (made or not).
        own.read_only.extend(crate::claude_setup::claude_home());
        own.read_only.extend(crate::codex_setup::codex_home());
        let sandbox = crate::sandbox::sandbox(&config.sandbox, flags.sandbox.as_deref(), home.as_deref(), &own)
            .map_err(Exit::usage)?;
        // A session's `/sandbox` choices are its `sandbox_changed` events,
        // read from the store at each call: what another server on the
        // database, or this one before a restart, recorded applies here.
        // A delegated child's calls take its parent session's: its runs
        // are found in the store too.
        let (runs, choices) = (store.clone(), store.clone());
        let sandbox = sandbox
            .with_run_lookup(Arc::new(move |agent, run| {
                let record = runs.agent(agent).read(|r| r.run(run)).ok().flatten()?;
                Some((record.session_id, record.parent_run_id))
            }))
            .with_choice_lookup(Arc::new(move |agent, session| match choices.agent(agent).info(session) {
                Ok(info) => Ok(seri_tools::SessionSandbox::of(&info)),
                Err(e) if e.kind() == seri_store::StoreErrorKind::NotFound => Ok(Default::default()),
                Err(e) => Err(e.to_string()),
            }));
        let app = App {
            sandbox: Arc::new(sandbox),
            profile,
            store,
            store_origin: store_url.origin,
            config,
            effective,
            flags: flags.clone(),
            cwd,
            agent,
            project_config,
            project_trusted,
            claude,
            skills,
            agents,
            codex: crate::codex_setup::find(crate::codex_setup::codex_home().as_deref()),
            mcp: std::sync::OnceLock::new(),
            early_git: std::sync::Mutex::new(None),
            folders: None,
        };
        // A keep budget a person chose is used as given, so one that could
        // never let compaction free anything is refused now, saying why. The
        // continue strategy never compacts: there the budget is unused, and
        // refusing it would stop a session for a setting that plays no part.
        let keep = &app.effective.keep_tokens;
        if keep.origin != crate::config::Origin::Default
            && app.effective.context_strategy.value == ContextStrategy::Compact
        {
            seri_projection::compaction::check_chosen_keep(app.context_window_of(None), keep.value)
                .map_err(|e| Exit::usage(format!("{} is {}: {e}", keep.origin, keep.value)))?;
        }
        Ok(app)
    }

    /// The older release's `sessions/` folder, when there is one, and the
    /// working directory its sessions get when their file names none: the
    /// home folder, so `--continue` in a project never picks up an
    /// unrelated old session. Every start imports the files not imported
    /// yet; files already imported are skipped quietly.
    fn legacy_folder(&self) -> Option<(PathBuf, String)> {
        let dir = self.profile.legacy_sessions_dir();
        if !dir.is_dir() {
            return None;
        }
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| self.profile.root().to_path_buf());
        Some((dir, home.to_string_lossy().into_owned()))
    }

    /// The working directory as sessions record it.
    pub(crate) fn cwd_text(&self) -> String {
        self.cwd.to_string_lossy().into_owned()
    }

    /// The runtime over this profile, with `permissions` deciding what the
    /// coding tools may do.
    pub(crate) fn runtime(&self, interactive: Option<Arc<dyn seri_tools::Approver>>) -> Result<Runtime, Exit> {
        self.runtime_for(&self.agent, interactive)
    }

    /// [`App::runtime`], for `agent`'s sessions (a server serves several).
    pub(crate) fn runtime_for(
        &self,
        agent: &AgentId,
        interactive: Option<Arc<dyn seri_tools::Approver>>,
    ) -> Result<Runtime, Exit> {
        let kind: ProviderKind = self.effective.provider.value.parse().map_err(Exit::usage)?;
        let model = self.effective.model.value.clone().unwrap_or_else(|| crate::config::default_model(kind).to_owned());
        let settings = Settings {
            config: self.config.providers.get(kind.as_str()).cloned().unwrap_or_default(),
            script: self.flags.script.clone(),
            request_log: process_env(REQUEST_LOG_ENV).map(PathBuf::from),
            ..Settings::default()
        };
        let provider = build_provider(kind, &model, &settings, &process_env).map_err(provider_error)?;
        // Claude Code's rules first; config.json's over them.
        let mut policy = PermissionPolicy::new();
        self.claude.apply(&mut policy).map_err(Exit::usage)?;
        if let Some(value) = &self.config.permissions {
            policy.apply_config(value).map_err(Exit::usage)?;
        }
        let mode = match &self.flags.permission_mode {
            Some(mode) => Some(mode.parse().map_err(|e| Exit::usage(format!("--permission-mode: {e}")))?),
            None => None,
        };
        let permission_flags = PermissionFlags {
            allow: self.flags.allow.clone(),
            deny: self.flags.deny.clone(),
            yes: self.flags.yes,
            mode,
        };
        policy.apply_flags(&permission_flags).map_err(Exit::usage)?;
        let permissions = match interactive {
            Some(approver) => Permissions::interactive(policy, approver),
            None => Permissions::headless(policy),
        };
        Ok(Runtime::new(RuntimeParts {
            store: self.store.clone(),
            agent: agent.clone(),
            provider,
            tools: self.tools(),
            memory_dir: self.profile.memory_dir(),
            permissions,
            settings: RuntimeSettings {
                strategy: self.effective.context_strategy.value,
                context_window: self.effective.context_window.value.and_then(std::num::NonZeroU64::new),
                keep_tokens: self.effective.keep_tokens.value,
                keep_tokens_chosen: self.effective.keep_tokens.origin != crate::config::Origin::Default,
                max_turns: self.effective.max_turns.value,
                // Zero is refused when config.json is read.
                child_max_turns: self.config.subagents.max_turns.unwrap_or(seri_runloop::CHILD_MAX_TURNS),
                max_parallel_children: self.config.subagents.parallel.unwrap_or(seri_runloop::MAX_PARALLEL_CHILDREN),
                busy: if self.flags.no_wait { BusyPolicy::Refuse } else { BusyPolicy::Wait },
                lease_ttl: seri_runloop::LEASE_TTL,
                // Hooks run as `bash` does: in its sandbox, without the secrets.
                hooks: self
                    .claude
                    .hooks(match &self.config.hooks {
                        Some(hooks) => seri_runloop::shell_hooks::Hooks::from_config(hooks).map_err(Exit::usage)?,
                        None => seri_runloop::shell_hooks::Hooks::default(),
                    })
                    .map_err(Exit::usage)?
                    .contained_in(self.sandbox.clone(), self.secrets()),
                folders: self.folders.clone(),
                generation: seri_runloop::Generation {
                    sampling: seri_providers::Sampling {
                        temperature: self.effective.temperature.value,
                        top_p: self.effective.top_p.value,
                        ..seri_providers::Sampling::default()
                    },
                    max_output_tokens: self.effective.max_output_tokens.value,
                    reasoning: self.effective.reasoning_effort.value,
                },
            },
            session_prompts: Some(Arc::new(FreshPrompts {
                profile: self.profile.clone(),
                strategy: self.effective.context_strategy.value,
                mcp: self.mcp.get().cloned(),
                skills: self.skills.clone(),
            })),
        }))
    }

    /// The environment variable the configured provider's key is read
    /// from, when it is not set (`seri acp` tells an editor to set it).
    pub(crate) fn missing_key(&self) -> Option<String> {
        let kind: ProviderKind = self.effective.provider.value.parse().ok()?;
        let model = self.effective.model.value.clone().unwrap_or_else(|| crate::config::default_model(kind).to_owned());
        let settings = Settings {
            config: self.config.providers.get(kind.as_str()).cloned().unwrap_or_default(),
            script: self.flags.script.clone(),
            ..Settings::default()
        };
        match build_provider(kind, &model, &settings, &process_env) {
            Err(seri_providers::SettingsError::MissingKey { variable, .. }) => Some(variable),
            _ => None,
        }
    }

    /// Says on standard error, at the start of a session's run, that the
    /// sandbox in force cannot be enforced on this kernel, and what that
    /// means: never a silent downgrade.
    pub(crate) fn tell_unenforced_sandbox(&self) {
        let policy = self.sandbox.policy();
        let enforceable = seri_tools::sandbox::probe(policy.network).map_err(|e| e.to_string());
        if let Some(notice) = crate::sandbox::unenforced_notice(policy, enforceable) {
            eprintln!("{notice}");
        }
    }

    /// The secrets of this process (see [`crate::sandbox::secrets`]): what
    /// `bash` and hooks run without, and what every tool result has
    /// redacted.
    fn secrets(&self) -> seri_tools::Secrets {
        let vars = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
        crate::sandbox::secrets(&self.config, &process_env, vars)
    }

    /// The tools: session verbs and coding tools, with delegation nested as
    /// deep as `subagents.maxDepth` allows.
    fn tools(&self) -> ToolRegistry {
        let mut tools = ToolRegistry::with_coding_tools();
        let secrets = self.secrets();
        let bash = seri_tools::BashSettings { secrets: secrets.clone(), sandbox: self.sandbox.clone() };
        tools.replace(Arc::new(seri_tools::Bash::new(bash)));
        tools.set_secrets(secrets);
        // The places no command reads (or writes) are the places no tool
        // reads or writes.
        let policy = self.sandbox.policy();
        // The tools never need the profile at all: all of it, whatever is
        // made there later, hooks/ included.
        let profile = self.profile.root().to_path_buf();
        tools.set_protected(policy.hidden.iter().chain(&policy.read_only).cloned().chain([profile]).collect());
        let depth = self.config.subagents.max_depth.unwrap_or(seri_tools::verbs::delegate::DEFAULT_MAX_DEPTH);
        let subagents = self.agents.found.iter().map(|f| f.agent.clone()).collect();
        tools.replace(Arc::new(seri_tools::Delegate::with_max_depth(depth).with_agents(subagents)));
        for tool in self.mcp.get().map(|m| m.tools()).unwrap_or_default() {
            tools.replace(tool);
        }
        // The verb exists where there are skills to load.
        if !self.skills.found.is_empty() {
            tools.replace(Arc::new(crate::skills::SkillTool { skills: self.skills.clone() }));
        }
        tools
    }

    /// Keeps a `git status` started early for the next new session, which
    /// reads it rather than start its own.
    pub(crate) fn keep_git_status(&self, status: Option<prompt_files::GitStatus>) {
        *self.early_git.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = status;
    }

    /// A new session in the working directory, its system prompt frozen from
    /// the strategy, AGENTS.md, rules and memory files as they are now.
    pub(crate) fn new_session(&self, runtime: &Runtime) -> Result<SessionInfo, Exit> {
        self.new_session_in(runtime, &self.cwd, None)
    }

    /// [`App::new_session`] in `cwd`, with a title a person gave it.
    pub(crate) fn new_session_in(
        &self,
        runtime: &Runtime,
        cwd: &Path,
        title: Option<String>,
    ) -> Result<SessionInfo, Exit> {
        self.new_session_as(runtime, None, cwd, title)
    }

    /// [`App::new_session_in`], under `id` when given.
    pub(crate) fn new_session_as(
        &self,
        runtime: &Runtime,
        id: Option<seri_core::SessionId>,
        cwd: &Path,
        title: Option<String>,
    ) -> Result<SessionInfo, Exit> {
        let early = self.early_git.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let strategy = self.effective.context_strategy.value;
        let prompt = freeze_prompt(cwd, &self.profile, strategy, self.mcp.get().map(Arc::as_ref), &self.skills, early)?;
        Ok(runtime.create_session_as(id, &cwd.to_string_lossy(), prompt, title)?)
    }

    /// The session `--continue` or `--resume ID` names, if either was given.
    pub(crate) fn session_to_open(
        &self,
        continue_recent: bool,
        resume: Option<&str>,
    ) -> Result<Option<SessionId>, Exit> {
        let store = self.store.agent(&self.agent);
        if continue_recent {
            let recent = store.most_recent_session(Some(&self.cwd_text()))?;
            return match recent {
                Some(summary) => Ok(Some(summary.id)),
                None => Err(Exit::usage(format!(
                    "no session to continue in {}: run `seri` to start one",
                    self.cwd.display()
                ))),
            };
        }
        match resume {
            Some(id) if !id.is_empty() => Ok(Some(store.resolve_session(id)?)),
            _ => Ok(None),
        }
    }

    /// The folder `id` was started in when it is not this one: its tools
    /// work there, whatever folder it is resumed from.
    pub(crate) fn other_folder(&self, id: SessionId) -> Result<Option<PathBuf>, Exit> {
        let info = self.store.agent(&self.agent).info(id)?;
        let theirs = PathBuf::from(&info.cwd);
        let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        };
        Ok((!same(&theirs, &self.cwd)).then_some(theirs))
    }

    /// Whether to go on with `id`, a session resumed from this folder
    /// (`-r`, `--resume`, `/resume`): one of this folder goes on; one of
    /// another folder is said so, and a person is asked (`ask` puts the
    /// question and returns the answer line, `None` when nobody can answer).
    /// Nobody to ask and no `--allow-other-folder`: a refusal naming the
    /// folder.
    pub(crate) fn resume_here(&self, id: SessionId, allowed: bool, ask: Option<Ask<'_>>) -> Result<bool, Exit> {
        let Some(theirs) = self.other_folder(id)? else { return Ok(true) };
        let short = short(self, id);
        if allowed {
            return Ok(true);
        }
        let Some(ask) = ask else {
            return Err(Exit::usage(format!(
                "session {short} was started in {}, not in this folder ({}), and its tools work there: \
                 run seri there (cd {} && seri -r {short}), or add --allow-other-folder to go on from here",
                theirs.display(),
                self.cwd.display(),
                theirs.display()
            )));
        };
        let question = format!(
            "Session {short} was started in {}, not in this folder ({}); its tools work in {}. Go on? [y/N] ",
            theirs.display(),
            self.cwd.display(),
            theirs.display()
        );
        let answer = ask(&question).unwrap_or_default();
        Ok(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
    }

    /// The context window of the model that last answered in a session
    /// (`model`), else of the configured one; `--context-window` wins. It
    /// needs no provider, so inspecting needs no API key.
    pub(crate) fn context_window_of(&self, model: Option<&seri_core::ModelRef>) -> u64 {
        let user_override = self.effective.context_window.value.and_then(std::num::NonZeroU64::new);
        let (provider, model) = match model {
            Some(m) => (m.provider.clone(), m.model.clone()),
            None => {
                let provider = self.effective.provider.value.clone();
                let model = self.effective.model.value.clone().unwrap_or_else(|| {
                    provider.parse::<ProviderKind>().map(crate::config::default_model).unwrap_or_default().to_owned()
                });
                (provider, model)
            }
        };
        seri_prompt::effective_context_window(&provider, &model, user_override).tokens.get()
    }

    /// Where the profile is, for messages.
    pub(crate) fn root(&self) -> &Path {
        self.profile.root()
    }
}

/// A session's system prompt: the strategy's, then AGENTS.md, rules and
/// memory files of `cwd` and `profile` as they are now.
fn freeze_prompt(
    cwd: &Path,
    profile: &Profile,
    strategy: ContextStrategy,
    mcp: Option<&seri_mcp::McpServers>,
    skills: &crate::skills::Skills,
    early_git: Option<prompt_files::GitStatus>,
) -> Result<FrozenPrompt, Exit> {
    let files = prompt_files::read(cwd, profile)?;
    let environment = prompt_files::environment(cwd, early_git);
    let mut prompt = SystemPrompt::builder(strategy)
        .files(files.frozen)
        .skills(skills.entries())
        .environment(environment)
        .build()
        .freeze();
    prompt.tools = mcp.map(crate::mcp::frozen_tools).unwrap_or_default();
    Ok(prompt)
}

/// How a successor freezes its own prompt: as a new session started in its
/// working directory now would.
struct FreshPrompts {
    profile: Profile,
    strategy: ContextStrategy,
    mcp: Option<Arc<seri_mcp::McpServers>>,
    skills: Arc<crate::skills::Skills>,
}

impl SessionPrompts for FreshPrompts {
    fn freeze(&self, cwd: &str) -> Result<FrozenPrompt, SessionPromptError> {
        freeze_prompt(Path::new(cwd), &self.profile, self.strategy, self.mcp.as_deref(), &self.skills, None)
            .map_err(|e| SessionPromptError(e.message()))
    }

    fn glob_rules(&self, cwd: &str) -> Result<GlobRules, SessionPromptError> {
        let files = prompt_files::read(Path::new(cwd), &self.profile).map_err(|e| SessionPromptError(e.message()))?;
        Ok(files.glob_rules)
    }
}

/// The shortest prefix of `id` that no other session of the profile
/// shares (at least 8 characters), which `--resume` and every other
/// command take back.
pub(crate) fn short(app: &App, id: SessionId) -> String {
    short_in(&app.store.agent(&app.agent), id)
}

/// [`short`], with the agent's store at hand.
pub(crate) fn short_in(store: &seri_store::AgentStore<'_>, id: SessionId) -> String {
    store.short_id(id).unwrap_or_else(|_| id.to_string())
}

/// Why no provider could be set up, for a person: a missing key names the
/// other providers' variables and the ways to try seri without any.
fn provider_error(error: seri_providers::SettingsError) -> Exit {
    let seri_providers::SettingsError::MissingKey { provider, .. } = &error else { return Exit::usage(error) };
    let others: Vec<String> = ProviderKind::ALL
        .into_iter()
        .filter(|kind| kind != provider)
        .filter_map(|kind| kind.key_variable().map(|variable| format!("{variable} with --provider {kind}")))
        .collect();
    Exit::usage(format!(
        "{error}.\nOr use another provider: {}; a local server needs no key (--provider ollama, or \
         openai-compatible with its baseUrl).\nWithout any key: `seri demo` shows seri working, and \
         `seri --provider script --script FILE` runs a scripted model.",
        others.join(", ")
    ))
}
