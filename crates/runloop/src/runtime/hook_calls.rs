//! Where the run loop runs the person's hooks (`crate::shell_hooks`): before
//! and after a tool call, on a person's message, when the agent (or a
//! child run) ends its turn, before `continue_session` and before a
//! compaction, and, for the clients, when a session starts and ends. The
//! hooks decide; this file only builds their input (Claude Code's, with a
//! `transcript_path` to the session as Claude Code's JSONL) and turns what
//! they said into what the model reads. Each round runs in the run's
//! sandbox and under its cancellation ([`HookPlace`]): a run cancelled
//! while a hook runs ends the hook and is `RunError::Cancelled`; a hook
//! that answers `"continue": false` ends the run, `RunError::HookStopped`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use seri_core::{Actor, DenialReason, EventBody, Message, PermissionDenied, Role, SessionId, ToolCall};
use seri_prompt::hook_words::{HookAfterCall, HookBlockedCall, HookKeptGoing};
use seri_tools::{ApprovalRequest, AskHook, HookAnswer, RunContext};
use tokio::sync::watch;

use super::Runtime;
use super::tool_call::Decided;
use crate::error::RunError;
use crate::shell_hooks::{HookCancelled, HookEvent, HookPlace, Verdict, base_input, tool_fields};

/// What `PreToolUse` hooks decided about a call.
pub(super) enum PreTool {
    /// Refused: what to record.
    Refused(Decided),
    /// Go on; `allow`: a hook let the call run without asking; `ask`: a
    /// hook wants the person asked.
    Go {
        /// A hook answered `permissionDecision: "allow"`.
        allow: bool,
        /// A hook answered `permissionDecision: "ask"`.
        ask: bool,
    },
}

/// The `PermissionRequest` hooks of one call: run when the call is about to
/// ask a person, with the call's fields as `PreToolUse` gets them; an
/// `allow` or `deny` answers for the person, anything else (a hook that
/// failed included) leaves the question to them.
struct PermissionRequestHooks {
    runtime: Runtime,
    mode: seri_core::PermissionMode,
    run: RunContext,
    cwd: PathBuf,
    call: ToolCall,
    cancel: watch::Receiver<bool>,
}

#[async_trait::async_trait]
impl AskHook for PermissionRequestHooks {
    async fn before_asking(&self, _request: &ApprovalRequest) -> HookAnswer {
        let event = HookEvent::PermissionRequest;
        let mut input = self.runtime.hook_input(event, self.run.session_id, &self.cwd, self.mode);
        tool_fields(&mut input, &self.call.name, &self.call.arguments, &self.cwd);
        let place = HookPlace { run: &self.run, cancel: Some(&self.cancel) };
        match self.runtime.hooks().run(event, Some(&self.call.name), &input, &self.cwd, place).await {
            Ok(Verdict::Proceed { allow: true, .. }) => HookAnswer::Allow,
            Ok(Verdict::Block { reason } | Verdict::Halt { reason }) => HookAnswer::Deny(reason),
            Ok(Verdict::Proceed { .. }) => HookAnswer::Ask,
            Err(e) => {
                tracing::warn!(session = %self.run.session_id, error = %e, "the PermissionRequest hooks did not run");
                HookAnswer::Ask
            }
        }
    }
}

impl From<HookCancelled> for RunError {
    fn from(_: HookCancelled) -> Self {
        RunError::Cancelled
    }
}

impl Runtime {
    fn hooks(&self) -> &crate::shell_hooks::Hooks {
        &self.inner.settings.hooks
    }

    /// Where hooks of `session` run outside a run: its own sandbox choices
    /// (the defaults for a session not made yet).
    fn outside_a_run(&self, session: SessionId) -> RunContext {
        RunContext {
            session_id: session,
            agent_id: self.agent().clone(),
            strategy: self.settings().strategy,
            run: None,
        }
    }

    /// The fields every event's input has, `transcript_path` among them:
    /// the session written as Claude Code's transcript, now.
    fn hook_input(&self, event: HookEvent, session: SessionId, cwd: &Path, mode: seri_core::PermissionMode) -> Value {
        let mut input = base_input(event, session, cwd, mode);
        input["transcript_path"] = match self.write_transcript(session, cwd) {
            Some(path) => json!(path.to_string_lossy()),
            None => Value::Null,
        };
        input
    }

    /// Writes the session as Claude Code's JSONL transcript to a file of
    /// this user's own (see [`crate::shell_hooks::transcript_file`]) and
    /// returns its path; `None`, logged, when it cannot.
    fn write_transcript(&self, session: SessionId, cwd: &Path) -> Option<PathBuf> {
        let events = match self.agent_store().events(session, seri_store::SeqRange::ALL) {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(%session, error = %e, "cannot read the session for a hook's transcript");
                return None;
            }
        };
        let text = crate::shell_hooks::claude::transcript(&events, session, cwd);
        match crate::shell_hooks::transcript_file(session, &text) {
            Ok(path) => Some(path),
            Err(e) => {
                tracing::warn!(%session, error = %e, "cannot write a hook's transcript");
                None
            }
        }
    }

    /// Runs `event`'s hooks for `session` outside a run (`SessionStart`,
    /// `SessionEnd`), with `matched` for their matchers (`startup`,
    /// `resume`; `clear`, `logout`, `other`) and `fields` added to their
    /// input. Returns what they printed for the model; a `SessionStart`
    /// hook's words are added to the session's next message.
    pub async fn session_hooks(
        &self,
        event: HookEvent,
        session: SessionId,
        matched: &str,
        fields: Value,
    ) -> Result<Vec<String>, RunError> {
        if self.hooks().matching(event, Some(matched)).is_empty() {
            return Ok(Vec::new());
        }
        let info = self.agent_store().info(session)?;
        let cwd = Path::new(&info.cwd);
        let mut input = self.hook_input(event, session, cwd, self.session_permission_mode(&info));
        if let (Value::Object(input), Value::Object(fields)) = (&mut input, fields) {
            input.extend(fields);
        }
        let run = self.outside_a_run(session);
        let place = HookPlace { run: &run, cancel: None };
        let context = match self.hooks().run(event, Some(matched), &input, cwd, place).await? {
            Verdict::Proceed { context, .. } => context,
            Verdict::Block { .. } | Verdict::Halt { .. } => Vec::new(),
        };
        if event == HookEvent::SessionStart && !context.is_empty() {
            self.inner
                .hook_context
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry(session)
                .or_default()
                .extend(context.iter().cloned());
        }
        Ok(context)
    }

    /// The status line: `command` run as a hook is (in the session's
    /// sandbox, at most `timeout`), with the fields every hook input has
    /// (`transcript_path` among them) and `fields` on its standard input;
    /// the first line it printed, or `None` when it failed.
    pub async fn status_line(
        &self,
        command: &str,
        timeout: std::time::Duration,
        session: SessionId,
        fields: Value,
    ) -> Result<Option<String>, RunError> {
        let info = self.agent_store().info(session)?;
        let cwd = Path::new(&info.cwd);
        let mut input = self.hook_input(HookEvent::Notification, session, cwd, self.session_permission_mode(&info));
        input["hook_event_name"] = json!("Status");
        if let (Value::Object(input), Value::Object(fields)) = (&mut input, fields) {
            input.extend(fields);
        }
        let run = self.outside_a_run(session);
        let place = HookPlace { run: &run, cancel: None };
        let command = crate::shell_hooks::HookCommand { command: command.to_owned(), timeout };
        let said = self.hooks().run_command(&command, &input, cwd, place).await;
        Ok(said.and_then(|out| out.lines().next().map(str::trim_end).map(str::to_owned)).filter(|l| !l.is_empty()))
    }

    /// `Notification`, when a run of `pending`'s session waits for a
    /// person's answer (`permission_prompt`): it blocks nothing, and its
    /// failure is logged. Clients that ask people run it as they show the
    /// question.
    pub async fn notification_hooks(&self, pending: &crate::PendingApproval) {
        let session = pending.call.session_id;
        let tool = crate::shell_hooks::claude_name(&pending.request.tool).unwrap_or(&pending.request.tool);
        let message = format!("seri needs your permission to use {tool}");
        let fields = json!({ "message": message, "notification_type": "permission_prompt" });
        if let Err(e) = self.session_hooks(HookEvent::Notification, session, "permission_prompt", fields).await {
            tracing::warn!(%session, error = %e, "the Notification hooks did not run");
        }
    }

    /// `UserPromptSubmit` for the first message (`prompt`, as typed) of
    /// `session`, which does not exist yet: a client that creates its
    /// session with its first message (the REPL) asks first, so a message
    /// a hook blocks leaves no empty session behind. The hook's words when
    /// it blocked; otherwise what the hooks added waits for the message,
    /// whose submission does not run them again.
    pub async fn screen_first_prompt(
        &self,
        session: SessionId,
        cwd: &Path,
        prompt: &str,
    ) -> Result<Option<String>, RunError> {
        if self.hooks().matching(HookEvent::UserPromptSubmit, None).is_empty() {
            return Ok(None);
        }
        let mut input = base_input(HookEvent::UserPromptSubmit, session, cwd, self.inner.permissions.mode());
        input["prompt"] = json!(prompt);
        // No session yet: the default sandbox choices apply.
        let run = self.outside_a_run(session);
        let place = HookPlace { run: &run, cancel: None };
        Ok(match self.hooks().run(HookEvent::UserPromptSubmit, None, &input, cwd, place).await? {
            Verdict::Block { reason } | Verdict::Halt { reason } => Some(reason),
            Verdict::Proceed { context, .. } => {
                self.inner.screened.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(session, context);
                None
            }
        })
    }

    /// `PreCompact`, before a compaction (`trigger`: `manual` or `auto`):
    /// it blocks nothing.
    pub(crate) async fn pre_compact_hooks(
        &self,
        session: SessionId,
        trigger: &str,
        instructions: &str,
    ) -> Result<(), RunError> {
        self.session_hooks(
            HookEvent::PreCompact,
            session,
            trigger,
            json!({ "trigger": trigger, "custom_instructions": instructions }),
        )
        .await
        .map(|_| ())
    }

    /// `PreContinue`, before `continue_session` starts a successor: a
    /// block's words, when a hook refused it.
    pub(super) async fn pre_continue_hooks(
        &self,
        run_ctx: &RunContext,
        cwd: &Path,
        call: &ToolCall,
        cancel: &watch::Receiver<bool>,
    ) -> Result<Option<String>, RunError> {
        if self.hooks().matching(HookEvent::PreContinue, None).is_empty() {
            return Ok(None);
        }
        let mode = self.call_permission_mode(run_ctx)?;
        let mut input = self.hook_input(HookEvent::PreContinue, run_ctx.session_id, cwd, mode);
        input["tool_input"] = call.arguments.clone();
        let place = HookPlace { run: run_ctx, cancel: Some(cancel) };
        match self.hooks().run(HookEvent::PreContinue, None, &input, cwd, place).await? {
            Verdict::Proceed { .. } => Ok(None),
            Verdict::Block { reason } => Ok(Some(reason)),
            Verdict::Halt { reason } => Err(RunError::HookStopped { event: "PreContinue", reason }),
        }
    }

    /// `PermissionRequest` hooks for `call`, to answer before the person is
    /// asked about it; `None` when no hook matches its tool.
    pub(super) fn permission_request_hooks(
        &self,
        run_ctx: &RunContext,
        cwd: &Path,
        call: &ToolCall,
        cancel: &watch::Receiver<bool>,
    ) -> Result<Option<std::sync::Arc<dyn AskHook>>, RunError> {
        if self.hooks().matching(HookEvent::PermissionRequest, Some(&call.name)).is_empty() {
            return Ok(None);
        }
        Ok(Some(std::sync::Arc::new(PermissionRequestHooks {
            runtime: self.clone(),
            mode: self.call_permission_mode(run_ctx)?,
            run: run_ctx.clone(),
            cwd: cwd.to_path_buf(),
            call: call.clone(),
            cancel: cancel.clone(),
        })))
    }

    /// `PreToolUse`: the refusal to record when a hook blocked `call`.
    pub(super) async fn pre_tool_hooks(
        &self,
        run_ctx: &RunContext,
        cwd: &Path,
        call: &ToolCall,
        cancel: &watch::Receiver<bool>,
    ) -> Result<PreTool, RunError> {
        if self.hooks().matching(HookEvent::PreToolUse, Some(&call.name)).is_empty() {
            return Ok(PreTool::Go { allow: false, ask: false });
        }
        let mode = self.call_permission_mode(run_ctx)?;
        let mut input = self.hook_input(HookEvent::PreToolUse, run_ctx.session_id, cwd, mode);
        tool_fields(&mut input, &call.name, &call.arguments, cwd);
        let place = HookPlace { run: run_ctx, cancel: Some(cancel) };
        Ok(match self.hooks().run(HookEvent::PreToolUse, Some(&call.name), &input, cwd, place).await? {
            Verdict::Proceed { allow, ask, .. } => PreTool::Go { allow, ask },
            Verdict::Halt { reason } => return Err(RunError::HookStopped { event: "PreToolUse", reason }),
            Verdict::Block { reason } => {
                let denial = EventBody::PermissionDenied(PermissionDenied {
                    tool_call_id: call.id.clone(),
                    tool: call.name.clone(),
                    reason: DenialReason::Hook,
                    detail: reason.clone(),
                });
                let mut refused = Decided::error(HookBlockedCall { reason: &reason }.to_string());
                if let Decided::Done { events, .. } = &mut refused {
                    events.push(denial);
                }
                PreTool::Refused(refused)
            }
        })
    }

    /// `PostToolUse`, after a call that succeeded: a hook's block puts its
    /// words after the result the model reads.
    pub(super) async fn post_tool_hooks(
        &self,
        run_ctx: &RunContext,
        cwd: &Path,
        call: &ToolCall,
        decided: &mut Decided,
        cancel: &watch::Receiver<bool>,
    ) -> Result<(), RunError> {
        let Decided::Done { text, is_error: false, .. } = decided else { return Ok(()) };
        if self.hooks().matching(HookEvent::PostToolUse, Some(&call.name)).is_empty() {
            return Ok(());
        }
        let mode = self.call_permission_mode(run_ctx)?;
        let mut input = self.hook_input(HookEvent::PostToolUse, run_ctx.session_id, cwd, mode);
        tool_fields(&mut input, &call.name, &call.arguments, cwd);
        input["tool_response"] = json!({"content": text.as_str(), "success": true});
        let place = HookPlace { run: run_ctx, cancel: Some(cancel) };
        match self.hooks().run(HookEvent::PostToolUse, Some(&call.name), &input, cwd, place).await? {
            Verdict::Block { reason } => text.push_str(&HookAfterCall { reason: &reason }.to_string()),
            Verdict::Proceed { context, .. } => {
                for said in context {
                    text.push_str(&HookAfterCall { reason: &said }.to_string());
                }
            }
            Verdict::Halt { reason } => return Err(RunError::HookStopped { event: "PostToolUse", reason }),
        }
        Ok(())
    }

    /// `Stop`, when the agent ended a person's turn: a hook's block is
    /// appended as a message the agent answers in another turn. `active`:
    /// this turn already went on because of a Stop hook (`stop_hook_active`,
    /// so a script can let it end).
    pub(super) async fn stop_hooks(
        &self,
        run_ctx: &RunContext,
        cwd: &Path,
        last_message: &str,
        active: bool,
        cancel: &watch::Receiver<bool>,
    ) -> Result<bool, RunError> {
        let event = match run_ctx.run.as_ref().map(|r| &r.kind) {
            None | Some(seri_tools::RunKind::Interactive) => HookEvent::Stop,
            Some(seri_tools::RunKind::DelegatedChild { .. } | seri_tools::RunKind::TypedChild { .. }) => {
                HookEvent::SubagentStop
            }
            Some(seri_tools::RunKind::Script) => return Ok(false),
        };
        if self.hooks().matching(event, None).is_empty() {
            return Ok(false);
        }
        let mode = self.call_permission_mode(run_ctx)?;
        let mut input = self.hook_input(event, run_ctx.session_id, cwd, mode);
        input["stop_hook_active"] = json!(active);
        input["last_assistant_message"] = json!(last_message);
        let place = HookPlace { run: run_ctx, cancel: Some(cancel) };
        let Verdict::Block { reason } = self.hooks().run(event, None, &input, cwd, place).await? else {
            return Ok(false);
        };
        let words = HookKeptGoing { event: event.as_str(), reason: &reason }.to_string();
        let message = Message { role: Role::User, actor: Actor::System, ..Message::user(words) };
        self.inner.leases.append(run_ctx.session_id, [EventBody::Message(message)])?;
        self.notify_session(run_ctx.session_id);
        Ok(true)
    }

    /// `UserPromptSubmit`, before a person's message is recorded: the
    /// hook's words when it blocked the message (nothing is recorded), or
    /// the message with what the hooks printed added to it. They run in
    /// the session's sandbox, under the submission's `cancel`.
    pub(crate) async fn prompt_hooks(
        &self,
        session: SessionId,
        mut message: Message,
        cancel: &watch::Receiver<bool>,
    ) -> Result<Result<Message, String>, RunError> {
        if message.actor != Actor::User {
            return Ok(Ok(message));
        }
        // What a SessionStart hook said comes with the session's first message.
        let started =
            self.inner.hook_context.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&session);
        for said in started.into_iter().flatten() {
            message.content.push_str("\n\n");
            message.content.push_str(&said);
        }
        // Screened before the session existed: what the hooks added, once.
        let screened = self.inner.screened.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&session);
        if let Some(context) = screened {
            for said in context {
                message.content.push_str("\n\n");
                message.content.push_str(&said);
            }
            return Ok(Ok(message));
        }
        if self.hooks().matching(HookEvent::UserPromptSubmit, None).is_empty() {
            return Ok(Ok(message));
        }
        let info = self.agent_store().info(session)?;
        let cwd = Path::new(&info.cwd);
        let mut input = self.hook_input(HookEvent::UserPromptSubmit, session, cwd, self.session_permission_mode(&info));
        input["prompt"] = json!(message.content);
        // No run yet: the session's own sandbox choices apply.
        let run = self.outside_a_run(session);
        let place = HookPlace { run: &run, cancel: Some(cancel) };
        Ok(match self.hooks().run(HookEvent::UserPromptSubmit, None, &input, cwd, place).await? {
            Verdict::Block { reason } | Verdict::Halt { reason } => Err(reason),
            Verdict::Proceed { context, .. } => {
                for said in context {
                    message.content.push_str("\n\n");
                    message.content.push_str(&said);
                }
                Ok(message)
            }
        })
    }
}

impl crate::protocol::RunOutcome {
    /// What a message a `UserPromptSubmit` hook blocked comes to: nothing
    /// was recorded and no run started (its id is the nil id, which names
    /// no run), failed with the hook's words.
    pub fn blocked_prompt(session_id: SessionId, reason: String) -> Self {
        Self {
            run_id: seri_core::RunId::from_bytes([0; 16]),
            session_id,
            status: seri_core::RunStatus::Failed,
            result: None,
            continued_to: None,
            turns: 0,
            usage: None,
            error: Some(format!("a UserPromptSubmit hook blocked the message, which was not sent: {reason}")),
            returned: None,
            store_out_of_reach: false,
            job_done: false,
            blocked_by_hook: Some(reason),
        }
    }

    /// What a message comes to when its submission was cancelled while a
    /// `UserPromptSubmit` hook ran: nothing was recorded and no run started
    /// (the nil run id, as for a blocked message), cancelled.
    pub(crate) fn cancelled_prompt(session_id: SessionId) -> Self {
        Self {
            status: seri_core::RunStatus::Cancelled,
            error: Some("cancelled while a UserPromptSubmit hook ran; the message was not sent".to_owned()),
            blocked_by_hook: None,
            ..Self::blocked_prompt(session_id, String::new())
        }
    }
}
