//! Child runs: what the run loop does with a turn's `delegate` calls.
//!
//! A turn that delegates is *parked*: every `delegate` call of the turn is
//! decided first, in call order, and each valid one gets a child run, which
//! starts at once (at most [`RuntimeSettings::max_parallel_children`] at a
//! time, in call order). The turn's calls are then recorded exactly as in a
//! turn without children, one by one in call order: a `delegate` call's
//! result is its child's answer, awaited when the loop reaches it, and every
//! other call of the turn runs meanwhile and sees the parked children in
//! its [`RunRef::parked_children`] (which is what refuses `continue_session`:
//! the model has not read the children's answers yet). So the results are
//! in call order, the transcript stays paired, and a turn without
//! `delegate` calls runs exactly as before.
//!
//! A child runs in its own session, created when the child starts: its seed
//! names the parent run (`parent_run_id`), its title is the task's first
//! line, its system prompt is the parent session's (the same project
//! context, and a prefix the provider may already have cached), and its
//! first event is the task ([`ChildTask`], written by the agent). It gets a
//! runtime of its own over the same store, permissions and settings, with
//! the registry [`ToolRegistry::for_child`] builds, the provider
//! [`Provider::child_provider`] gives it (the scripted provider's next child
//! script), and [`RuntimeSettings::child_max_turns`], never the parent's
//! budget. Its change notifications are forwarded to the parent runtime's
//! subscribers, and its progress reaches the parent's observer as
//! [`RunEvent::ChildProgress`].
//!
//! How a child ends becomes the parent's tool result: its final message (a
//! delegated child) or its returned value as compact JSON (a typed child);
//! an error result, naming the child's thread, when it ran out of turns,
//! failed, or ended without the `return_result` its schema requires. A
//! child's failure never fails the parent. Cancelling the parent cancels
//! its children (their tool calls get cancelled results and their runs end
//! `cancelled`), and so does a parent whose turn ended early with an error.
//!
//! [`Provider::child_provider`]: seri_providers::Provider::child_provider
//! [`ToolRegistry::for_child`]: seri_tools::ToolRegistry::for_child

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, PoisonError};

use futures_util::StreamExt as _;
use seri_core::{Actor, EventBody, Message, Role, RunId, SessionId, TitleSource, ToolCall, ToolCallId};
use seri_prompt::text::results;
use seri_prompt::{ChildEnded, ChildTask};
use seri_providers::ConfiguredProvider;
use seri_tools::verbs::delegate;
use seri_tools::{
    DelegationRequest, RunContext, RunKind, RunRef, ToolAction, ToolContext, ToolOutcome, ToolRegistry, Workspace,
};
use tokio::sync::{oneshot, watch};

use super::run::RunState;
use super::tool_call::Decided;
use super::{Runtime, RuntimeParts};
use crate::error::RunError;
use crate::protocol::{ChildProgress, Lane, RunEvent, RunObserver, RunOutcome, RunSpec, RunStatus};

/// How many child runs of one turn run at the same time by default.
pub const MAX_PARALLEL_CHILDREN: usize = 3;

/// The `delegate` calls of the current turn, decided and waiting to be
/// recorded, by call id.
#[derive(Default)]
pub(super) struct ParkedCalls {
    calls: HashMap<ToolCallId, Parked>,
}

/// One decided `delegate` call.
enum Parked {
    /// Refused before any child started (bad input, a tool name the child
    /// may not use).
    Refused(Decided),
    /// Its child runs; its result arrives here.
    Running(oneshot::Receiver<Result<Decided, RunError>>),
}

impl ParkedCalls {
    /// The decided call with this id, if it is a parked `delegate` call:
    /// its result, once its child has returned. A cancelled child (or one
    /// that never started because the turn was cancelled) is
    /// `RunError::Cancelled`, which the loop turns into cancelled results.
    pub(super) async fn take(
        &mut self,
        call: &ToolCallId,
        cancel: &watch::Receiver<bool>,
    ) -> Option<Result<Decided, RunError>> {
        let parked = self.calls.remove(call)?;
        Some(match parked {
            Parked::Refused(decided) => Ok(decided),
            Parked::Running(receiver) => {
                let mut cancel = cancel.clone();
                tokio::select! {
                    result = receiver => result.unwrap_or(Err(RunError::Cancelled)),
                    // An error means nobody can cancel any more: keep waiting.
                    Ok(_) = cancel.wait_for(|c| *c) => Err(RunError::Cancelled),
                }
            }
        })
    }
}

/// The children a turn started, ready to run beside the turn's calls.
pub(super) struct Children {
    jobs: Vec<ChildJob>,
}

/// A child waiting to start, and where its answer goes.
struct ChildJob {
    child: PreparedChild,
    answer: oneshot::Sender<Result<Decided, RunError>>,
}

/// Everything one child needs to run, decided before it starts.
struct PreparedChild {
    call_id: ToolCallId,
    request: DelegationRequest,
    kind: RunKind,
    lane: Lane,
    tools: ToolRegistry,
    provider: ConfiguredProvider,
    parent_session: SessionId,
    parent_run: RunId,
}

impl Children {
    /// The context the turn's calls are made in: the run's, with the
    /// children it parked.
    pub(super) fn turn_context(&self, run_ctx: &RunContext) -> RunContext {
        let parked = u32::try_from(self.jobs.len()).unwrap_or(u32::MAX);
        RunContext { run: run_ctx.run.map(|r| RunRef { parked_children: parked, ..r }), ..run_ctx.clone() }
    }

    /// Runs `tools` (the turn's calls, recorded in order) and the children
    /// together, and returns what `tools` returned once both are done. The
    /// children stop (are cancelled) when the parent is cancelled or when
    /// `tools` ended with an error, since nobody would read their answers.
    pub(super) async fn run_alongside(
        self,
        runtime: &Runtime,
        tools: impl Future<Output = Result<(), RunError>>,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> Result<(), RunError> {
        if self.jobs.is_empty() {
            return tools.await;
        }
        let (stop, child_cancel) = watch::channel(*cancel.borrow());
        let limit = runtime.inner.settings.max_parallel_children.max(1);
        let tools = async {
            let ran = tools.await;
            if ran.is_err() {
                stop.send_replace(true);
            }
            ran
        };
        let children = async {
            let child_cancel = &child_cancel;
            let all = futures_util::stream::iter(self.jobs)
                .map(|job| runtime.run_child(job, observer, child_cancel))
                .buffer_unordered(limit)
                .for_each(|()| std::future::ready(()));
            tokio::pin!(all);
            let mut parent = cancel.clone();
            tokio::select! {
                () = &mut all => return,
                // An error means nobody can cancel any more: let them finish.
                cancelled = parent.wait_for(|c| *c) => if cancelled.is_ok() {
                    stop.send_replace(true);
                },
            }
            all.await;
        };
        let (ran, ()) = tokio::join!(tools, children);
        ran
    }
}

impl Runtime {
    /// Decides every `delegate` call of the turn, in call order: a refused
    /// one is parked with its error result, a valid one with the receiver
    /// of its child's answer. Only deciding happens here; the children
    /// start in [`Children::run_alongside`].
    pub(super) async fn park_children(
        &self,
        spec: &RunSpec,
        run_ctx: &RunContext,
        workspace: &Workspace,
        calls: &[ToolCall],
        state: &mut RunState,
    ) -> Children {
        state.parked = ParkedCalls::default();
        let mut jobs = Vec::new();
        for call in calls.iter().filter(|c| c.name == delegate::NAME) {
            let parked = match self.decide_delegation(spec, run_ctx, workspace, call).await {
                Ok(child) => {
                    let (answer, receiver) = oneshot::channel();
                    jobs.push(ChildJob { child, answer });
                    Parked::Running(receiver)
                }
                Err(refused) => Parked::Refused(refused),
            };
            state.parked.calls.insert(call.id.clone(), parked);
        }
        Children { jobs }
    }

    /// One `delegate` call: the tool checks the input, the registry builds
    /// the child's tools, and the provider gives the child its own (for the
    /// scripted provider, the next child script: taken here, in call order).
    async fn decide_delegation(
        &self,
        spec: &RunSpec,
        run_ctx: &RunContext,
        workspace: &Workspace,
        call: &ToolCall,
    ) -> Result<PreparedChild, Decided> {
        let ctx = ToolContext {
            run: run_ctx,
            access: &self.inner.access,
            workspace,
            permissions: &self.inner.permissions,
            call: Some(call),
        };
        let request = match self.inner.tools.call(ctx, &call.name, call.arguments.clone()).await {
            Ok(ToolOutcome { action: ToolAction::Delegate(request), .. }) => *request,
            Ok(_) => return Err(Decided::error(results::NOT_A_DELEGATION.to_owned())),
            Err(error) => return Err(Decided::error(error.to_string())),
        };
        let (parent_kind, parent_run) = match run_ctx.run {
            Some(run) => (run.kind, run.id),
            None => return Err(Decided::error(results::NO_RUN_TO_DELEGATE_FROM.to_owned())),
        };
        let kind = parent_kind.child(parent_run, request.is_typed());
        let probe = RunContext { run: Some(RunRef { id: parent_run, kind, parked_children: 0 }), ..run_ctx.clone() };
        let tools = self.inner.tools.for_child(&probe, &request).map_err(|e| Decided::error(e.to_string()))?;
        let parent_provider = &self.inner.provider;
        let provider = ConfiguredProvider {
            model: parent_provider.model.clone(),
            provider: parent_provider.provider.child_provider().unwrap_or_else(|| parent_provider.provider.clone()),
        };
        Ok(PreparedChild {
            call_id: call.id.clone(),
            request,
            kind,
            lane: spec.lane,
            tools,
            provider,
            parent_session: run_ctx.session_id,
            parent_run,
        })
    }

    /// Runs one child to its end and sends its answer to the parked call.
    async fn run_child(&self, job: ChildJob, observer: &dyn RunObserver, cancel: &watch::Receiver<bool>) {
        let ChildJob { child, answer } = job;
        let PreparedChild { call_id, request, kind, lane, tools, provider, parent_session, parent_run } = child;
        if *cancel.borrow() {
            // Cancelled before it started: nothing is created.
            let _ = answer.send(Err(RunError::Cancelled));
            return;
        }
        let result = match self.create_child_session(parent_session, parent_run, &request) {
            Err(e) => Err(e),
            Ok((session_id, task_event)) => {
                let child = Runtime::new(RuntimeParts {
                    store: self.inner.store.clone(),
                    agent: self.inner.agent.clone(),
                    provider,
                    tools,
                    memory_dir: self.inner.access.memory_dir().to_owned(),
                    permissions: self.inner.permissions.clone(),
                    settings: self.inner.settings.clone(),
                    session_prompts: self.inner.session_prompts.clone(),
                });
                let spec = RunSpec {
                    session_id,
                    kind,
                    lane,
                    user_event_ids: vec![task_event],
                    max_turns: self.inner.settings.child_max_turns,
                    message: None,
                };
                let progress = ChildObserver {
                    parent: observer,
                    progress: Mutex::new(ChildProgress {
                        call_id,
                        session_id,
                        title: request.title.clone(),
                        turns: 0,
                        last_tool: None,
                        finished: None,
                    }),
                };
                let outcome = self.run_forwarding(&child, spec, &progress, cancel).await;
                child_answer(&outcome, request.is_typed())
            }
        };
        // The parked call may be gone (the parent's turn ended early).
        let _ = answer.send(result);
    }

    /// Creates the child's session and its first message, the task, in one
    /// transaction.
    fn create_child_session(
        &self,
        parent_session: SessionId,
        parent_run: RunId,
        request: &DelegationRequest,
    ) -> Result<(SessionId, seri_core::EventId), RunError> {
        let store = self.agent_store();
        let parent = store.seed(parent_session)?;
        let mut seed = store.new_seed(parent.cwd.clone());
        seed.title = Some(request.title.clone());
        seed.title_source = Some(TitleSource::Agent);
        // The model in force in the parent, `/model` included.
        seed.model_override = store.info(parent_session)?.model_override;
        // The parent's instructions and files, without the continuation piece:
        // a child reports to its parent and is never offered continue_session.
        seed.system_prompt = parent.system_prompt.as_ref().map(seri_prompt::SystemPrompt::for_child);
        seed.parent_run_id = Some(parent_run);
        let task = Message {
            role: Role::User,
            actor: Actor::Agent,
            content: ChildTask { task: &request.task, typed: request.is_typed() }.to_string(),
            ..Message::default()
        };
        let (session_id, events) = store.write(|tx| -> Result<_, RunError> {
            let info = tx.create_session(&seed)?;
            let events = tx.append(info.id, [EventBody::Message(task)])?;
            Ok((info.id, events))
        })?;
        self.notify_session(session_id);
        self.inner.notifier.send(crate::notify::Notification::AccountChange {
            reasons: vec![crate::notify::AccountChangeReason::SessionCreated],
            session_ids: vec![session_id],
        });
        let task_event = events.last().map(|e| e.id).ok_or(RunError::NothingAppended { session_id })?;
        Ok((session_id, task_event))
    }

    /// Runs the child, passing its change notifications on to this
    /// runtime's subscribers as they happen.
    async fn run_forwarding(
        &self,
        child: &Runtime,
        spec: RunSpec,
        observer: &ChildObserver<'_>,
        cancel: &watch::Receiver<bool>,
    ) -> RunOutcome {
        let mut notes = child.subscribe();
        let mut run = child.run(spec, observer, cancel);
        let outcome = loop {
            tokio::select! {
                outcome = &mut run => break outcome,
                Ok(note) = notes.recv() => self.inner.notifier.send(note),
            }
        };
        while let Ok(note) = notes.try_recv() {
            self.inner.notifier.send(note);
        }
        outcome
    }
}

/// What the parent's `delegate` call records for a child that ended so.
fn child_answer(outcome: &RunOutcome, typed: bool) -> Result<Decided, RunError> {
    let session_id = outcome.session_id;
    let ended = match (outcome.status, typed) {
        (RunStatus::Cancelled, _) => return Err(RunError::Cancelled),
        (RunStatus::Succeeded, true) => match &outcome.returned {
            Some(value) => {
                return Ok(Decided::Done {
                    text: value.to_string(),
                    is_error: false,
                    events: Vec::new(),
                    facts: None,
                    images: Vec::new(),
                });
            }
            None => {
                ChildEnded::WithoutReturnedValue { session_id, final_message: outcome.result.as_deref().unwrap_or("") }
            }
        },
        (RunStatus::Succeeded, false) => {
            let text = match outcome.result.as_deref() {
                Some(text) if !text.trim().is_empty() => text.to_owned(),
                _ => ChildEnded::WithEmptyMessage { session_id }.to_string(),
            };
            return Ok(Decided::Done { text, is_error: false, events: Vec::new(), facts: None, images: Vec::new() });
        }
        (RunStatus::MaxTurns, _) => ChildEnded::OutOfTurns { session_id, turns: outcome.turns },
        // A run outcome is never `running` or `interrupted` (only the store
        // marks a run whose process is gone so); were it one, it did not finish.
        (RunStatus::Failed | RunStatus::Running | RunStatus::Interrupted, _) => {
            ChildEnded::Failed { session_id, error: outcome.error.as_deref() }
        }
    };
    Ok(Decided::error(ended.to_string()))
}

/// Turns a child's run events into [`RunEvent::ChildProgress`] for the
/// parent's observer: one snapshot per change worth a line (started, a
/// turn recorded, a tool started, ended). A grandchild's progress passes
/// through unchanged.
struct ChildObserver<'a> {
    parent: &'a dyn RunObserver,
    progress: Mutex<ChildProgress>,
}

impl RunObserver for ChildObserver<'_> {
    fn event(&self, event: RunEvent) {
        let snapshot = {
            let mut progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
            match event {
                RunEvent::RunStarted { .. } => {}
                RunEvent::TurnRecorded { .. } => progress.turns += 1,
                RunEvent::ToolStarted { name, .. } => progress.last_tool = Some(name),
                RunEvent::RunFinished(outcome) => progress.finished = Some(outcome.status),
                RunEvent::ChildProgress(grandchild) => {
                    drop(progress);
                    self.parent.event(RunEvent::ChildProgress(grandchild));
                    return;
                }
                RunEvent::TextDelta(_)
                | RunEvent::ThinkingDelta(_)
                | RunEvent::Retrying(_)
                | RunEvent::ToolFinished { .. }
                | RunEvent::Continued(_)
                | RunEvent::MessagePosted { .. }
                | RunEvent::Compacted { .. }
                | RunEvent::CompactionFailed { .. }
                | RunEvent::CompactionSkipped { .. }
                | RunEvent::RuleFired { .. }
                | RunEvent::RulesSkipped { .. } => return,
            }
            progress.clone()
        };
        self.parent.event(RunEvent::ChildProgress(snapshot));
    }
}
