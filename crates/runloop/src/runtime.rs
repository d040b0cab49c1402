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
use seri_prompt::text::results;
use seri_prompt::{
    ContextStrategy, ContextUsage, Continued, ContinuedBeforeStop, PlanState, SessionStatus, TurnBlocks,
    effective_context_window,
};
use seri_providers::{ConfiguredProvider, EventSink, ModelRequest, ModelResponse, RequestMessage, StreamEvent};
use seri_store::{LeaseOwner, RunRecord, SeqRange, Store};
use seri_tools::{
    CommandFacts, ContinuationRequest, ContinueSession, Permissions, RunContext, RunKind, RunRef, Tool, ToolAction,
    ToolContext, ToolOutcome, ToolRegistry, Workspace,
};
use tokio::sync::watch;

use crate::access::StoreAccess;
use crate::checkpoint::Checkpoints;
use crate::compaction::Compactor;
use crate::context::{check_pairing, request_messages, unanswered_calls};
use crate::continuation::{self, ContinuationContext, ContinuationRefused, predecessor_events, replay};
use crate::error::RunError;
use crate::lease::{BusyPolicy, LEASE_TTL};
use crate::notify::{AccountChangeReason, Notification, Notifier};
use crate::protocol::{ContinuedTo, Lane, RunEvent, RunObserver, RunOutcome, RunSpec, RunStatus};
use crate::queue::RunQueue;
use crate::trajectory::{Recorder, RuntimeFacts, TrajectoryFacts};
use seri_projection::compaction::{CompactionSettings, WorkingContext};
use seri_providers::ErrorKind;

mod children;

pub use children::MAX_PARALLEL_CHILDREN;

/// The default turn budget of a task.
pub const DEFAULT_MAX_TURNS: u32 = 500;

/// A subagent's turn budget. Never the parent's: three concurrent children
/// on the session's own cap would multiply tokens without a ceiling.
pub const CHILD_MAX_TURNS: u32 = 25;

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
    /// What a run does when another run holds its session: wait its turn
    /// (the default) or fail at once naming the holder (`--no-wait`).
    pub busy: BusyPolicy,
    /// How long a session lease holds without a heartbeat ([`LEASE_TTL`]).
    pub lease_ttl: std::time::Duration,
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
            busy: BusyPolicy::Wait,
            lease_ttl: LEASE_TTL,
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
    /// Each run's trajectory.
    recorder: Recorder,
    /// The compact strategy's summarizer.
    compactor: Compactor,
    /// The files `write_file` and `edit` are about to change.
    checkpoints: Checkpoints,
    continuation_hooks: continuation::CreationHooks,
    /// Who this runtime is when it holds a session lease.
    owner: LeaseOwner,
    /// The submissions running now, each cancelled on its own.
    submissions: crate::command::Submissions,
}

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
            CompactionSettings::new(window, parts.provider.model.clone()).with_keep_tokens(parts.settings.keep_tokens),
            notifier.clone(),
        );
        let checkpoints = Checkpoints::new(parts.store.clone(), parts.agent.clone());
        Self {
            inner: Arc::new(Inner {
                store: parts.store,
                agent: parts.agent,
                provider: parts.provider,
                tools: parts.tools,
                access,
                permissions: parts.permissions,
                settings: parts.settings,
                notifier,
                queue: RunQueue::default(),
                recorder,
                compactor,
                checkpoints,
                continuation_hooks: continuation::CreationHooks::default(),
                owner,
                submissions: crate::command::Submissions::default(),
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

    /// Who this runtime is when it holds a session lease.
    pub(crate) fn lease_owner(&self) -> &LeaseOwner {
        &self.inner.owner
    }

    pub(crate) fn submissions(&self) -> &crate::command::Submissions {
        &self.inner.submissions
    }

    pub(crate) fn permissions(&self) -> &Permissions {
        &self.inner.permissions
    }

    pub(crate) fn agent_store(&self) -> seri_store::AgentStore<'_> {
        self.inner.store.agent(&self.inner.agent)
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
    /// on (only those are read), and their grouping into messages.
    pub(crate) fn working_context(&self, session: SessionId) -> Result<(Vec<Event>, WorkingContext), RunError> {
        crate::compaction::working_context(&self.agent_store(), session)
    }

    /// `/compact [focus]`: compacts now, whatever the estimate. Returns
    /// what to tell the person; too little history is
    /// `Not enough history to compact.`
    pub async fn compact_now(&self, session: SessionId, focus: &str) -> Result<String, RunError> {
        // The recap must not land inside another run's turn: wait for the
        // session like a run does.
        let (_sender, never) = watch::channel(false);
        let no_write = |_: &mut seri_store::WriteTx<'_>| Ok(());
        let (_lease, _) = self.acquire_lease(session, None, Lane::Interactive, &never, &no_write).await?;
        self.inner.compactor.compact_now(session, focus).await
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
        let store = self.inner.store.agent(&self.inner.agent);
        let mut seed = store.new_seed(cwd);
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

    /// Appends a message a person typed and returns its event id, when no
    /// run holds the session; a busy session is [`RunError::Busy`]. (A
    /// message that should wait for a busy session goes in
    /// [`RunSpec::message`]: the run posts it once it holds the session.)
    ///
    /// Tool calls a stopped run left without a result are settled first, in
    /// the same transaction, so the message never lands between a call and
    /// its result.
    pub fn post_user_message(&self, session_id: SessionId, message: Message) -> Result<EventId, RunError> {
        let lease = self.try_lease_now(session_id)?;
        let (events, _) = self.settle_then_append(session_id, Some(EventBody::Message(message)))?;
        lease.release(|_| Ok(()))?;
        self.inner.notifier.session_changed(session_id);
        events.last().map(|e| e.id).ok_or(RunError::NothingAppended { session_id })
    }

    /// What opening a session finds left over from a process that stopped:
    /// once nobody holds the session, the calls its last run left without a
    /// result are settled, and a continuation it committed is replayed. The
    /// successor is returned when its run was lost (it holds nothing but its
    /// first two events), so the caller answers its waiting message there
    /// and follows it, whichever end of the continuation was opened.
    ///
    /// A session a live run holds has nothing to recover: `Ok(None)`.
    pub fn recover(&self, session_id: SessionId) -> Result<Option<ContinuedTo>, RunError> {
        let lease = match self.try_lease_now(session_id) {
            Ok(lease) => lease,
            Err(RunError::Busy { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let (settled, replayed) = self.settle_then_append(session_id, None)?;
        lease.release(|_| Ok(()))?;
        if !settled.is_empty() {
            self.inner.notifier.session_changed(session_id);
        }
        // The replayed continuation, or one whose tool result was written
        // before the process stopped: either way the newest edge's successor
        // may never have run.
        let successor = match replayed {
            Some(continued) => Some(continued),
            None => self.agent_store().read(|r| crate::continuation::newest_successor(r, session_id))?,
        };
        match successor {
            Some(continued) if continuation::successor_unstarted(&self.agent_store(), &continued)? => {
                Ok(Some(continued))
            }
            _ => Ok(None),
        }
    }

    /// Queues a run. Interactive runs go before background ones.
    pub fn enqueue(&self, spec: RunSpec) {
        self.inner.queue.push(spec);
    }

    /// Runs everything queued, in lane order, until the queue is empty, and
    /// returns every outcome in the order the runs ended. A run that
    /// continues into a successor is followed into it (see
    /// [`Runtime::run_following`]), so a caller that sent the message gets
    /// the successor's answer too.
    pub async fn drain(&self, observer: &dyn RunObserver, cancel: &watch::Receiver<bool>) -> Vec<RunOutcome> {
        let mut outcomes = Vec::new();
        while let Some(spec) = self.inner.queue.pop() {
            let followed = self.run_following(spec, observer, cancel).await;
            let stop = followed.last().is_some_and(|o| o.status == RunStatus::Cancelled);
            outcomes.extend(followed);
            if stop {
                self.inner.queue.clear();
                break;
            }
        }
        outcomes
    }

    /// Executes `spec`, then, while a run ends by continuing into a
    /// successor that no run has started yet, the successor's run, which
    /// answers the copied message. Returns every outcome, in order.
    pub async fn run_following(
        &self,
        spec: RunSpec,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> Vec<RunOutcome> {
        let mut outcomes = Vec::new();
        let mut next = Some(spec);
        while let Some(spec) = next.take() {
            let max_turns = spec.max_turns;
            let outcome = self.run(spec, observer, cancel).await;
            if outcome.status != RunStatus::Cancelled
                && let Some(continued) = &outcome.continued_to
            {
                match continuation::successor_unstarted(&self.agent_store(), continued) {
                    Ok(true) => {
                        next = Some(RunSpec {
                            session_id: continued.session_id,
                            kind: RunKind::Interactive,
                            lane: Lane::Interactive,
                            user_event_ids: vec![continued.user_event_id],
                            max_turns,
                            message: None,
                        });
                    }
                    Ok(false) => {}
                    Err(e) => {
                        tracing::warn!(session = %continued.session_id, error = %e, "cannot tell whether the successor ran")
                    }
                }
            }
            outcomes.push(outcome);
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
        let observer = &self.inner.recorder.tee(run_id, &spec, observer);
        observer.event(RunEvent::RunStarted { run_id, session_id: spec.session_id });
        let mut state = RunState::new(run_id, &spec);
        let record = RunRecord {
            id: run_id,
            session_id: spec.session_id,
            kind: spec.kind.name(),
            lane: spec.lane,
            parent_run_id: spec.kind.parent_run_id(),
            status: RunStatus::Running,
            result: None,
            started_at: self.inner.store.now(),
            finished_at: None,
        };
        // The run is recorded in the transaction that gives it the session,
        // so no run is ever `running` without holding its session.
        let start = |tx: &mut seri_store::WriteTx<'_>| tx.start_run(&record);
        let leased = self.acquire_lease(spec.session_id, Some(run_id), spec.lane, cancel, &start).await;
        let (lease, turns) = match leased {
            Ok((lease, _reaped)) => {
                // A run whose lease is taken from it stops as if cancelled,
                // before it writes anything more.
                let (stop_tx, stop) = watch::channel(*cancel.borrow());
                let mut outer = cancel.clone();
                let mut lost = lease.lost();
                let forward = tokio::spawn(async move {
                    tokio::select! {
                        Ok(_) = outer.wait_for(|c| *c) => {}
                        Ok(_) = lost.wait_for(|l| *l) => {}
                        else => return,
                    }
                    let _ = stop_tx.send(true);
                });
                let turns = self.turns(&spec, &mut state, observer, &stop).await;
                forward.abort();
                let turns = match turns {
                    Err(RunError::Cancelled) if *lease.lost().borrow() && !*cancel.borrow() => {
                        Err(RunError::LeaseLost { session_id: spec.session_id })
                    }
                    other => other,
                };
                (Some(lease), turns)
            }
            Err(e) => (None, Err(e)),
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
        if let Some(lease) = lease
            && let Err(e) = lease.release(|tx| tx.finish_run(run_id, status, &outcome.record()))
        {
            // The run's events are all recorded; only its summary row is
            // not, and the lease goes with the process.
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
        let posted = spec.message.clone().map(EventBody::Message);
        let has_message = posted.is_some();
        let (settled, replayed) = self.settle_then_append(spec.session_id, posted)?;
        if let Some(continued) = replayed
            && !has_message
        {
            // The session continued before a crash: the turn ends as it
            // would have, and whoever follows the outcome answers the
            // successor's copied message if its run was lost. (A new
            // message branches the predecessor instead; the successor's
            // message then waits for `recover` from either end.)
            observer.event(RunEvent::Continued(continued.clone()));
            state.continued_to = Some(continued);
            return Ok(RunStatus::Succeeded);
        }
        if has_message {
            self.inner.notifier.session_changed(spec.session_id);
            state.posted = settled.last().map(|e| (e.id, e.seq));
            if let Some((event_id, seq)) = state.posted {
                self.inner.recorder.set_run_turn(state.run_id, seq);
                observer.event(RunEvent::MessagePosted { session_id: spec.session_id, event_id, seq });
            }
        } else if !spec.user_event_ids.is_empty() && self.already_answered(spec)? {
            tracing::info!(session = %spec.session_id, "the message was answered by another run; nothing to do");
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
                && let Some(compacted) =
                    self.inner.compactor.compact_if_needed(spec.session_id, &events, &context, observer).await?
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
                        .inner
                        .compactor
                        .compact_after_overflow(spec.session_id, observer)
                        .await
                        .map_err(|c| RunError::OverflowCompaction(Box::new((e, c))))?;
                    let request = self.build_request(&run_ctx, &context, &events)?;
                    self.call_model(&request, observer, cancel).await?
                }
                other => other?,
            };
            let mut response = response;
            self.make_call_ids_unique(spec.session_id, &mut response.tool_calls)?;
            state.turns += 1;
            add_usage(&mut state.usage, &response.usage);
            self.record_turn(spec.session_id, &response)?;
            state.turn_continuation =
                response.tool_calls.iter().find(|c| c.name == ContinueSession.name()).map(|c| c.id.clone());
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
        let (content, is_error, extra, facts) = match decided {
            Decided::Done { text, is_error, events, facts } => (text, is_error, events, facts),
            Decided::Returned { text, value } => match state.returned {
                None => {
                    state.returned = Some(value);
                    (text, false, Vec::new(), None)
                }
                Some(_) => (results::ALREADY_RETURNED.to_owned(), true, Vec::new(), None),
            },
            Decided::Continued { continued, events } => {
                let text =
                    Continued { session_id: continued.session_id, title: &continued.title, reason: continued.reason }
                        .to_string();
                state.continued_to = Some(continued);
                (text, false, events, None)
            }
        };
        let summary = content.lines().next().unwrap_or("").to_owned();
        let result = ToolResult { tool_call_id: call.id.clone(), name: call.name.clone(), content, is_error };
        let after = self.inner.checkpoints.finish(checkpoint);
        recorder.record_tool_outcome(run_id, call, &result, &extra, facts, after);
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
                return Ok(Decided::Continued { continued, events: Vec::new() });
            }
        }
        let ctx = ToolContext {
            run: run_ctx,
            access: &self.inner.access,
            workspace,
            permissions: &self.inner.permissions,
            call_id: Some(&call.id),
        };
        let mut cancel = cancel.clone();
        let outcome = tokio::select! {
            outcome = self.inner.tools.call(ctx, &call.name, call.arguments.clone()) => outcome,
            // Dropping the tool's future stops it (bash kills its process
            // group); the caller records the cancelled result.
            _ = cancel.wait_for(|c| *c) => return Err(RunError::Cancelled),
        };
        Ok(match outcome {
            Ok(ToolOutcome { text, action: ToolAction::None, facts }) => {
                Decided::Done { text, is_error: false, events: Vec::new(), facts }
            }
            Ok(ToolOutcome { text, action: ToolAction::Append(events), facts }) => {
                Decided::Done { text, is_error: false, events, facts }
            }
            Ok(ToolOutcome { text, action: ToolAction::Return(value), .. }) => Decided::Returned { text, value },
            // Every `delegate` call was decided before the turn's calls ran.
            Ok(ToolOutcome { action: ToolAction::Delegate(_), .. }) => {
                Decided::error(results::NOT_A_DELEGATION.to_owned())
            }
            Ok(ToolOutcome { action: ToolAction::Continue(request), .. }) => {
                match self.continue_session(run_ctx, call, &request) {
                    Ok(continued) => Decided::Continued { continued, events: predecessor_events(&request) },
                    Err(refusal) => Decided::error(refusal.to_string()),
                }
            }
            Err(error) => {
                let events = error.denial().map(|d| vec![d.event(call.id.clone())]).unwrap_or_default();
                Decided::Done { text: error.to_string(), is_error: true, events, facts: error.facts() }
            }
        })
    }

    /// Settles tool calls a stopped run left without a result, then appends
    /// `then`, all in one transaction. The caller holds the session's lease,
    /// so any call without a result belongs to a run that is gone. A `continue_session` whose successor
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
            // Unanswered calls can only belong to the newest assistant turn,
            // and its calls follow its message: read from there, however
            // many calls the turn made.
            let tail_from = reader.newest_assistant_message(session_id)?.map_or(Seq::FIRST, |e| e.seq);
            let tail = reader.events(session_id, SeqRange::starting_at(tail_from))?;
            let mut bodies = Vec::new();
            let mut continued = None;
            for call in unanswered_calls(&tail) {
                let replayed =
                    if call.name == ContinueSession.name() { replay(&reader, session_id, &call)? } else { None };
                let content = match &replayed {
                    Some(c) => ContinuedBeforeStop { session_id: c.session_id, title: &c.title }.to_string(),
                    None => results::INTERRUPTED.to_owned(),
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

    /// Whether the messages `spec` answers were answered already: another
    /// run (another process resuming the same session) got there first, so
    /// something follows them now. Checked once the run holds the session.
    fn already_answered(&self, spec: &RunSpec) -> Result<bool, RunError> {
        let store = self.agent_store();
        let last = store.summary(spec.session_id)?.last_seq;
        if last == 0 {
            return Ok(false);
        }
        let newest = store.events(spec.session_id, SeqRange::between(Seq(last), Seq(last)))?;
        Ok(newest.first().is_some_and(|e| !spec.user_event_ids.contains(&e.id)))
    }

    /// Gives every call of a model turn an id no other call of its session
    /// has: providers that send none get fresh ones already, but some send
    /// the same id twice in a turn, or again in a later turn. A repeat
    /// would pair a result with the wrong call, and a `continue_session`
    /// whose id an earlier continuation used would be taken for a replay
    /// of it and swallow the person's message.
    fn make_call_ids_unique(&self, session_id: SessionId, calls: &mut [ToolCall]) -> Result<(), RunError> {
        let store = self.agent_store();
        let mut seen = std::collections::HashSet::new();
        for call in calls.iter_mut() {
            let repeated = call.id.0.is_empty() || !seen.insert(call.id.clone());
            let used_by_an_edge =
                call.name == ContinueSession.name() && store.continuation_by_tool_call(session_id, &call.id)?.is_some();
            if repeated || used_by_an_edge {
                let fresh = seri_core::ToolCallId(format!("{}-{}", call.id.0, self.inner.store.new_run_id()));
                tracing::info!(old = %call.id.0, new = %fresh.0, "gave a repeated tool call id a fresh one");
                seen.insert(fresh.clone());
                call.id = fresh;
            }
        }
        Ok(())
    }

    /// Gives every unanswered call a result, so the transcript stays paired
    /// after a cancellation.
    fn cancel_calls(&self, session_id: SessionId, calls: &[ToolCall]) -> Result<(), RunError> {
        let bodies = calls.iter().map(|call| {
            EventBody::ToolResult(ToolResult {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                content: results::CANCELLED.to_owned(),
                is_error: true,
            })
        });
        self.inner.store.agent(&self.inner.agent).append(session_id, bodies)?;
        self.inner.notifier.session_changed(session_id);
        Ok(())
    }

    /// The continuation runtime, then the run loop's part: announce both
    /// sessions. Whoever follows the run's outcome runs the successor.
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
enum Decided {
    /// A result (success or error), the events recorded with it, and what
    /// its command came to if it ran one.
    Done { text: String, is_error: bool, events: Vec<EventBody>, facts: Option<CommandFacts> },
    /// The session continued: the turn ends after the tools.
    Continued { continued: ContinuedTo, events: Vec<EventBody> },
    /// A typed child returned its value: its run ends after the tools.
    Returned { text: String, value: serde_json::Value },
}

impl Decided {
    fn error(text: String) -> Self {
        Decided::Done { text, is_error: true, events: Vec::new(), facts: None }
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
    /// The message this run posted ([`RunSpec::message`]), once posted.
    posted: Option<(EventId, Seq)>,
    /// This turn's first `continue_session` call: the only one that may
    /// run; a second in the same turn is refused before anything is created.
    turn_continuation: Option<seri_core::ToolCallId>,
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
            posted: None,
            turn_continuation: None,
            parked: children::ParkedCalls::default(),
        }
    }
}

/// The context window in force for `model` under `settings`.
fn context_window_of(model: &ModelRef, settings: &RuntimeSettings) -> u64 {
    effective_context_window(&model.provider, &model.model, settings.context_window).tokens.get()
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
