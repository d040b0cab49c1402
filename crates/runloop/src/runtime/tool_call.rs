//! One tool call: announce it, checkpoint the file it may change, decide
//! what it comes to (a parked child's answer, a refusal, the tool's own
//! outcome, a continuation), and record its result with the events that go
//! with it and its trajectory records. A cancelled turn's unfinished calls
//! get cancelled results here too, so the transcript stays paired.

use std::any::Any;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use seri_core::{Actor, EventBody, Message, Role, SessionId, ToolCall, ToolResult};
use seri_prompt::Continued;
use seri_prompt::text::results;
use seri_tools::{
    ContinuationRequest, ContinueSession, RunContext, Tool, ToolAction, ToolContext, ToolError, ToolFacts, ToolImage,
    ToolOutcome, Workspace,
};
use tokio::sync::watch;

use super::Runtime;
use super::run::RunState;
use crate::continuation::{self, ContinuationContext, ContinuationRefused, predecessor_events, replay};
use crate::error::RunError;
use crate::notify::{AccountChangeReason, Notification};
use crate::protocol::{ContinuedTo, RunEvent, RunObserver};

impl Runtime {
    /// Runs one call of the turn and records its result, with the events
    /// and trajectory records that go with it.
    pub(super) async fn run_tool(
        &self,
        run_ctx: &RunContext,
        workspace: &Workspace,
        call: &ToolCall,
        state: &mut RunState,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> Result<(), RunError> {
        observer.event(RunEvent::ToolStarted {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        let recorder = &self.inner.recorder;
        let (run_id, session_id) = (state.run_id, run_ctx.session_id);
        recorder.record_tool_call(run_id, call);
        let checkpoint = self
            .inner
            .checkpoints
            .before(session_id, run_id, workspace, call, || recorder.run_turn(run_id, session_id));
        if let Some(saved) = &checkpoint {
            recorder.record(run_id, saved.record());
        }
        let second_continuation = call.name == ContinueSession.name()
            && state.turn_continuation.as_ref().is_some_and(|first| *first != call.id);
        let decided = match state.parked.take(&call.id, cancel).await {
            Some(parked) => parked?,
            None if second_continuation => Decided::error(results::SECOND_CONTINUATION_REFUSED.to_owned()),
            None => self.decide_tool(run_ctx, workspace, call, cancel).await?,
        };
        let (mut content, is_error, mut extra, facts, images) = match decided {
            Decided::Done { text, is_error, events, facts, images } => (text, is_error, events, facts, images),
            Decided::Returned { text, value } => match state.returned {
                None => {
                    state.returned = Some(value);
                    (text, false, Vec::new(), None, Vec::new())
                }
                Some(_) => (results::ALREADY_RETURNED.to_owned(), true, Vec::new(), None, Vec::new()),
            },
            Decided::Continued { continued, events } => {
                let text =
                    Continued { session_id: continued.session_id, title: &continued.title, reason: continued.reason }
                        .to_string();
                state.continued_to = Some(continued);
                (text, false, events, None, Vec::new())
            }
        };
        if let Some(pictures) = self.store_pictures(run_ctx.session_id, call, &images) {
            for attachment in &pictures.attachments {
                content.push_str(&format!("\n[attachment:{} \"{}\"]", attachment.id, attachment.name));
            }
            extra.push(EventBody::Message(pictures));
        }
        if !is_error {
            self.note_touched(workspace, call, state);
        }
        let summary = content.lines().next().unwrap_or("").to_owned();
        // A command that ran and failed is shown with what it printed last.
        let failed_output =
            facts.as_ref().and_then(ToolFacts::command).filter(|run| !run.exit.succeeded()).map(|run| {
                let before = run.lines.saturating_sub(run.tail.lines().count() as u64);
                if before == 0 { run.tail.clone() } else { format!("… {before} lines before\n{}", run.tail) }
            });
        // What a person is shown of the change the call made (a diff).
        let change = facts.as_ref().and_then(ToolFacts::diff).filter(|d| !d.is_empty()).map(str::to_owned);
        let result = ToolResult {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error,
            facts: facts.clone(),
        };
        let after = self.inner.checkpoints.finish(checkpoint);
        recorder.record_tool_outcome(run_id, call, &result, &extra, facts.as_ref(), after);
        let bodies = std::iter::once(EventBody::ToolResult(result)).chain(extra);
        self.inner.leases.append(run_ctx.session_id, bodies)?;
        self.inner.notifier.session_changed(run_ctx.session_id);
        observer.event(RunEvent::ToolFinished {
            id: call.id.clone(),
            name: call.name.clone(),
            is_error,
            summary,
            failed_output,
            change,
            facts,
        });
        if let Some(continued) = &state.continued_to {
            observer.event(RunEvent::Continued(continued.clone()));
        }
        Ok(())
    }

    /// Runs one call and decides what to record: its result text, whether it
    /// failed, and the events that go with it.
    async fn decide_tool(
        &self,
        run_ctx: &RunContext,
        workspace: &Workspace,
        call: &ToolCall,
        cancel: &watch::Receiver<bool>,
    ) -> Result<Decided, RunError> {
        if call.name == ContinueSession.name() {
            // Replay comes first: a call that already created its successor
            // (the process died before its result was written) must not be
            // validated again, let alone create a second one.
            let store = self.inner.store.agent(&self.inner.agent);
            if let Some(continued) = store.read(|r| replay(r, run_ctx.session_id, call))? {
                return Ok(Decided::Continued { continued, events: Vec::new() });
            }
        }
        if call.name.starts_with(seri_tools::MCP_TOOL_PREFIX) {
            let seed = self.seed(run_ctx.session_id)?;
            let frozen = seed.system_prompt.as_ref().is_some_and(|p| p.tools.iter().any(|t| t.name == call.name));
            if !frozen {
                return Ok(Decided::error(results::TOOL_NOT_IN_SESSION.to_owned()));
            }
        }
        let (allowed_by_hook, asked_by_hook) =
            match self.pre_tool_hooks(run_ctx, workspace.root(), call, cancel).await? {
                super::hook_calls::PreTool::Refused(refused) => return Ok(refused),
                super::hook_calls::PreTool::Go { allow, ask } => (allow, ask),
            };
        let mut permissions = self.inner.permissions.with_mode(self.call_permission_mode(run_ctx)?);
        if allowed_by_hook {
            // As `--yes` for this call: what would be asked runs; a deny stays.
            permissions = permissions.trusted();
        } else if asked_by_hook {
            permissions = permissions.asking();
        }
        if let Some(hooks) = self.permission_request_hooks(run_ctx, workspace.root(), call, cancel)? {
            permissions = permissions.with_ask_hook(hooks);
        }
        let ctx = ToolContext {
            run: run_ctx,
            access: &self.inner.access,
            workspace,
            permissions: &permissions,
            call: Some(call),
        };
        let mut cancel = cancel.clone();
        // A tool that panics (a bug in seri or a library it uses) fails its
        // call, never the run or the process: the model reads an error.
        let tool = AssertUnwindSafe(self.inner.tools.call(ctx, &call.name, call.arguments.clone())).catch_unwind();
        let outcome = tokio::select! {
            outcome = tool => outcome.unwrap_or_else(|panic| Err(panicked(call, panic.as_ref()))),
            // Dropping the tool's future stops it (bash kills its process
            // group); the caller records the cancelled result.
            _ = cancel.wait_for(|c| *c) => return Err(RunError::Cancelled),
        };
        let mut decided = match outcome {
            Ok(ToolOutcome { text, action: ToolAction::None, facts, images }) => {
                Decided::Done { text, is_error: false, events: Vec::new(), facts, images }
            }
            Ok(ToolOutcome { text, action: ToolAction::Append(events), facts, images }) => {
                Decided::Done { text, is_error: false, events, facts, images }
            }
            Ok(ToolOutcome { text, action: ToolAction::Return(value), .. }) => Decided::Returned { text, value },
            // Every `delegate` call was decided before the turn's calls ran.
            Ok(ToolOutcome { action: ToolAction::Delegate(_), .. }) => {
                Decided::error(results::NOT_A_DELEGATION.to_owned())
            }
            Ok(ToolOutcome { action: ToolAction::Continue(request), .. }) if request.dry_run => {
                match self.estimate_continuation(run_ctx, call, &request) {
                    Ok(text) => {
                        Decided::Done { text, is_error: false, events: Vec::new(), facts: None, images: Vec::new() }
                    }
                    Err(refusal) => Decided::error(refusal.to_string()),
                }
            }
            Ok(ToolOutcome { action: ToolAction::Continue(request), .. }) => {
                if let Some(reason) = self.pre_continue_hooks(run_ctx, workspace.root(), call, &cancel).await? {
                    return Ok(Decided::error(
                        seri_prompt::hook_words::HookBlockedContinue { reason: &reason }.to_string(),
                    ));
                }
                match self.continue_session(run_ctx, call, &request) {
                    Ok(continued) => Decided::Continued { continued, events: predecessor_events(&request) },
                    Err(refusal) => Decided::error(refusal.to_string()),
                }
            }
            Err(error) => {
                let events = error.denial().map(|d| vec![d.event(call.id.clone())]).unwrap_or_default();
                Decided::Done {
                    text: error.to_string(),
                    is_error: true,
                    events,
                    facts: error.facts(),
                    images: Vec::new(),
                }
            }
        };
        self.post_tool_hooks(run_ctx, workspace.root(), call, &mut decided, &cancel).await?;
        Ok(decided)
    }

    /// Stores the pictures a call returned as attachments of the session,
    /// and the message that shows them to the model (appended after the
    /// call's result; the request moves it past the turn's other results).
    /// A picture that cannot be stored is logged and left out.
    fn store_pictures(&self, session_id: SessionId, call: &ToolCall, images: &[ToolImage]) -> Option<Message> {
        if images.is_empty() {
            return None;
        }
        let store = self.inner.store.agent(&self.inner.agent);
        let mut attachments = Vec::new();
        for (n, image) in images.iter().enumerate() {
            let extension = image.media_type.strip_prefix("image/").unwrap_or("bin");
            let name = format!("{}-{}.{extension}", call.name, n + 1);
            match store.store_attachment(session_id, name, Some(image.media_type.clone()), &image.data) {
                Ok(attachment) => attachments.push(attachment),
                Err(error) => tracing::warn!(call = %call.id, %error, "a picture the call returned was not stored"),
            }
        }
        if attachments.is_empty() {
            return None;
        }
        let text = seri_prompt::ToolPictures { tool: &call.name, call_id: call.id.as_str() }.to_string();
        Some(Message { role: Role::User, actor: Actor::System, attachments, ..Message::user(text) })
    }

    /// Gives every unanswered call a result, so the transcript stays paired
    /// after a cancellation.
    pub(super) fn cancel_calls(&self, session_id: SessionId, calls: &[ToolCall]) -> Result<(), RunError> {
        // A runtime stopping (a server shutting down) is not the person
        // saying no: the model is told which it was.
        let content = if self.submissions().stopping() { results::STOPPED } else { results::CANCELLED };
        let bodies = calls.iter().map(|call| {
            EventBody::ToolResult(ToolResult {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                content: content.to_owned(),
                is_error: true,
                facts: None,
            })
        });
        self.inner.leases.append(session_id, bodies)?;
        self.inner.notifier.session_changed(session_id);
        Ok(())
    }

    /// The continuation runtime's context for `call` of the run's session:
    /// the successor goes on with the predecessor's model, so its window.
    fn with_continuation<T>(
        &self,
        run_ctx: &RunContext,
        call: &ToolCall,
        then: impl FnOnce(&ContinuationContext<'_>) -> Result<T, ContinuationRefused>,
    ) -> Result<T, ContinuationRefused> {
        let store = self.inner.store.agent(&self.inner.agent);
        let window = self.session_context_window(&store.info(run_ctx.session_id)?);
        // The successor is offered the tools this session is: its first
        // request carries their definitions too.
        let seed = self.seed(run_ctx.session_id).map_err(|e| ContinuationRefused::Projection(e.to_string()))?;
        let tool_chars = seri_providers::request_size::json_chars(&self.tool_specs(run_ctx, &seed));
        then(&ContinuationContext {
            store: &store,
            predecessor: run_ctx.session_id,
            call,
            window,
            tool_chars,
            hooks: &self.inner.continuation_hooks,
            prompts: self.inner.session_prompts.as_deref(),
        })
    }

    /// `continue_session` with `dryRun`: the estimate, nothing created.
    fn estimate_continuation(
        &self,
        run_ctx: &RunContext,
        call: &ToolCall,
        request: &ContinuationRequest,
    ) -> Result<String, ContinuationRefused> {
        self.with_continuation(run_ctx, call, |ctx| continuation::estimate_continuation(ctx, request))
    }

    /// The continuation runtime, then the run loop's part: announce both
    /// sessions. Whoever follows the run's outcome runs the successor.
    pub(super) fn continue_session(
        &self,
        run_ctx: &RunContext,
        call: &ToolCall,
        request: &ContinuationRequest,
    ) -> Result<ContinuedTo, ContinuationRefused> {
        let continued = self.with_continuation(run_ctx, call, |ctx| continuation::continue_session(ctx, request))?;
        self.inner.notifier.session_changed(run_ctx.session_id);
        self.inner.notifier.session_changed(continued.session_id);
        self.inner.notifier.send(Notification::AccountChange {
            reasons: vec![AccountChangeReason::SessionUpdated, AccountChangeReason::SessionContinued],
            session_ids: vec![run_ctx.session_id, continued.session_id],
        });
        Ok(continued)
    }
}

/// What a tool call comes to, before it is recorded.
pub(super) enum Decided {
    /// A result (success or error), the events recorded with it, and what
    /// the call came to as values, if the tool reported it.
    Done { text: String, is_error: bool, events: Vec<EventBody>, facts: Option<ToolFacts>, images: Vec<ToolImage> },
    /// The session continued: the turn ends after the tools.
    Continued { continued: ContinuedTo, events: Vec<EventBody> },
    /// A typed child returned its value: its run ends after the tools.
    Returned { text: String, value: serde_json::Value },
}

impl Decided {
    pub(super) fn error(text: String) -> Self {
        Decided::Done { text, is_error: true, events: Vec::new(), facts: None, images: Vec::new() }
    }
}

/// What a call whose tool panicked comes to: an error the model reads.
fn panicked(call: &ToolCall, panic: &(dyn Any + Send)) -> ToolError {
    let error = ToolError::panicked(&call.name, panic);
    tracing::error!(call = %call.id, %error, "a tool panicked; its call fails");
    error
}
