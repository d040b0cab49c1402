//! [`Runtime`]: the run loop. It builds each request from events, calls the
//! provider, records what came back, runs the tools, and repeats until the
//! model ends its turn, the turn budget runs out, the run is cancelled, or
//! the session continues into a successor.

use std::future::Future;
use std::num::NonZeroU64;
use std::pin::Pin;
use std::sync::Arc;

use seri_core::{
    AgentId, Event, EventBody, EventId, FrozenPrompt, Message, MessageMeta, ModelRef, RunId, Seq, SessionId,
    SessionInfo, Thinking, ToolCall, ToolResult, Usage,
};
use seri_prompt::{ContextStrategy, ContextUsage, PlanState, SessionStatus, TurnBlocks, effective_context_window};
use seri_providers::{ConfiguredProvider, EventSink, ModelRequest, ModelResponse, RequestMessage, StreamEvent};
use seri_store::{RUNNING, RunRecord, SeqRange, Store};
use seri_tools::{
    ContinuationRequest, ContinueSession, Permissions, RunContext, RunKind, RunRef, Tool, ToolAction, ToolContext,
    ToolOutcome, ToolRegistry, Workspace,
};
use tokio::sync::watch;

use crate::access::StoreAccess;
use crate::context::{check_pairing, request_messages, unanswered_calls};
use crate::continuation::{self, ContinuationContext, ContinuationRefused, predecessor_events, reason_words, replay};
use crate::error::RunError;
use crate::notify::{AccountChangeReason, Notification, Notifier};
use crate::protocol::{ContinuedTo, Lane, RunEvent, RunObserver, RunOutcome, RunSpec, RunStatus};
use crate::queue::RunQueue;
use seri_projection::compaction::WorkingContext;
use seri_providers::ErrorKind;

mod children;

pub use children::MAX_PARALLEL_CHILDREN;

/// The default turn budget of a task.
pub const DEFAULT_MAX_TURNS: u32 = 500;

/// A subagent's turn budget. Never the parent's: three concurrent children
/// on the session's own cap would multiply tokens without a ceiling.
pub const CHILD_MAX_TURNS: u32 = 25;

/// How far back from a session's newest event the runtime looks for tool
/// calls a stopped run left unanswered: they can only belong to the newest
/// assistant turn, and no turn makes this many calls.
const SETTLE_WINDOW_EVENTS: u64 = 256;

/// The result of a second `return_result` in the turn that already returned.
const ALREADY_RETURNED: &str = "a result was already returned in this turn; this value was not";

/// The result recorded for a call whose run stopped before it finished.
pub(crate) const INTERRUPTED: &str =
    "interrupted: seri stopped before this call finished; it may or may not have taken effect";

/// How the runtime manages context and budgets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeSettings {
    /// Continue into successors, or compact in place.
    pub strategy: ContextStrategy,
    /// Overrides the model table's context window.
    pub context_window: Option<NonZeroU64>,
    /// Compaction's keep budget, in tokens.
    pub keep_tokens: u64,
    /// Turn budget per task.
    pub max_turns: u32,
    /// Turn budget of each child run ([`CHILD_MAX_TURNS`] by default),
    /// whatever the parent's `max_turns`.
    pub child_max_turns: u32,
    /// How many child runs of one turn run at the same time
    /// ([`MAX_PARALLEL_CHILDREN`] by default; the rest wait their turn).
    pub max_parallel_children: usize,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        Self {
            strategy: ContextStrategy::Continue,
            context_window: None,
            keep_tokens: 20_000,
            max_turns: DEFAULT_MAX_TURNS,
            child_max_turns: CHILD_MAX_TURNS,
            max_parallel_children: MAX_PARALLEL_CHILDREN,
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
}

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
    notifier: Notifier,
    queue: RunQueue,
    trajectories: crate::trajectory::Trajectories,
    continuation_hooks: continuation::CreationHooks,
}

impl Runtime {
    /// A runtime over its parts.
    pub fn new(parts: RuntimeParts) -> Self {
        let access = StoreAccess::new(parts.store.clone(), parts.agent.clone(), parts.memory_dir);
        Self {
            inner: Arc::new(Inner {
                store: parts.store,
                agent: parts.agent,
                provider: parts.provider,
                tools: parts.tools,
                access,
                permissions: parts.permissions,
                settings: parts.settings,
                notifier: Notifier::default(),
                queue: RunQueue::default(),
                trajectories: crate::trajectory::Trajectories::default(),
                continuation_hooks: continuation::CreationHooks::default(),
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

    pub(crate) fn trajectories(&self) -> &crate::trajectory::Trajectories {
        &self.inner.trajectories
    }

    pub(crate) fn agent_store(&self) -> seri_store::AgentStore<'_> {
        self.inner.store.agent(&self.inner.agent)
    }

    pub(crate) fn provider(&self) -> &dyn seri_providers::Provider {
        self.inner.provider.provider.as_ref()
    }

    pub(crate) fn notify_session(&self, session_id: SessionId) {
        self.inner.notifier.session_changed(session_id);
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
        let model = &self.inner.provider.model;
        effective_context_window(&model.provider, &model.model, self.inner.settings.context_window).tokens.get()
    }

    /// Creates a session in `cwd` with its system prompt frozen, so that
    /// every request of its life (and every `--resume`) sends the same
    /// cacheable prefix.
    pub fn create_session(&self, cwd: &str, system_prompt: FrozenPrompt) -> Result<SessionInfo, RunError> {
        let store = self.inner.store.agent(&self.inner.agent);
        let mut seed = store.new_seed(cwd);
        seed.system_prompt = Some(system_prompt);
        let info = store.create_session(&seed)?;
        self.inner.notifier.session_changed(info.id);
        self.inner.notifier.send(Notification::AccountChange { reasons: vec![AccountChangeReason::SessionCreated] });
        Ok(info)
    }

    /// Appends a message a person typed and returns its event id.
    ///
    /// Tool calls a stopped run left without a result are settled first, in
    /// the same transaction, so the message never lands between a call and
    /// its result.
    pub fn post_user_message(&self, session_id: SessionId, message: Message) -> Result<EventId, RunError> {
        let (events, _) = self.settle_then_append(session_id, Some(EventBody::Message(message)))?;
        self.inner.notifier.session_changed(session_id);
        events.last().map(|e| e.id).ok_or(RunError::NothingAppended { session_id })
    }

    /// Queues a run. Interactive runs go before background ones.
    pub fn enqueue(&self, spec: RunSpec) {
        self.inner.queue.push(spec);
    }

    /// Runs everything queued, in lane order, until the queue is empty, and
    /// returns every outcome in the order the runs ended. A run that
    /// continues into a successor enqueues the successor's run on the
    /// interactive lane, so a caller that sent the message follows it.
    pub async fn drain(&self, observer: &dyn RunObserver, cancel: &watch::Receiver<bool>) -> Vec<RunOutcome> {
        let mut outcomes = Vec::new();
        while let Some(spec) = self.inner.queue.pop() {
            let outcome = self.run(spec, observer, cancel).await;
            let stop = outcome.status == RunStatus::Cancelled;
            outcomes.push(outcome);
            if stop {
                self.inner.queue.clear();
                break;
            }
        }
        outcomes
    }

    /// Executes one run to its end. Never panics and never returns early
    /// with an error: every way a run can end is a [`RunOutcome`].
    ///
    /// The future is boxed because a run may start child runs, which are
    /// runs: a named, `Send` future type is what lets that recursion
    /// through.
    pub fn run<'a>(
        &'a self,
        spec: RunSpec,
        observer: &'a dyn RunObserver,
        cancel: &'a watch::Receiver<bool>,
    ) -> Pin<Box<dyn Future<Output = RunOutcome> + Send + 'a>> {
        Box::pin(self.run_to_end(spec, observer, cancel))
    }

    async fn run_to_end(
        &self,
        spec: RunSpec,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> RunOutcome {
        let run_id = self.inner.store.new_run_id();
        let observer = &self.trajectory_tee(run_id, &spec, observer);
        observer.event(RunEvent::RunStarted { run_id, session_id: spec.session_id });
        let mut state = RunState::new(run_id, &spec);
        let store = self.inner.store.agent(&self.inner.agent);
        let recorded = store.start_run(&RunRecord {
            id: run_id,
            session_id: spec.session_id,
            kind: run_kind_name(spec.kind).to_owned(),
            lane: spec.lane.as_str().to_owned(),
            parent_run_id: spec.kind.parent_run_id(),
            status: RUNNING.to_owned(),
            result: None,
            started_at: self.inner.store.now(),
            finished_at: None,
        });
        let was_recorded = recorded.is_ok();
        let turns = match recorded {
            Ok(()) => self.turns(&spec, &mut state, observer, cancel).await,
            Err(e) => Err(e.into()),
        };
        let status = match turns {
            Ok(status) => status,
            Err(RunError::Cancelled) => {
                state.error = Some("cancelled".to_owned());
                RunStatus::Cancelled
            }
            Err(e) => {
                tracing::warn!(run = %run_id, error = %e, "run failed");
                state.error = Some(e.to_string());
                RunStatus::Failed
            }
        };
        let outcome = RunOutcome {
            run_id,
            session_id: spec.session_id,
            status,
            result: state.result,
            continued_to: state.continued_to,
            turns: state.turns,
            usage: state.usage,
            error: state.error,
            returned: state.returned,
        };
        if was_recorded && let Err(e) = store.finish_run(run_id, status.as_str(), &outcome.record()) {
            // The run's events are all recorded; only its summary row is not.
            tracing::warn!(run = %run_id, error = %e, "could not record how the run ended");
        }
        observer.event(RunEvent::RunFinished(outcome.clone()));
        outcome
    }

    async fn turns(
        &self,
        spec: &RunSpec,
        state: &mut RunState,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> Result<RunStatus, RunError> {
        let run_ctx = RunContext {
            session_id: spec.session_id,
            agent_id: self.inner.agent.clone(),
            strategy: self.inner.settings.strategy,
            run: Some(RunRef { id: state.run_id, kind: spec.kind, parked_children: 0 }),
        };
        let seed = self.inner.store.agent(&self.inner.agent).seed(spec.session_id)?;
        let workspace = Workspace::new(&seed.cwd).map_err(|e| RunError::Workspace(e.to_string()))?;
        if let (_, Some(continued)) = self.settle_then_append(spec.session_id, None)? {
            self.resume_unstarted_successor(&continued)?;
            observer.event(RunEvent::Continued(continued.clone()));
            state.continued_to = Some(continued);
            return Ok(RunStatus::Succeeded);
        }
        loop {
            if *cancel.borrow() {
                return Err(RunError::Cancelled);
            }
            if state.turns >= spec.max_turns {
                return Ok(RunStatus::MaxTurns);
            }
            let (mut events, mut context) = self.working_context(spec.session_id)?;
            if self.inner.settings.strategy == ContextStrategy::Compact
                && let Some(compacted) = self.compact_if_needed(spec.session_id, &events, &context, observer).await?
            {
                (events, context) = compacted;
            }
            let request = self.build_request(&run_ctx, &context, &events)?;
            let response = match self.call_model(&request, observer, cancel).await {
                Err(RunError::Provider(e))
                    if e.kind == ErrorKind::ContextOverflow
                        && self.inner.settings.strategy == ContextStrategy::Compact =>
                {
                    // Compact once more and retry this call; if that fails
                    // or the retry overflows too, the turn fails.
                    tracing::info!(session = %spec.session_id, "context overflow; compacting and retrying");
                    let (events, context) = self
                        .compact_after_overflow(spec.session_id, observer)
                        .await
                        .map_err(|c| RunError::OverflowCompaction(Box::new((e, c))))?;
                    let request = self.build_request(&run_ctx, &context, &events)?;
                    self.call_model(&request, observer, cancel).await?
                }
                other => other?,
            };
            state.turns += 1;
            add_usage(&mut state.usage, &response.usage);
            self.record_turn(spec.session_id, &response)?;
            observer.event(RunEvent::TurnRecorded { usage: response.usage, window: self.context_window() });
            if response.tool_calls.is_empty() {
                state.result = Some(response.text);
                return Ok(RunStatus::Succeeded);
            }
            // `delegate` calls are decided first and park the turn while
            // their children run beside the calls below (runtime/children.rs).
            let children = self.park_children(spec, &run_ctx, &workspace, &response.tool_calls, state).await;
            let turn_ctx = children.turn_context(&run_ctx);
            let tools = async {
                for (index, call) in response.tool_calls.iter().enumerate() {
                    let ran = if *cancel.borrow() {
                        Err(RunError::Cancelled)
                    } else {
                        self.run_tool(&turn_ctx, &workspace, call, state, observer, cancel).await
                    };
                    if let Err(RunError::Cancelled) = ran {
                        // This call and every one after it get a result, so the
                        // transcript stays paired.
                        self.cancel_calls(spec.session_id, &response.tool_calls[index..])?;
                        return Err(RunError::Cancelled);
                    }
                    ran?;
                }
                Ok(())
            };
            children.run_alongside(self, tools, observer, cancel).await?;
            if state.returned.is_some() {
                // A typed child handed its value back: its run is over.
                return Ok(RunStatus::Succeeded);
            }
            if state.continued_to.is_some() {
                // Complete after tools: the predecessor's turn ends here and
                // no further request is sent for it. Nothing is owed.
                return Ok(RunStatus::Succeeded);
            }
        }
    }

    /// The request for the next model call: the frozen system prompt, the
    /// working context, then the per-turn blocks last so the prefix before
    /// them is the previous request's and stays cached.
    ///
    /// `events` are the working context's events; when they reach back to
    /// seq 1 (no compaction yet) the session's view is folded from them
    /// rather than read again.
    fn build_request(
        &self,
        run_ctx: &RunContext,
        context: &WorkingContext,
        events: &[Event],
    ) -> Result<ModelRequest, RunError> {
        let store = self.inner.store.agent(&self.inner.agent);
        let session_id = run_ctx.session_id;
        let seed = store.seed(session_id)?;
        let info = match events.first() {
            Some(first) if first.seq == Seq::FIRST => SessionInfo::fold(&seed, events),
            _ => store.info(session_id)?,
        };
        let system = seed.system_prompt.as_ref().map(|p| p.text.clone()).unwrap_or_default();
        let mut request = ModelRequest::new(self.inner.provider.model.model.clone(), system);
        request.messages = request_messages(context);
        request.mark_cache_breakpoint();
        request.tools = self
            .inner
            .tools
            .available(run_ctx)
            .into_iter()
            .map(|t| seri_providers::ToolSpec {
                name: t.name,
                description: t.description,
                input_schema: t.input_schema,
            })
            .collect();
        request.messages.push(RequestMessage::user(self.turn_blocks(&info, run_ctx)));
        check_pairing(&request.messages)?;
        Ok(request)
    }

    fn turn_blocks(&self, info: &SessionInfo, run_ctx: &RunContext) -> String {
        let window = NonZeroU64::new(self.context_window()).unwrap_or(NonZeroU64::MIN);
        let can_continue = ContinueSession::is_available_to(run_ctx);
        TurnBlocks {
            session_status: SessionStatus::of(info),
            plan_state: PlanState::new(info.plan.as_ref(), run_ctx.run_id()),
            context_usage: can_continue.then(|| ContextUsage::from_last_usage(info.last_usage.as_ref(), window)),
        }
        .to_string()
    }

    async fn call_model(
        &self,
        request: &ModelRequest,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> Result<ModelResponse, RunError> {
        let sink = ForwardDeltas { observer };
        let mut cancel = cancel.clone();
        tokio::select! {
            response = self.inner.provider.provider.stream(request, &sink) => Ok(response?),
            _ = cancel.wait_for(|c| *c) => Err(RunError::Cancelled),
        }
    }

    /// Records one model turn: thinking, the assistant message with its
    /// usage, and its tool calls, in one transaction.
    fn record_turn(&self, session_id: SessionId, response: &ModelResponse) -> Result<Vec<Event>, RunError> {
        let mut bodies: Vec<EventBody> =
            response.thinking.iter().cloned().map(|t: Thinking| EventBody::Thinking(t)).collect();
        bodies.push(EventBody::Message(Message {
            meta: MessageMeta {
                usage: Some(response.usage),
                model: Some(self.inner.provider.model.clone()),
                stop_reason: Some(response.stop_reason.as_str().to_owned()),
                ..MessageMeta::default()
            },
            ..Message::assistant(response.text.clone())
        }));
        bodies.extend(response.tool_calls.iter().cloned().map(EventBody::ToolCall));
        let events = self.inner.store.agent(&self.inner.agent).append(session_id, bodies)?;
        self.inner.notifier.session_changed(session_id);
        Ok(events)
    }

    async fn run_tool(
        &self,
        run_ctx: &RunContext,
        workspace: &Workspace,
        call: &ToolCall,
        state: &mut RunState,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> Result<(), RunError> {
        observer.event(RunEvent::ToolStarted { id: call.id.clone(), name: call.name.clone() });
        let checkpoint = self.before_tool(run_ctx, workspace, call, state.run_id);
        let decided = match state.parked.take(&call.id, cancel).await {
            Some(parked) => parked?,
            None => self.decide_tool(run_ctx, workspace, call, cancel).await?,
        };
        let (content, is_error, extra) = match decided {
            Decided::Done { text, is_error, events } => (text, is_error, events),
            Decided::Returned { text, value } => match state.returned {
                None => {
                    state.returned = Some(value);
                    (text, false, Vec::new())
                }
                Some(_) => (ALREADY_RETURNED.to_owned(), true, Vec::new()),
            },
            Decided::Continued { continued, events } => {
                let text = format!(
                    "Continued in session {} \u{201c}{}\u{201d} ({}). Its run answers the person's latest message; this turn is over.",
                    continued.session_id,
                    continued.title,
                    reason_words(continued.reason)
                );
                state.continued_to = Some(continued);
                (text, false, events)
            }
        };
        let summary = content.lines().next().unwrap_or("").to_owned();
        let result = ToolResult { tool_call_id: call.id.clone(), name: call.name.clone(), content, is_error };
        let after = self.finish_checkpoint(checkpoint);
        self.record_tool_outcome(state.run_id, call, &result, &extra, after);
        let bodies = std::iter::once(EventBody::ToolResult(result)).chain(extra);
        self.inner.store.agent(&self.inner.agent).append(run_ctx.session_id, bodies)?;
        self.inner.notifier.session_changed(run_ctx.session_id);
        observer.event(RunEvent::ToolFinished { id: call.id.clone(), name: call.name.clone(), is_error, summary });
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
                self.resume_unstarted_successor(&continued)?;
                return Ok(Decided::Continued { continued, events: Vec::new() });
            }
        }
        let ctx =
            ToolContext { run: run_ctx, access: &self.inner.access, workspace, permissions: &self.inner.permissions };
        let mut cancel = cancel.clone();
        let outcome = tokio::select! {
            outcome = self.inner.tools.call(ctx, &call.name, call.arguments.clone()) => outcome,
            // Dropping the tool's future stops it (bash kills its process
            // group); the caller records the cancelled result.
            _ = cancel.wait_for(|c| *c) => return Err(RunError::Cancelled),
        };
        Ok(match outcome {
            Ok(ToolOutcome { text, action: ToolAction::None }) => {
                Decided::Done { text, is_error: false, events: Vec::new() }
            }
            Ok(ToolOutcome { text, action: ToolAction::Append(events) }) => {
                Decided::Done { text, is_error: false, events }
            }
            Ok(ToolOutcome { text, action: ToolAction::Return(value) }) => Decided::Returned { text, value },
            // Every `delegate` call was decided before the turn's calls ran.
            Ok(ToolOutcome { action: ToolAction::Delegate(_), .. }) => {
                Decided::error(children::NOT_A_DELEGATION.to_owned())
            }
            Ok(ToolOutcome { action: ToolAction::Continue(request), .. }) => {
                match self.continue_session(run_ctx, call, &request) {
                    Ok(continued) => Decided::Continued { continued, events: predecessor_events(&request) },
                    Err(refusal) => Decided::error(refusal.to_string()),
                }
            }
            Err(error) => {
                let events = error.denial().map(|d| vec![d.event(call.id.clone())]).unwrap_or_default();
                Decided::Done { text: error.to_string(), is_error: true, events }
            }
        })
    }

    /// Settles tool calls a stopped run left without a result, then appends
    /// `then`, all in one transaction. A `continue_session` whose successor
    /// exists is replayed (its successor is returned, so a run can end its
    /// turn); any other call is reported as interrupted, since it may or may
    /// not have taken effect. Without this the pairing check would refuse
    /// the session forever.
    pub(crate) fn settle_then_append(
        &self,
        session_id: SessionId,
        then: Option<EventBody>,
    ) -> Result<(Vec<Event>, Option<ContinuedTo>), RunError> {
        let store = self.inner.store.agent(&self.inner.agent);
        store.write(|tx| -> Result<_, RunError> {
            let reader = tx.read();
            // The head, not the fold: this runs before every run and message.
            let last_seq = reader.summary(session_id)?.last_seq;
            // Unanswered calls can only belong to the newest assistant turn.
            let tail_from = Seq(last_seq.saturating_sub(SETTLE_WINDOW_EVENTS).max(1));
            let tail = reader.events(session_id, SeqRange::starting_at(tail_from))?;
            let mut bodies = Vec::new();
            let mut continued = None;
            for call in unanswered_calls(&tail) {
                let replayed =
                    if call.name == ContinueSession.name() { replay(&reader, session_id, &call)? } else { None };
                let content = match &replayed {
                    Some(c) => format!("Continued in session {} \u{201c}{}\u{201d}.", c.session_id, c.title),
                    None => INTERRUPTED.to_owned(),
                };
                let is_error = replayed.is_none();
                continued = continued.or(replayed);
                bodies.push(EventBody::ToolResult(ToolResult {
                    tool_call_id: call.id.clone(),
                    name: call.name.clone(),
                    content,
                    is_error,
                }));
            }
            bodies.extend(then);
            let events = if bodies.is_empty() { Vec::new() } else { tx.append(session_id, bodies)? };
            Ok((events, continued))
        })
    }

    /// Gives every unanswered call a result, so the transcript stays paired
    /// after a cancellation.
    fn cancel_calls(&self, session_id: SessionId, calls: &[ToolCall]) -> Result<(), RunError> {
        let bodies = calls.iter().map(|call| {
            EventBody::ToolResult(ToolResult {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                content: "cancelled: the user interrupted the turn before this tool finished".to_owned(),
                is_error: true,
            })
        });
        self.inner.store.agent(&self.inner.agent).append(session_id, bodies)?;
        self.inner.notifier.session_changed(session_id);
        Ok(())
    }

    /// The continuation runtime, then the run loop's part: enqueue the
    /// successor's run on the interactive lane and announce both sessions.
    fn continue_session(
        &self,
        run_ctx: &RunContext,
        call: &ToolCall,
        request: &ContinuationRequest,
    ) -> Result<ContinuedTo, ContinuationRefused> {
        let store = self.inner.store.agent(&self.inner.agent);
        let ctx = ContinuationContext {
            store: &store,
            predecessor: run_ctx.session_id,
            call,
            window: self.context_window(),
            hooks: &self.inner.continuation_hooks,
        };
        let continued = continuation::continue_session(&ctx, request)?;
        self.enqueue(RunSpec {
            session_id: continued.session_id,
            kind: RunKind::Interactive,
            lane: Lane::Interactive,
            user_event_ids: vec![continued.user_event_id],
            max_turns: self.inner.settings.max_turns,
        });
        self.inner.notifier.session_changed(run_ctx.session_id);
        self.inner.notifier.session_changed(continued.session_id);
        self.inner.notifier.send(Notification::AccountChange {
            reasons: vec![AccountChangeReason::SessionUpdated, AccountChangeReason::SessionContinued],
        });
        Ok(continued)
    }
}

/// The stored name of a run kind.
pub(crate) fn run_kind_name(kind: RunKind) -> &'static str {
    match kind {
        RunKind::Interactive => "interactive",
        RunKind::DelegatedChild { .. } => "delegated_child",
        RunKind::TypedChild { .. } => "typed_child",
        RunKind::Script => "script",
    }
}

/// What a tool call comes to, before it is recorded.
enum Decided {
    /// A result (success or error) and the events recorded with it.
    Done { text: String, is_error: bool, events: Vec<EventBody> },
    /// The session continued: the turn ends after the tools.
    Continued { continued: ContinuedTo, events: Vec<EventBody> },
    /// A typed child returned its value: its run ends after the tools.
    Returned { text: String, value: serde_json::Value },
}

impl Decided {
    fn error(text: String) -> Self {
        Decided::Done { text, is_error: true, events: Vec::new() }
    }
}

/// What a run has accumulated so far.
struct RunState {
    run_id: RunId,
    turns: u32,
    usage: Usage,
    result: Option<String>,
    continued_to: Option<crate::protocol::ContinuedTo>,
    error: Option<String>,
    /// A typed child's value, once `return_result` accepted it.
    returned: Option<serde_json::Value>,
    /// This turn's `delegate` calls, decided, waiting to be recorded.
    parked: children::ParkedCalls,
}

impl RunState {
    fn new(run_id: RunId, _spec: &RunSpec) -> Self {
        Self {
            run_id,
            turns: 0,
            usage: Usage::default(),
            result: None,
            continued_to: None,
            error: None,
            returned: None,
            parked: children::ParkedCalls::default(),
        }
    }
}

fn add_usage(total: &mut Usage, turn: &Usage) {
    total.input += turn.input;
    total.cache_read += turn.cache_read;
    total.cache_write += turn.cache_write;
    total.output += turn.output;
}

/// Forwards the provider's deltas to the run's observer.
struct ForwardDeltas<'a> {
    observer: &'a dyn RunObserver,
}

impl EventSink for ForwardDeltas<'_> {
    fn emit(&self, event: StreamEvent) {
        match event {
            StreamEvent::TextDelta(text) => self.observer.event(RunEvent::TextDelta(text)),
            StreamEvent::ThinkingDelta(text) => self.observer.event(RunEvent::ThinkingDelta(text)),
            StreamEvent::Retrying(notice) => self.observer.event(RunEvent::Retrying(notice)),
            StreamEvent::ToolCallStarted { .. } | StreamEvent::ToolCallReady(_) => {}
        }
    }
}
