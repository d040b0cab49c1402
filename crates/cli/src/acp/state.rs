//! The sessions an editor has open, and the requests that open, list,
//! fork, close and configure them. A folder an editor works in is opened
//! once ([`Workspace`]: its project settings, MCP servers and runtime); a
//! session is an [`AcpSession`], named by the id the editor knows and
//! pointing at its lineage's head: a continuation moves the head, never
//! the editor's id.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AvailableCommand, AvailableCommandInput,
    AvailableCommandsUpdate, CloseSessionRequest, CloseSessionResponse, CurrentModeUpdate, ForkSessionRequest,
    ForkSessionResponse, Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities,
    SessionCloseCapabilities, SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption,
    SessionForkCapabilities, SessionId as AcpId, SessionInfo as AcpSessionInfo, SessionListCapabilities, SessionMode,
    SessionModeId, SessionModeState, SessionNotification, SessionResumeCapabilities, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
    UnstructuredCommandInput,
};
use agent_client_protocol::{Client, Error, ErrorCode};
use seri_core::{PermissionMode, SessionId, SessionInfo, Timestamp};
use seri_runloop::{Command, Runtime};
use seri_store::{SessionQuery, StoreErrorKind};

use crate::app::App;
use crate::args::RunFlags;
use crate::exit::Exit;

/// Sessions listed per page of `session/list`.
const PAGE: u64 = 50;

/// A folder an editor works in: the profile opened for it (its project's
/// trusted settings, its MCP servers) and the runtime its sessions run on.
pub(super) struct Workspace {
    pub(super) app: App,
    pub(super) runtime: Runtime,
    /// The models the provider lists, once it has answered (asked in the
    /// background when the folder opens; the scripted provider has none).
    models: OnceLock<Vec<String>>,
}

/// A session an editor has open.
pub(super) struct AcpSession {
    /// The id the editor knows it by: the session it created or loaded.
    pub(super) id: AcpId,
    /// Where it works.
    pub(super) workspace: Arc<Workspace>,
    /// The newest session of its lineage: where its next prompt goes.
    head: Mutex<SessionId>,
    /// A mode chosen while a turn held the session: it answers that turn's
    /// questions, and is recorded when the turn ends.
    pub(super) pending_mode: Mutex<Option<PermissionMode>>,
    /// Tools the person allowed (`true`) or rejected for the rest of the
    /// session.
    pub(super) remembered: Mutex<HashMap<String, bool>>,
    /// Prompts running or waiting now.
    pub(super) prompts: std::sync::atomic::AtomicUsize,
}

impl AcpSession {
    /// The session its next prompt goes to.
    pub(super) fn head(&self) -> SessionId {
        *self.head.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The working directory its tools work in.
    pub(super) fn cwd(&self) -> &Path {
        &self.workspace.app.cwd
    }
}

/// Everything `seri acp` holds: the flags it was started with, the folders
/// and sessions opened. (What the editor can do, its file system and
/// terminal, is not used: seri reads, writes and runs through its own
/// checked paths and sandbox.)
pub(super) struct Acp {
    flags: RunFlags,
    cx: OnceLock<ConnectionTo<Client>>,
    /// By folder and the editor's MCP servers for it (as sorted JSON).
    workspaces: tokio::sync::Mutex<HashMap<(PathBuf, String), Arc<Workspace>>>,
    sessions: Mutex<HashMap<AcpId, Arc<AcpSession>>>,
    /// Each head the sessions point at, to the session: a question a run
    /// asks names the seri session it runs in.
    heads: Mutex<HashMap<SessionId, Arc<AcpSession>>>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Questions seri asked that no tool call names (leaving plan mode),
    /// numbered so each has an id of its own.
    pub(super) asked: std::sync::atomic::AtomicU64,
}

impl Acp {
    pub(super) fn new(flags: RunFlags) -> Self {
        Self {
            flags,
            cx: OnceLock::new(),
            workspaces: tokio::sync::Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
            heads: Mutex::new(HashMap::new()),
            tasks: Mutex::new(Vec::new()),
            asked: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Keeps the connection, to send notifications and requests from tasks.
    pub(super) fn connected(&self, cx: &ConnectionTo<Client>) {
        let _ = self.cx.set(cx.clone());
    }

    /// Sends one update of `session` to the editor. A connection already
    /// gone drops it: there is nobody to tell.
    pub(super) fn notify(&self, session: &AcpId, update: SessionUpdate) {
        if let Some(cx) = self.cx.get()
            && let Err(error) = cx.send_notification(SessionNotification::new(session.clone(), update))
        {
            tracing::debug!("acp: an update was not sent: {error:?}");
        }
    }

    /// The connection, once the editor has said anything.
    pub(super) fn connection(&self) -> Option<&ConnectionTo<Client>> {
        self.cx.get()
    }

    /// Runs `work` on the runtime, kept so that shutting down waits for it.
    pub(super) fn spawn(
        self: Arc<Self>,
        work: impl Future<Output = agent_client_protocol::Result<()>> + Send + 'static,
    ) {
        let handle = tokio::spawn(async move {
            if let Err(error) = work.await {
                tracing::debug!("acp: an answer was not sent: {error:?}");
            }
        });
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        tasks.retain(|task| !task.is_finished());
        tasks.push(handle);
    }

    /// The editor went away, or a signal came: every turn still running is
    /// cancelled as a person's cancel is (its partial answer kept, its
    /// calls settled), and given `limit` to settle.
    pub(super) async fn shutdown(&self, limit: Duration) {
        let workspaces: Vec<Arc<Workspace>> = self.workspaces.lock().await.values().cloned().collect();
        for workspace in &workspaces {
            workspace.runtime.interrupt_all();
        }
        let tasks: Vec<_> = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(PoisonError::into_inner));
        let settled = tokio::time::timeout(limit, futures_util::future::join_all(tasks)).await;
        if settled.is_err() {
            tracing::warn!("acp: turns still running after {limit:?} were left to end with the process");
        }
    }

    pub(super) fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .close(SessionCloseCapabilities::new())
                    .fork(SessionForkCapabilities::new()),
            );
        InitializeResponse::new(request.protocol_version)
            .agent_capabilities(capabilities)
            .agent_info(Implementation::new("seri", env!("CARGO_PKG_VERSION")).title("seri".to_owned()))
            .auth_methods(self.auth_methods())
    }

    /// Where a provider needs a key that is not set: one method per
    /// variable, which the person sets in the editor's settings for seri
    /// (seri reads keys from the environment only).
    fn auth_methods(&self) -> Vec<AuthMethod> {
        match self.missing_key() {
            Some(variable) => vec![AuthMethod::Agent(
                AuthMethodAgent::new(format!("env:{variable}"), format!("Set {variable}")).description(format!(
                    "seri reads the key from {variable}: add it to the `env` of seri's entry in your editor's \
                     agent settings, then start the agent again"
                )),
            )],
            None => Vec::new(),
        }
    }

    /// The variable the configured provider's key is missing from, if it is.
    fn missing_key(&self) -> Option<String> {
        let cwd = std::env::current_dir().ok()?;
        App::open_in(&self.flags, cwd).ok()?.missing_key()
    }

    pub(super) fn authenticate(&self, request: &AuthenticateRequest) -> agent_client_protocol::Result<()> {
        match self.missing_key() {
            None => Ok(()),
            Some(variable) => Err(Error::new(
                ErrorCode::AUTH_REQUIRED,
                format!(
                    "{variable} is not set in seri's environment ({}): add it to the `env` of seri's entry in your \
                     editor's agent settings and start the agent again",
                    request.method_id.0
                ),
            )),
        }
    }

    /// The folder `cwd` with the editor's MCP `servers`, opened once: its
    /// profile and project settings, its MCP servers (the configured ones
    /// and the editor's), and the runtime whose questions go to the editor.
    async fn workspace(
        self: &Arc<Self>,
        cwd: &Path,
        servers: &[McpServer],
    ) -> agent_client_protocol::Result<Arc<Workspace>> {
        if !cwd.is_absolute() {
            return Err(invalid(format!("cwd must be an absolute path, not {}", cwd.display())));
        }
        if !cwd.is_dir() {
            return Err(invalid(format!("cwd {} is not a folder", cwd.display())));
        }
        let (editors, key) = editor_servers(servers)?;
        let key = (cwd.to_path_buf(), key);
        let mut workspaces = self.workspaces.lock().await;
        if let Some(workspace) = workspaces.get(&key) {
            return Ok(workspace.clone());
        }
        let flags = self.flags.clone();
        let folder = cwd.to_path_buf();
        let app = tokio::task::spawn_blocking(move || App::open_in(&flags, folder))
            .await
            .map_err(|e| internal(format!("opening the profile stopped: {e}")))?
            .map_err(exit_error)?;
        for line in &app.effective.overridden {
            tracing::info!("acp: {line}");
        }
        if let Some(variable) = app.missing_key() {
            return Err(Error::new(
                ErrorCode::AUTH_REQUIRED,
                format!(
                    "{variable} is not set in seri's environment: add it to the `env` of seri's entry in your editor's agent settings"
                ),
            ));
        }
        crate::mcp::start_with(&app, editors).await.map_err(exit_error)?;
        let approver = Arc::new(super::turn::Approver::new(Arc::downgrade(self)));
        let runtime = app.runtime(Some(approver)).map_err(exit_error)?;
        let workspace = Arc::new(Workspace { app, runtime, models: OnceLock::new() });
        workspaces.insert(key, workspace.clone());
        let listing = workspace.clone();
        tokio::spawn(async move {
            match listing.runtime.provider_models().await {
                Ok(Some(models)) => {
                    let _ = listing.models.set(models);
                }
                Ok(None) => {}
                Err(error) => tracing::info!("acp: the provider did not list its models: {error}"),
            }
        });
        Ok(workspace)
    }

    /// Opens `head`'s lineage for the editor under `id`.
    fn open(&self, id: AcpId, workspace: Arc<Workspace>, head: SessionId) -> Arc<AcpSession> {
        let session = Arc::new(AcpSession {
            id: id.clone(),
            workspace,
            head: Mutex::new(head),
            pending_mode: Mutex::new(None),
            remembered: Mutex::new(HashMap::new()),
            prompts: std::sync::atomic::AtomicUsize::new(0),
        });
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).insert(id, session.clone());
        self.heads.lock().unwrap_or_else(PoisonError::into_inner).insert(head, session.clone());
        session
    }

    /// The open session the editor names.
    pub(super) fn session(&self, id: &AcpId) -> agent_client_protocol::Result<Arc<AcpSession>> {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.get(id).cloned().ok_or_else(|| {
            Error::new(
                ErrorCode::RESOURCE_NOT_FOUND,
                format!("session {} is not open here: load or create it first", id.0),
            )
            .data(serde_json::json!({ "sessionId": id.0 }))
        })
    }

    /// The open session whose head is `head`.
    pub(super) fn by_head(&self, head: SessionId) -> Option<Arc<AcpSession>> {
        self.heads.lock().unwrap_or_else(PoisonError::into_inner).get(&head).cloned()
    }

    /// The open session a question is for: the one whose head asks, or,
    /// for a delegated run, the one up its delegations that the editor has
    /// open (the REPL asks a child's questions at the same prompt).
    pub(super) fn asking(&self, call: &seri_tools::CallRef) -> Option<Arc<AcpSession>> {
        if let Some(session) = self.by_head(call.session_id) {
            return Some(session);
        }
        let any = self.sessions.lock().unwrap_or_else(PoisonError::into_inner).values().next().cloned()?;
        let store = any.workspace.app.store.agent(&any.workspace.app.agent);
        let mut run = call.run_id?;
        // Delegation is bounded (subagents.maxDepth); so is this walk.
        for _ in 0..64 {
            let record = store.run(run).ok().flatten()?;
            if let Some(session) = self.by_head(record.session_id) {
                return Some(session);
            }
            run = record.parent_run_id?;
        }
        None
    }

    /// The session went on in `successor`: its next prompt goes there.
    pub(super) fn moved(&self, session: &Arc<AcpSession>, successor: SessionId) {
        *session.head.lock().unwrap_or_else(PoisonError::into_inner) = successor;
        self.heads.lock().unwrap_or_else(PoisonError::into_inner).insert(successor, session.clone());
    }

    pub(super) async fn new_session(
        self: Arc<Self>,
        request: NewSessionRequest,
    ) -> agent_client_protocol::Result<NewSessionResponse> {
        let workspace = self.workspace(&request.cwd, &request.mcp_servers).await?;
        let info = workspace.app.new_session_in(&workspace.runtime, &request.cwd, None).map_err(exit_error)?;
        crate::permission_mode::record_flag(&workspace.app, &workspace.runtime, info.id).map_err(exit_error)?;
        crate::headless::session_started(&workspace.runtime, info.id, "startup").await;
        let id = AcpId::new(info.id.to_string());
        let session = self.open(id.clone(), workspace, info.id);
        let (modes, options) = self.modes_and_options(&session)?;
        self.after_opening(&session);
        Ok(NewSessionResponse::new(id).modes(modes).config_options(options))
    }

    pub(super) async fn load_session(
        self: Arc<Self>,
        request: LoadSessionRequest,
    ) -> agent_client_protocol::Result<LoadSessionResponse> {
        let (session, lineage) = self.reopen(&request.session_id, &request.cwd, &request.mcp_servers).await?;
        let store = session.workspace.app.store.agent(&session.workspace.app.agent);
        let mut loaded = Vec::new();
        for id in &lineage {
            let info = store.info(*id).map_err(store_error)?;
            let events =
                store.events(*id, seri_store::SeqRange::starting_at(seri_core::Seq(1))).map_err(store_error)?;
            let short = store.short_id(*id).unwrap_or_else(|_| id.to_string());
            loaded.push((short, info, events));
        }
        let parts: Vec<super::replay::Part<'_>> = loaded
            .iter()
            .map(|(short, info, events)| super::replay::Part { short: short.clone(), title: &info.title, events })
            .collect();
        for update in super::replay::replay(&parts, session.cwd()) {
            self.notify(&session.id, update);
        }
        if let Some((_, head, _)) = loaded.last() {
            self.notify(&session.id, title_update(head));
        }
        let (modes, options) = self.modes_and_options(&session)?;
        self.after_opening(&session);
        Ok(LoadSessionResponse::new().modes(modes).config_options(options))
    }

    pub(super) async fn resume_session(
        self: Arc<Self>,
        request: ResumeSessionRequest,
    ) -> agent_client_protocol::Result<ResumeSessionResponse> {
        let (session, _) = self.reopen(&request.session_id, &request.cwd, &request.mcp_servers).await?;
        let (modes, options) = self.modes_and_options(&session)?;
        self.after_opening(&session);
        Ok(ResumeSessionResponse::new().modes(modes).config_options(options))
    }

    /// A fork by reference of the session's head, as it is now: a new
    /// session that shares the history without copying it.
    pub(super) async fn fork_session(
        self: Arc<Self>,
        request: ForkSessionRequest,
    ) -> agent_client_protocol::Result<ForkSessionResponse> {
        let (parent, _) = self.reopen(&request.session_id, &request.cwd, &request.mcp_servers).await?;
        let workspace = parent.workspace.clone();
        let store = workspace.app.store.agent(&workspace.app.agent);
        let fork = store.fork_session(parent.head(), None, seri_core::ForkVia::Acp).map_err(store_error)?;
        let id = AcpId::new(fork.id.to_string());
        let session = self.open(id.clone(), workspace, fork.id);
        let (modes, options) = self.modes_and_options(&session)?;
        self.after_opening(&session);
        Ok(ForkSessionResponse::new(id).modes(modes).config_options(options))
    }

    /// The session `id` names, checked (this agent's, started in `cwd`),
    /// opened for the editor with its head found; and its lineage, root
    /// to head. What a stopped process left in it is settled first.
    async fn reopen(
        self: &Arc<Self>,
        id: &AcpId,
        cwd: &Path,
        servers: &[McpServer],
    ) -> agent_client_protocol::Result<(Arc<AcpSession>, Vec<SessionId>)> {
        let workspace = self.workspace(cwd, servers).await?;
        let store = workspace.app.store.agent(&workspace.app.agent);
        let not_found = || {
            Error::new(ErrorCode::RESOURCE_NOT_FOUND, format!("no session {} of seri's in this profile", id.0))
                .data(serde_json::json!({ "sessionId": id.0 }))
        };
        let named: SessionId = id.0.parse().map_err(|_| not_found())?;
        let info = match store.info(named) {
            Ok(info) => info,
            Err(e) if e.kind() == StoreErrorKind::NotFound => return Err(not_found()),
            Err(e) => return Err(store_error(e)),
        };
        if !same_folder(Path::new(&info.cwd), cwd) {
            return Err(invalid(format!(
                "session {} was started in {}, not in {}: its tools work there; open it from that folder",
                id.0,
                info.cwd,
                cwd.display()
            )));
        }
        let lineage = lineage(&store, named).map_err(store_error)?;
        let mut head = lineage.last().copied().unwrap_or(named);
        if let Some(successor) = crate::headless::recover(&workspace.runtime, head).await.map_err(exit_error)? {
            // The successor's waiting message is answered by the next
            // prompt's run, which finds it settled.
            head = successor.session_id;
        }
        crate::permission_mode::record_flag(&workspace.app, &workspace.runtime, head).map_err(exit_error)?;
        crate::headless::session_started(&workspace.runtime, head, "resume").await;
        let session = self.open(id.clone(), workspace, head);
        Ok((session, lineage))
    }

    /// After a session is open: the commands it offers.
    fn after_opening(&self, session: &Arc<AcpSession>) {
        let commands = super::turn::available_commands(session)
            .into_iter()
            .map(|(name, description, hint)| {
                let command = AvailableCommand::new(name, description);
                match hint {
                    Some(hint) => {
                        command.input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint)))
                    }
                    None => command,
                }
            })
            .collect();
        self.notify(&session.id, SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)));
    }

    /// Each lineage's head once, newest first, `PAGE` at a time.
    pub(super) async fn list_sessions(
        self: Arc<Self>,
        request: ListSessionsRequest,
    ) -> agent_client_protocol::Result<ListSessionsResponse> {
        let folder = match &request.cwd {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir().map_err(|e| internal(format!("cannot read the working directory: {e}")))?,
        };
        let workspace = self.workspace(&folder, &[]).await?;
        let (updated_before, before_id) = match &request.cursor {
            Some(cursor) => {
                let (time, id) =
                    cursor.split_once('|').ok_or_else(|| invalid(format!("cursor {cursor:?} is not one of seri's")))?;
                let time =
                    Timestamp::parse(time).map_err(|_| invalid(format!("cursor {cursor:?} is not one of seri's")))?;
                let id: SessionId =
                    id.parse().map_err(|_| invalid(format!("cursor {cursor:?} is not one of seri's")))?;
                (Some(time), Some(id))
            }
            None => (None, None),
        };
        let query = SessionQuery {
            cwd: request.cwd.as_ref().map(|cwd| cwd.to_string_lossy().into_owned()),
            limit: Some(PAGE),
            without_children: true,
            updated_before,
            before_id,
        };
        let store = workspace.app.store.agent(&workspace.app.agent);
        let page = store.list_sessions(&query).map_err(store_error)?;
        let next = (page.len() as u64 == PAGE)
            .then(|| page.last().map(|last| format!("{}|{}", last.updated_at, last.id)))
            .flatten();
        let sessions = page
            .into_iter()
            .filter(|summary| summary.continued_to.is_none())
            .map(|summary| {
                AcpSessionInfo::new(summary.id.to_string(), PathBuf::from(&summary.cwd))
                    .title(summary.title.clone())
                    .updated_at(summary.updated_at.to_string())
            })
            .collect();
        Ok(ListSessionsResponse::new(sessions).next_cursor(next))
    }

    pub(super) async fn close_session(
        self: Arc<Self>,
        request: CloseSessionRequest,
    ) -> agent_client_protocol::Result<CloseSessionResponse> {
        let session = self.session(&request.session_id)?;
        let head = session.head();
        session
            .workspace
            .runtime
            .submit(Command::Cancel { session_id: head }, &seri_runloop::Quiet)
            .await
            .map_err(|e| internal(e.to_string()))?;
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(&request.session_id);
        self.heads.lock().unwrap_or_else(PoisonError::into_inner).retain(|_, open| !Arc::ptr_eq(open, &session));
        Ok(CloseSessionResponse::new())
    }

    /// `session/cancel`: the running turn stops as a person's Esc stops it
    /// (its partial answer kept), and so do the prompts waiting behind it.
    pub(super) fn cancel(&self, id: &AcpId) {
        let Ok(session) = self.session(id) else { return };
        let runtime = session.workspace.runtime.clone();
        let head = session.head();
        tokio::spawn(async move {
            let _ = runtime.submit(Command::Cancel { session_id: head }, &seri_runloop::Quiet).await;
        });
    }

    pub(super) fn set_mode(
        &self,
        request: SetSessionModeRequest,
    ) -> agent_client_protocol::Result<SetSessionModeResponse> {
        let session = self.session(&request.session_id)?;
        let mode = self.offered_mode(&request.mode_id.0)?;
        self.change_mode(&session, mode)?;
        Ok(SetSessionModeResponse::new())
    }

    pub(super) fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
    ) -> agent_client_protocol::Result<SetSessionConfigOptionResponse> {
        let session = self.session(&request.session_id)?;
        let value = request
            .value
            .as_value_id()
            .map(|v| v.0.to_string())
            .ok_or_else(|| invalid("seri's options take a value id".to_owned()))?;
        match request.config_id.0.as_ref() {
            "mode" => {
                let mode = self.offered_mode(&value)?;
                self.change_mode(&session, mode)?;
            }
            "model" => {
                let runtime = &session.workspace.runtime;
                let model = seri_core::ModelRef::new(runtime.model().provider.clone(), value);
                runtime
                    .set_model(session.head(), Some(model))
                    .map_err(|e| invalid(format!("the model cannot change now: {e}")))?;
            }
            other => return Err(invalid(format!("seri has no option {other:?}: it has mode and model"))),
        }
        let (_, options) = self.modes_and_options(&session)?;
        Ok(SetSessionConfigOptionResponse::new(options))
    }

    /// Records `mode` for the session now, or, while a turn holds it, for
    /// the questions of the rest of that turn and then on the session.
    pub(super) fn change_mode(
        &self,
        session: &Arc<AcpSession>,
        mode: PermissionMode,
    ) -> agent_client_protocol::Result<()> {
        match session.workspace.runtime.set_permission_mode(session.head(), mode) {
            Ok(()) => {}
            Err(_) if session.prompts.load(std::sync::atomic::Ordering::SeqCst) > 0 => {
                *session.pending_mode.lock().unwrap_or_else(PoisonError::into_inner) = Some(mode);
            }
            Err(e) => return Err(invalid(format!("the mode cannot change now: {e}"))),
        }
        self.notify(
            &session.id,
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(SessionModeId::new(mode.as_str()))),
        );
        Ok(())
    }

    /// A mode the editor may choose: `bypass` only when seri was started in
    /// it, as in the REPL.
    fn offered_mode(&self, id: &str) -> agent_client_protocol::Result<PermissionMode> {
        self.modes().into_iter().find(|mode| mode.as_str() == id).ok_or_else(|| {
            let names: Vec<&str> = self.modes().iter().map(|m| m.as_str()).collect();
            invalid(format!("no mode {id:?} here: the modes are {}", names.join(", ")))
        })
    }

    fn modes(&self) -> Vec<PermissionMode> {
        let bypass = self.flags.permission_mode.as_deref() == Some(PermissionMode::Bypass.as_str());
        PermissionMode::ALL.into_iter().filter(|mode| *mode != PermissionMode::Bypass || bypass).collect()
    }

    /// The session's modes (seri's permission modes), and the same as a
    /// config option beside the model.
    fn modes_and_options(
        &self,
        session: &Arc<AcpSession>,
    ) -> agent_client_protocol::Result<(SessionModeState, Vec<SessionConfigOption>)> {
        let workspace = &session.workspace;
        let info = workspace.app.store.agent(&workspace.app.agent).info(session.head()).map_err(store_error)?;
        let current = session
            .pending_mode
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .unwrap_or_else(|| workspace.runtime.session_permission_mode(&info));
        let modes: Vec<SessionMode> = self
            .modes()
            .into_iter()
            .map(|mode| SessionMode::new(mode.as_str(), mode_name(mode)).description(mode_description(mode).to_owned()))
            .collect();
        let mode_options = self
            .modes()
            .into_iter()
            .map(|mode| {
                SessionConfigSelectOption::new(mode.as_str(), mode_name(mode))
                    .description(mode_description(mode).to_owned())
            })
            .collect::<Vec<_>>();
        let model = workspace.runtime.session_model(&info);
        let mut models: Vec<SessionConfigSelectOption> = workspace
            .models
            .get()
            .into_iter()
            .flatten()
            .filter(|listed| **listed != model.model)
            .map(|listed| SessionConfigSelectOption::new(listed.clone(), format!("{}/{listed}", model.provider)))
            .collect();
        models.insert(
            0,
            SessionConfigSelectOption::new(model.model.clone(), format!("{}/{}", model.provider, model.model)),
        );
        let options = vec![
            SessionConfigOption::select("mode", "Mode", current.as_str(), mode_options)
                .category(SessionConfigOptionCategory::Mode),
            SessionConfigOption::select("model", "Model", model.model.clone(), models)
                .category(SessionConfigOptionCategory::Model),
        ];
        Ok((SessionModeState::new(current.as_str(), modes), options))
    }
}

/// The editor's MCP servers for a session, as seri's own server specs (the
/// same checks and defaults as `config.json`'s `mcpServers`), and a key that
/// is the same for the same servers. They come from the editor's settings,
/// the person's own; stdio servers start through the sandbox as every
/// server does.
fn editor_servers(servers: &[McpServer]) -> agent_client_protocol::Result<(Vec<seri_mcp::ServerSpec>, String)> {
    use serde_json::{Map, Value, json};
    let pairs = |items: Vec<(String, String)>| -> Map<String, Value> {
        items.into_iter().map(|(name, value)| (name, Value::from(value))).collect()
    };
    let mut declared = Map::new();
    for server in servers {
        let (name, value) = match server {
            McpServer::Stdio(stdio) => {
                let env = pairs(stdio.env.iter().map(|v| (v.name.clone(), v.value.clone())).collect());
                (stdio.name.clone(), json!({ "command": stdio.command, "args": stdio.args, "env": env }))
            }
            McpServer::Http(http) => {
                let headers = pairs(http.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect());
                (http.name.clone(), json!({ "type": "http", "url": http.url, "headers": headers }))
            }
            _ => return Err(invalid("seri starts stdio and HTTP MCP servers, not SSE ones".to_owned())),
        };
        if declared.insert(name.clone(), value).is_some() {
            return Err(invalid(format!("two MCP servers are named {name:?}")));
        }
    }
    let declared = Value::Object(declared);
    let env = |name: &str| std::env::var(name).ok();
    let specs =
        seri_mcp::parse_servers(&declared, "the editor's mcpServers", &env).map_err(|e| invalid(e.to_string()))?;
    Ok((specs, seri_core::json::sorted_string(&declared)))
}

/// The session's lineage: the sessions it continues, itself, and the ones
/// it continued into, oldest first.
fn lineage(store: &seri_store::AgentStore<'_>, id: SessionId) -> seri_store::Result<Vec<SessionId>> {
    let mut before = Vec::new();
    let mut at = store.info(id)?;
    while let Some(link) = &at.continued_from {
        if before.contains(&link.session_id) || before.len() > 10_000 {
            break;
        }
        before.push(link.session_id);
        at = store.info(link.session_id)?;
    }
    before.reverse();
    before.push(id);
    let mut at = store.info(id)?;
    while let Some(link) = &at.continued_to {
        if before.contains(&link.session_id) || before.len() > 10_000 {
            break;
        }
        before.push(link.session_id);
        at = store.info(link.session_id)?;
    }
    Ok(before)
}

/// The title the editor shows for a session.
pub(super) fn title_update(info: &SessionInfo) -> SessionUpdate {
    SessionUpdate::SessionInfoUpdate(
        agent_client_protocol::v1::schema::SessionInfoUpdate::new()
            .title(info.title.clone())
            .updated_at(info.updated_at.to_string()),
    )
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn mode_name(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "Default",
        PermissionMode::AcceptEdits => "Accept edits",
        PermissionMode::Plan => "Plan",
        PermissionMode::Bypass => "Bypass permissions",
    }
}

fn mode_description(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "Reading runs; edits and commands ask as configured",
        PermissionMode::AcceptEdits => "Edits inside the folder run without asking; commands ask as configured",
        PermissionMode::Plan => "Only reading tools run: seri looks around and proposes a plan",
        PermissionMode::Bypass => "Nothing asks; deny rules still refuse",
    }
}

/// A bad parameter, in the protocol's code, with what was wrong.
pub(super) fn invalid(message: String) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

/// seri could not do what was asked, with why.
pub(super) fn internal(message: String) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}

/// A store error, as the editor reads it.
pub(super) fn store_error(error: seri_store::StoreError) -> Error {
    internal(error.to_string())
}

/// A refusal of seri's, as the editor reads it: a usage error is a bad
/// parameter, anything else an internal error.
pub(super) fn exit_error(exit: Exit) -> Error {
    if exit.is_usage() { invalid(exit.message()) } else { internal(exit.message()) }
}
