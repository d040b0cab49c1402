//! Where the run loop runs the person's hooks (`crate::shell_hooks`): before
//! and after a tool call, on a person's message, and when the agent ends an
//! interactive run's turn. The hooks decide; this file only builds their
//! input and turns a block into what the model reads. Each round runs in
//! the run's sandbox and under its cancellation ([`HookPlace`]): a run
//! cancelled while a hook runs ends the hook and is `RunError::Cancelled`.

use std::path::Path;

use serde_json::json;
use seri_core::{Actor, DenialReason, EventBody, Message, PermissionDenied, Role, SessionId, ToolCall};
use seri_prompt::hook_words::{HookAfterCall, HookBlockedCall, HookKeptGoing};
use seri_tools::RunContext;
use tokio::sync::watch;

use super::Runtime;
use super::tool_call::Decided;
use crate::error::RunError;
use crate::shell_hooks::{HookCancelled, HookEvent, HookPlace, Verdict, base_input, tool_fields};

impl From<HookCancelled> for RunError {
    fn from(_: HookCancelled) -> Self {
        RunError::Cancelled
    }
}

impl Runtime {
    fn hooks(&self) -> &crate::shell_hooks::Hooks {
        &self.inner.settings.hooks
    }

    /// `PreToolUse`: the refusal to record when a hook blocked `call`.
    pub(super) async fn pre_tool_hooks(
        &self,
        run_ctx: &RunContext,
        cwd: &Path,
        call: &ToolCall,
        cancel: &watch::Receiver<bool>,
    ) -> Result<Option<Decided>, RunError> {
        if self.hooks().matching(HookEvent::PreToolUse, Some(&call.name)).is_empty() {
            return Ok(None);
        }
        let mode = self.call_permission_mode(run_ctx)?;
        let mut input = base_input(HookEvent::PreToolUse, run_ctx.session_id, cwd, mode);
        tool_fields(&mut input, &call.name, &call.arguments);
        let place = HookPlace { run: run_ctx, cancel: Some(cancel) };
        Ok(match self.hooks().run(HookEvent::PreToolUse, Some(&call.name), &input, cwd, place).await? {
            Verdict::Proceed { .. } => None,
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
                Some(refused)
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
        let mut input = base_input(HookEvent::PostToolUse, run_ctx.session_id, cwd, mode);
        tool_fields(&mut input, &call.name, &call.arguments);
        input["tool_response"] = json!({"content": text.as_str(), "success": true});
        let place = HookPlace { run: run_ctx, cancel: Some(cancel) };
        if let Verdict::Block { reason } =
            self.hooks().run(HookEvent::PostToolUse, Some(&call.name), &input, cwd, place).await?
        {
            text.push_str(&HookAfterCall { reason: &reason }.to_string());
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
        let interactive = run_ctx.run.is_none_or(|r| matches!(r.kind, seri_tools::RunKind::Interactive));
        if !interactive || self.hooks().matching(HookEvent::Stop, None).is_empty() {
            return Ok(false);
        }
        let mode = self.call_permission_mode(run_ctx)?;
        let mut input = base_input(HookEvent::Stop, run_ctx.session_id, cwd, mode);
        input["stop_hook_active"] = json!(active);
        input["last_assistant_message"] = json!(last_message);
        let place = HookPlace { run: run_ctx, cancel: Some(cancel) };
        let Verdict::Block { reason } = self.hooks().run(HookEvent::Stop, None, &input, cwd, place).await? else {
            return Ok(false);
        };
        let message = Message {
            role: Role::User,
            actor: Actor::System,
            ..Message::user(HookKeptGoing { reason: &reason }.to_string())
        };
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
        if message.actor != Actor::User || self.hooks().matching(HookEvent::UserPromptSubmit, None).is_empty() {
            return Ok(Ok(message));
        }
        let info = self.agent_store().info(session)?;
        let cwd = Path::new(&info.cwd);
        let mut input = base_input(HookEvent::UserPromptSubmit, session, cwd, self.session_permission_mode(&info));
        input["prompt"] = json!(message.content);
        // No run yet: the session's own sandbox choices apply.
        let run = RunContext {
            session_id: session,
            agent_id: self.agent().clone(),
            strategy: self.settings().strategy,
            run: None,
        };
        let place = HookPlace { run: &run, cancel: Some(cancel) };
        Ok(match self.hooks().run(HookEvent::UserPromptSubmit, None, &input, cwd, place).await? {
            Verdict::Block { reason } => Err(reason),
            Verdict::Proceed { context } => {
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
    pub(crate) fn blocked_prompt(session_id: SessionId, reason: String) -> Self {
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
        }
    }

    /// What a message comes to when its submission was cancelled while a
    /// `UserPromptSubmit` hook ran: nothing was recorded and no run started
    /// (the nil run id, as for a blocked message), cancelled.
    pub(crate) fn cancelled_prompt(session_id: SessionId) -> Self {
        Self {
            status: seri_core::RunStatus::Cancelled,
            error: Some("cancelled while a UserPromptSubmit hook ran; the message was not sent".to_owned()),
            ..Self::blocked_prompt(session_id, String::new())
        }
    }
}
