//! One prompt of an editor's: its content made a message (text, files the
//! editor links or embeds, pictures), a slash command expanded or carried
//! out, the turn run with every update streamed as it happens, the
//! questions asked through `session/request_permission`, and the stop
//! reason answered.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, EmbeddedResourceResource, PermissionOption, PermissionOptionKind, PromptRequest,
    PromptResponse, RequestPermissionOutcome, RequestPermissionRequest, SessionUpdate, StopReason, TextContent,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use async_trait::async_trait;
use base64::Engine as _;
use seri_core::{PermissionMode, RunStatus};
use seri_runloop::{Command, Lane, RunEvent, RunObserver, RunOutcome, Submitted};
use seri_tools::{ApprovalRequest, Decision};

use super::replay::{agent_text, continued_line, plan};
use super::state::{Acp, AcpSession, internal, invalid, store_error, title_update};
use super::tools::{Call, Ended};

/// The largest file whose text is read before a write, so the editor's
/// diff shows what the write replaces.
const MAX_BEFORE_BYTES: u64 = 256 * 1024;

impl Acp {
    /// `session/prompt`: runs the turn and answers how it stopped. A prompt
    /// sent while another runs waits for it, as a second message typed in
    /// the REPL would; a cancel stops both.
    pub(super) async fn prompt(
        self: Arc<Self>,
        request: PromptRequest,
    ) -> agent_client_protocol::Result<PromptResponse> {
        let session = self.session(&request.session_id)?;
        session.prompts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let answered = self.clone().run_prompt(&session, &request.prompt).await;
        if session.prompts.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
            // A mode chosen during the turn is the session's from now on.
            let pending = session.pending_mode.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(mode) = pending
                && let Err(error) = session.workspace.runtime.set_permission_mode(session.head(), mode)
            {
                tracing::warn!("acp: the mode chosen during the turn was not recorded: {error}");
            }
        }
        answered
    }

    async fn run_prompt(
        self: Arc<Self>,
        session: &Arc<AcpSession>,
        blocks: &[ContentBlock],
    ) -> agent_client_protocol::Result<PromptResponse> {
        let workspace = &session.workspace;
        let app = &workspace.app;
        let content = Content::of(blocks)?;
        let mut line = content.text.clone();
        // A slash command: the person's own is expanded; `/compact` runs.
        if let Some(typed) = line.trim_start().strip_prefix('/') {
            let (name, arguments) = typed.split_once(char::is_whitespace).unwrap_or((typed, ""));
            if name == "compact" {
                let command = Command::Compact { session_id: session.head(), focus: arguments.trim().to_owned() };
                let said = match workspace.runtime.submit(command, &seri_runloop::Quiet).await {
                    Ok(Submitted::Compacted(text)) => text,
                    Ok(_) => String::new(),
                    Err(error) => error.to_string(),
                };
                self.notify(&session.id, agent_text(said));
                return Ok(PromptResponse::new(StopReason::EndTurn));
            }
            // What the REPL would print, as the answer, with no model call.
            let told = match name {
                "context" => Some(
                    workspace
                        .runtime
                        .context_report(session.head())
                        .map(|report| format!("```\n{}\n```", crate::slash::context_lines(&report)))
                        .map_err(|e| internal(e.to_string()))?,
                ),
                "config" => Some(crate::slash::config_text(app).map_err(super::state::exit_error)?),
                "memory" => Some(crate::slash::memory_text(app).map_err(super::state::exit_error)?),
                _ => None,
            };
            if let Some(text) = told {
                self.notify(&session.id, agent_text(text));
                return Ok(PromptResponse::new(StopReason::EndTurn));
            }
            if let Some(command) = own_commands(session).into_iter().find(|command| command.name == name) {
                line = command.expand(arguments);
            }
        }
        let head = session.head();
        let store = app.store.agent(&app.agent);
        // `@path` words as in the REPL, then the files the editor links.
        let exit_error = super::state::exit_error;
        let mentioned = crate::mentions::read(session.cwd(), &line).map_err(exit_error)?;
        let (mut message, _) =
            mentioned.with_files(&content.links).map_err(exit_error)?.into_message(&store, head).map_err(exit_error)?;
        // The files the editor embeds, as it has them (unsaved changes too).
        for (uri, text) in &content.embedded {
            message.raw_markdown.get_or_insert_with(|| line.clone());
            message.content.push_str("\n\n");
            message.content.push_str(&seri_prompt::mentioned_file(uri, text));
        }
        for (name, media_type, bytes) in &content.blobs {
            let attachment =
                store.store_attachment(head, name.clone(), media_type.clone(), bytes).map_err(store_error)?;
            message.attachments.push(attachment);
        }
        if message.content.trim().is_empty() && message.attachments.is_empty() {
            return Err(invalid("the prompt is empty: it has no text, file or picture".to_owned()));
        }
        let observer = Observer { acp: self.clone(), session: session.clone(), calls: Mutex::new(HashMap::new()) };
        let outcomes = self.send(session, message, &observer).await?;
        let answered = self.stop_reason(session, &outcomes)?;
        if answered.stop_reason != StopReason::EndTurn || !self.in_plan_mode(session) {
            return Ok(answered);
        }
        // A turn in plan mode ended with an answer: whether to carry the
        // plan out is the person's question, as in the REPL.
        let Some(mode) = self.leave_plan(session).await else { return Ok(answered) };
        self.change_mode(session, mode)?;
        let go = seri_core::Message::user(seri_prompt::text::requests::PLAN_APPROVED);
        let outcomes = self.send(session, go, &observer).await?;
        self.stop_reason(session, &outcomes)
    }

    /// Sends `message` to the session's head and runs it to the end.
    async fn send(
        &self,
        session: &Arc<AcpSession>,
        message: seri_core::Message,
        observer: &Observer,
    ) -> agent_client_protocol::Result<Vec<RunOutcome>> {
        let runtime = &session.workspace.runtime;
        let max_turns = runtime.settings().max_turns;
        let command =
            Command::Send { session_id: session.head(), message, lane: Lane::Interactive, max_turns: Some(max_turns) };
        match runtime.submit(command, observer).await.map_err(|e| internal(e.to_string()))? {
            Submitted::Ran(outcomes) => Ok(outcomes),
            _ => Ok(Vec::new()),
        }
    }

    /// Whether the session's head runs in plan mode now.
    fn in_plan_mode(&self, session: &AcpSession) -> bool {
        let workspace = &session.workspace;
        let pending = *session.pending_mode.lock().unwrap_or_else(PoisonError::into_inner);
        let recorded = workspace.app.store.agent(&workspace.app.agent).info(session.head()).ok();
        let mode = pending.or_else(|| recorded.map(|info| workspace.runtime.session_permission_mode(&info)));
        mode == Some(PermissionMode::Plan)
    }

    /// Asks the editor whether to leave plan mode and carry the plan out:
    /// the mode to go on in, or `None` to keep planning.
    async fn leave_plan(&self, session: &AcpSession) -> Option<PermissionMode> {
        let cx = self.connection()?;
        // An id of its own each time: an editor keys its tool-call rows by id.
        let asked_id = format!("leave-plan-{}", self.asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
        let fields = ToolCallUpdateFields::new()
            .title("Carry out this plan?".to_owned())
            .kind(ToolKind::SwitchMode)
            .status(ToolCallStatus::Pending);
        let options = vec![
            PermissionOption::new("default", "Yes, and ask before changes", PermissionOptionKind::AllowOnce),
            PermissionOption::new("accept-edits", "Yes, and accept edits", PermissionOptionKind::AllowAlways),
            PermissionOption::new("plan", "No, keep planning", PermissionOptionKind::RejectOnce),
        ];
        let asked = RequestPermissionRequest::new(session.id.clone(), ToolCallUpdate::new(asked_id, fields), options);
        let answer = cx.send_request(asked).block_task().await.ok()?;
        let RequestPermissionOutcome::Selected(selected) = answer.outcome else { return None };
        match selected.option_id.0.as_ref() {
            "default" => Some(PermissionMode::Default),
            "accept-edits" => Some(PermissionMode::AcceptEdits),
            _ => None,
        }
    }

    /// How the turn ended, in the protocol's words. A failure is an error
    /// carrying why; what was answered before it is already streamed and
    /// stored.
    fn stop_reason(
        &self,
        session: &Arc<AcpSession>,
        outcomes: &[RunOutcome],
    ) -> agent_client_protocol::Result<PromptResponse> {
        let Some(last) = outcomes.last() else { return Ok(PromptResponse::new(StopReason::EndTurn)) };
        let reason = match last.status {
            RunStatus::Succeeded => {
                let store = session.workspace.app.store.agent(&session.workspace.app.agent);
                let said = store.newest_assistant_message(last.session_id).ok().flatten();
                let stop = said.and_then(|event| match event.body {
                    seri_core::EventBody::Message(message) => message.meta.and_then(|meta| meta.stop_reason),
                    _ => None,
                });
                match stop.as_deref() {
                    Some("max_tokens") => StopReason::MaxTokens,
                    Some("refusal") => StopReason::Refusal,
                    _ => StopReason::EndTurn,
                }
            }
            RunStatus::MaxTurns => StopReason::MaxTurnRequests,
            RunStatus::Cancelled | RunStatus::Interrupted => StopReason::Cancelled,
            RunStatus::Failed | RunStatus::Running => {
                let why = last.error.clone().unwrap_or_else(|| "the turn failed without an error".to_owned());
                return Err(internal(why));
            }
        };
        Ok(PromptResponse::new(reason))
    }
}

/// What an editor's prompt holds: its words, the files it links (read from
/// disk as `@` mentions are), the files it embeds (their text as the editor
/// has it, unsaved changes included), and pictures and other binary files.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Content {
    pub(super) text: String,
    pub(super) links: Vec<PathBuf>,
    pub(super) embedded: Vec<(String, String)>,
    pub(super) blobs: Vec<(String, Option<String>, Vec<u8>)>,
}

impl Content {
    /// Sorts `blocks` out; a link seri cannot open, or base64 that is not,
    /// is refused naming it.
    pub(super) fn of(blocks: &[ContentBlock]) -> agent_client_protocol::Result<Self> {
        let mut content = Content::default();
        let decode = |data: &str, what: &str| {
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| invalid(format!("{what} is not base64: {e}")))
        };
        for block in blocks {
            match block {
                ContentBlock::Text(text) => {
                    if !content.text.is_empty() {
                        content.text.push('\n');
                    }
                    content.text.push_str(&text.text);
                }
                ContentBlock::ResourceLink(link) => content.links.push(file_path(&link.uri)?),
                ContentBlock::Resource(embedded) => match &embedded.resource {
                    EmbeddedResourceResource::TextResourceContents(resource) => {
                        content.embedded.push((shown_uri(&resource.uri), resource.text.clone()));
                    }
                    EmbeddedResourceResource::BlobResourceContents(resource) => {
                        let bytes = decode(&resource.blob, &resource.uri)?;
                        content.blobs.push((name_of(&resource.uri), resource.mime_type.clone(), bytes));
                    }
                    _ => return Err(invalid("an embedded resource seri does not know".to_owned())),
                },
                ContentBlock::Image(image) => {
                    let bytes = decode(&image.data, "a picture")?;
                    let name = image.uri.as_deref().map_or_else(|| "picture".to_owned(), name_of);
                    content.blobs.push((name, Some(image.mime_type.clone()), bytes));
                }
                ContentBlock::Audio(_) => {
                    return Err(invalid("seri takes no audio: the agent did not offer it".to_owned()));
                }
                _ => return Err(invalid("a content block seri does not know".to_owned())),
            }
        }
        Ok(content)
    }
}

/// The file a `file://` link names.
fn file_path(uri: &str) -> agent_client_protocol::Result<PathBuf> {
    url::Url::parse(uri)
        .ok()
        .filter(|url| url.scheme() == "file")
        .and_then(|url| url.to_file_path().ok())
        .ok_or_else(|| invalid(format!("seri opens file:// links to local files only, not {uri}")))
}

/// A file's path for the model: the path of a `file://` URI, else the URI.
fn shown_uri(uri: &str) -> String {
    file_path(uri).map_or_else(|_| uri.to_owned(), |path| path.display().to_string())
}

fn name_of(uri: &str) -> String {
    shown_uri(uri).rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or("file").to_owned()
}

/// The person's own commands: the profile's, and a project's once `seri
/// mcp trust` trusted its files as they are (a file in the workspace may
/// have been written by a model, as for `seri -p`).
fn own_commands(session: &AcpSession) -> Vec<crate::slash::CustomCommand> {
    let app = &session.workspace.app;
    let repository = crate::prompt_files::repository_root(session.cwd());
    crate::slash::custom_commands(&repository, app.profile.root(), app.project_trusted)
        .into_iter()
        .filter(|command| command.source.runs())
        .collect()
}

/// The commands the editor's menu offers: name, description, and the hint
/// for the words after it.
pub(super) fn available_commands(session: &AcpSession) -> Vec<(String, String, Option<String>)> {
    let said = |name: &str, what: &str, hint: Option<&str>| (name.to_owned(), what.to_owned(), hint.map(str::to_owned));
    let mut commands = vec![
        said(
            "compact",
            "Replace the oldest part of the working context with a recap (the compact strategy)",
            Some("what the recap should keep"),
        ),
        said("context", "What the next request holds, part by part, in tokens", None),
        said("config", "The configuration in force and where each value came from", None),
        said("memory", "The instruction, rule and memory files a session here reads", None),
    ];
    for command in own_commands(session) {
        commands.push((command.name.clone(), command.description.clone(), Some("arguments".to_owned())));
    }
    commands
}

/// A call under way, as the editor was told of it.
struct Started {
    name: String,
    arguments: serde_json::Value,
    /// A written file's text before the write.
    before: Option<String>,
}

/// Streams one prompt's runs to the editor as they happen.
struct Observer {
    acp: Arc<Acp>,
    session: Arc<AcpSession>,
    calls: Mutex<HashMap<String, Started>>,
}

impl RunObserver for Observer {
    fn event(&self, event: RunEvent) {
        let id = &self.session.id;
        let cwd = self.session.cwd();
        match event {
            RunEvent::TextDelta(text) => {
                self.acp.notify(id, SessionUpdate::AgentMessageChunk(ContentChunk::new(text_block(text))));
            }
            RunEvent::ThinkingDelta(text) => {
                self.acp.notify(id, SessionUpdate::AgentThoughtChunk(ContentChunk::new(text_block(text))));
            }
            RunEvent::ToolStarted { id: call_id, name, arguments } => {
                let before = (name == "write_file").then(|| file_before(&self.session, &arguments)).flatten();
                let call = Call { id: call_id.as_str(), name: &name, arguments: &arguments, cwd };
                self.acp.notify(id, SessionUpdate::ToolCall(call.started(before.as_deref())));
                let started = Started { name, arguments, before };
                self.calls.lock().unwrap_or_else(PoisonError::into_inner).insert(call_id.as_str().to_owned(), started);
            }
            RunEvent::ToolFinished { id: call_id, name, is_error, summary, facts, .. } => {
                let started = self.calls.lock().unwrap_or_else(PoisonError::into_inner).remove(call_id.as_str());
                let (arguments, before) = match started {
                    Some(started) if started.name == name => (started.arguments, started.before),
                    _ => (serde_json::Value::Null, None),
                };
                let call = Call { id: call_id.as_str(), name: &name, arguments: &arguments, cwd };
                let ended = Ended { is_error, summary: &summary, facts: facts.as_ref() };
                self.acp.notify(id, SessionUpdate::ToolCallUpdate(call.finished(&ended, before.as_deref())));
                if !is_error && matches!(name.as_str(), "plan" | "status") {
                    self.session_changed(&name);
                }
            }
            RunEvent::TurnRecorded { usage: Some(usage), window } => {
                let used = usage.input + usage.cache_read + usage.cache_write + usage.output;
                self.acp.notify(id, SessionUpdate::UsageUpdate(UsageUpdate::new(used, window)));
            }
            RunEvent::Continued(successor) => {
                self.acp.moved(&self.session, successor.session_id);
                let workspace = &self.session.workspace;
                let store = workspace.app.store.agent(&workspace.app.agent);
                let short = store.short_id(successor.session_id).unwrap_or_else(|_| successor.session_id.to_string());
                self.acp.notify(id, agent_text(continued_line(&short, &successor.title)));
                if let Ok(info) = store.info(successor.session_id) {
                    self.acp.notify(id, title_update(&info));
                }
            }
            RunEvent::Retrying(notice) => tracing::info!("acp: retrying the provider: {notice:?}"),
            _ => {}
        }
    }
}

impl Observer {
    /// After `plan` or `status`: the plan, or the title, as it is now.
    fn session_changed(&self, tool: &str) {
        let workspace = &self.session.workspace;
        let Ok(info) = workspace.app.store.agent(&workspace.app.agent).info(self.session.head()) else { return };
        let update = match tool {
            "plan" => SessionUpdate::Plan(plan(info.plan.as_ref())),
            _ => title_update(&info),
        };
        self.acp.notify(&self.session.id, update);
    }
}

/// The text of the file a `write_file` call names, for the editor's diff.
/// The model wrote the path and this read comes before any permission
/// check, so only a file inside the session's folder is read, never one of
/// seri's own places (the profile, wherever it sits, and what the sandbox
/// hides or keeps read-only).
fn file_before(session: &AcpSession, arguments: &serde_json::Value) -> Option<String> {
    let app = &session.workspace.app;
    let policy = app.sandbox.policy();
    let mut protected: Vec<&Path> = policy.hidden.iter().chain(&policy.read_only).map(PathBuf::as_path).collect();
    protected.push(app.profile.root());
    readable_before(session.cwd(), &protected, arguments.get("path")?.as_str()?)
}

/// [`file_before`]'s rule: `written` (relative to `cwd`, or absolute),
/// with links resolved, inside `cwd` and under none of `protected`, a
/// file of at most [`MAX_BEFORE_BYTES`] of text.
fn readable_before(cwd: &Path, protected: &[&Path], written: &str) -> Option<String> {
    let path = std::fs::canonicalize(cwd.join(written)).ok()?;
    if !path.starts_with(std::fs::canonicalize(cwd).ok()?) {
        return None;
    }
    if protected
        .iter()
        .any(|place| path.starts_with(std::fs::canonicalize(place).unwrap_or_else(|_| place.to_path_buf())))
    {
        return None;
    }
    let metadata = std::fs::metadata(&path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_BEFORE_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

fn text_block(text: String) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

/// Asks the editor every question seri would ask in the REPL, as
/// `session/request_permission` with the call's diff or command: allow
/// once, always (for the rest of the session), reject once, always.
pub(super) struct Approver {
    acp: Weak<Acp>,
}

impl Approver {
    pub(super) fn new(acp: Weak<Acp>) -> Self {
        Self { acp }
    }
}

#[async_trait]
impl seri_tools::Approver for Approver {
    async fn approve(&self, request: &ApprovalRequest) -> Decision {
        let Some(acp) = self.acp.upgrade() else { return Decision::Deny };
        let Some(call_ref) = &request.call else { return Decision::Deny };
        // A delegated run's question goes to the session that delegated.
        let Some(session) = acp.asking(call_ref) else {
            tracing::info!("acp: a question of session {} has nobody to answer it", call_ref.session_id);
            return Decision::Deny;
        };
        // A mode chosen during this turn answers as that mode would.
        let pending = *session.pending_mode.lock().unwrap_or_else(PoisonError::into_inner);
        match pending {
            Some(PermissionMode::Bypass) => return Decision::Allow,
            Some(PermissionMode::Plan) => return Decision::Deny,
            Some(PermissionMode::AcceptEdits)
                if matches!(request.tool.as_str(), "edit" | "write_file") && !request.outside_workspace =>
            {
                return Decision::Allow;
            }
            _ => {}
        }
        let remembered = session.remembered.lock().unwrap_or_else(PoisonError::into_inner).get(&request.tool).copied();
        match remembered {
            Some(false) => return Decision::Deny,
            Some(true) if !request.each_time => return Decision::Allow,
            _ => {}
        }
        let Some(cx) = acp.connection() else { return Decision::Deny };
        let cwd = session.cwd();
        let before = (request.tool == "write_file").then(|| file_before(&session, &request.arguments)).flatten();
        let call = Call { id: call_ref.call_id.as_str(), name: &request.tool, arguments: &request.arguments, cwd };
        let fields = ToolCallUpdateFields::new()
            .title(request.summary())
            .kind(call.kind())
            .status(ToolCallStatus::Pending)
            .content(call.preview(before.as_deref()))
            .locations(call.locations())
            .raw_input(request.arguments.clone());
        let mut options = vec![PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce)];
        if !request.each_time {
            let always = format!("Always allow {} in this session", request.tool);
            options.push(PermissionOption::new("allow-always", always, PermissionOptionKind::AllowAlways));
        }
        options.push(PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce));
        let never = format!("Always reject {} in this session", request.tool);
        options.push(PermissionOption::new("reject-always", never, PermissionOptionKind::RejectAlways));
        let asked = RequestPermissionRequest::new(
            session.id.clone(),
            ToolCallUpdate::new(call_ref.call_id.as_str().to_owned(), fields),
            options,
        );
        let answer = match cx.send_request(asked).block_task().await {
            Ok(answer) => answer,
            Err(error) => {
                tracing::info!("acp: a permission question got no answer: {error:?}");
                return Decision::Deny;
            }
        };
        match answer.outcome {
            RequestPermissionOutcome::Selected(selected) => match selected.option_id.0.as_ref() {
                "allow" => Decision::Allow,
                "allow-always" => {
                    session
                        .remembered
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(request.tool.clone(), true);
                    Decision::AllowForSession
                }
                "reject-always" => {
                    session
                        .remembered
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(request.tool.clone(), false);
                    Decision::Deny
                }
                _ => Decision::Deny,
            },
            _ => Decision::Deny,
        }
    }
}

#[cfg(test)]
mod tests;
