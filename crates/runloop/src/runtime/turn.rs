//! The turn loop: settle what a stopped run left, post the run's message,
//! then, turn after turn, build the request (compacting first under the
//! compact strategy), call the model, record its turn and run its tool
//! calls, until the model ends its turn, the budget runs out, the run is
//! cancelled, the session continues, or a typed child returns its value.

use seri_core::{Event, EventBody, Message, MessageMeta, ModelRef, Seq, SessionId, Thinking, ToolCall, Usage};
use seri_prompt::ContextStrategy;
use seri_providers::{ErrorKind, EventSink, ModelRequest, ModelResponse, StreamEvent};
use seri_store::SeqRange;
use seri_tools::{ContinueSession, RunContext, RunRef, Tool, Workspace};
use tokio::sync::watch;

use super::Runtime;
use super::run::RunState;
use crate::error::RunError;
use crate::protocol::{RunEvent, RunObserver, RunSpec, RunStatus};

/// What became of a message before the run that is to answer it.
enum AnswerSoFar {
    /// Not answered yet, or its answer was left unfinished: answer it.
    Pending,
    /// Answered: the answer's text.
    Given(String),
    /// A later message came before any answer.
    Overtaken {
        /// The later message's seq.
        later: Seq,
    },
    /// The earlier run continued into a successor to answer it: the answer
    /// is the successor's (a run that died after creating it, or a person
    /// resuming the predecessor, must not answer it here again).
    Continued(crate::protocol::ContinuedTo),
}

impl Runtime {
    /// The run's turns, once it holds its session: how the run ended, or
    /// the error that ended it early.
    pub(super) async fn turns(
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
        let seed = self.seed(spec.session_id)?;
        let workspace = Workspace::new(&seed.cwd).map_err(|e| RunError::Workspace(e.to_string()))?;
        // A recorded folder is data, never a grant: it must be one a person
        // chose for this runtime.
        if let Some(folders) = &self.inner.settings.folders
            && !folders.iter().any(|f| workspace.root().starts_with(f))
        {
            return Err(RunError::Workspace(crate::runtime::folder_refusal(workspace.root(), folders)));
        }
        // A server's job whose message another run posted already (a server
        // whose claim lapsed while it answered, seen only now that this run
        // holds the session) is answered, never posted again: read, and the
        // message posted recorded on the job, in the append's transaction.
        let job = spec.message.as_ref().and_then(|m| m.meta().queued_as.clone());
        let posted = spec.message.clone().map(EventBody::Message);
        let (settled, replayed, already_posted) = match state.opened.take() {
            Some(opened) => opened,
            None => self.settle_then_post(spec.session_id, posted, job.as_deref().map(|id| (id, state.run_id)))?,
        };
        let answering;
        let spec = match already_posted {
            Some(event_id) => {
                tracing::info!(session = %spec.session_id, "the job's message was posted by another run; answering it");
                answering = RunSpec { message: None, user_event_ids: vec![event_id], ..spec.clone() };
                &answering
            }
            None => spec,
        };
        let has_message = spec.message.is_some();
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
        } else if !spec.user_event_ids.is_empty() {
            match self.answer_so_far(spec)? {
                AnswerSoFar::Pending => {}
                AnswerSoFar::Given(text) => {
                    tracing::info!(session = %spec.session_id, "the message was answered by an earlier run");
                    state.result = Some(text);
                    return Ok(RunStatus::Succeeded);
                }
                AnswerSoFar::Overtaken { later } => {
                    return Err(RunError::Overtaken { session_id: spec.session_id, later: later.get() });
                }
                AnswerSoFar::Continued(continued) => {
                    // Whoever follows the outcome goes on in the successor,
                    // which answers the copied message unless it has.
                    tracing::info!(session = %spec.session_id, "the message continued into a successor earlier");
                    observer.event(RunEvent::Continued(continued.clone()));
                    state.continued_to = Some(continued);
                    return Ok(RunStatus::Succeeded);
                }
            }
        }
        // Whether a Stop hook already kept this turn going (`stop_hook_active`).
        let mut stop_hook_active = false;
        loop {
            if *cancel.borrow() {
                return Err(RunError::Cancelled);
            }
            if state.turns >= spec.max_turns {
                return Ok(RunStatus::MaxTurns);
            }
            // The session's view for the per-turn blocks, and its model
            // (`/model` may have chosen another), which sets the compaction
            // trigger and writes the recap; read with the working context.
            let (mut info, mut context) =
                crate::compaction::view_and_working_context(&self.agent_store(), spec.session_id)?;
            let compaction = match self.inner.settings.strategy {
                ContextStrategy::Compact => Some(self.compaction_settings(&info)),
                ContextStrategy::Continue => None,
            };
            if let Some(settings) = &compaction
                && self.inner.compactor.would_compact(spec.session_id, settings, &context)
            {
                self.pre_compact_hooks(spec.session_id, "auto", "").await?;
            }
            if let Some(settings) = &compaction
                && let Some(compacted) =
                    self.inner.compactor.compact_if_needed(spec.session_id, settings, &context, observer).await?
            {
                context = compacted;
                info = self.agent_store().info(spec.session_id)?;
            }
            let request = self.build_request(&run_ctx, &info, context)?;
            // What the answer's bill teaches the estimate: this request's
            // size, unless the answer came from a retry built after it.
            let prompt_chars = seri_providers::request_size::request_chars(&request);
            let mut partial = String::new();
            let first = self.call_model_keeping(&request, observer, cancel, &mut partial).await;
            if matches!(first, Err(RunError::Cancelled)) && !partial.trim().is_empty() && !self.submissions().stopping()
            {
                // What had arrived stays in the session, marked interrupted:
                // the person saw it, and the model reads it next turn. Not
                // when seri stops (a server hands the job to another, which
                // answers the message whole).
                let model = ModelRef { model: request.model.clone(), ..self.inner.provider.model.clone() };
                self.record_interrupted(spec.session_id, partial, model)?;
            }
            let prompt_chars = first.is_ok().then_some(prompt_chars);
            let response = match first {
                Err(RunError::Provider(e)) if e.kind == ErrorKind::ContextOverflow => {
                    // Compact once more and retry this call (compact
                    // strategy), or offer one turn with only
                    // continue_session (continue strategy: the agent did not
                    // continue in time); when that cannot save the turn, the
                    // conversation goes on in a successor whose handoff seri
                    // writes, and the message is answered there.
                    let retried = match &compaction {
                        Some(settings) => {
                            tracing::info!(session = %spec.session_id, "context overflow; compacting and retrying");
                            match self.inner.compactor.compact_after_overflow(spec.session_id, settings, observer).await
                            {
                                Ok(context) => {
                                    let info = self.agent_store().info(spec.session_id)?;
                                    let request = self.build_request(&run_ctx, &info, context)?;
                                    match self.call_model(&request, observer, cancel).await {
                                        Err(RunError::Provider(again)) if again.kind == ErrorKind::ContextOverflow => {
                                            Err(again)
                                        }
                                        other => Ok(other?),
                                    }
                                }
                                Err(compaction_failed) => {
                                    tracing::warn!(session = %spec.session_id, error = %compaction_failed, "the overflow compaction failed");
                                    Err(e)
                                }
                            }
                        }
                        None => match self
                            .offer_only_continue(&run_ctx, &mut state.offered_continue, observer, cancel)
                            .await?
                        {
                            Some(response) => Ok(response),
                            None => Err(e),
                        },
                    };
                    match retried {
                        Ok(response) => response,
                        Err(overflow) => {
                            tracing::info!(session = %spec.session_id, "context overflow; continuing into a successor");
                            let continued = self.continue_after_overflow(&run_ctx, overflow)?;
                            observer.event(RunEvent::Continued(continued.clone()));
                            state.continued_to = Some(continued);
                            return Ok(RunStatus::Succeeded);
                        }
                    }
                }
                other => other?,
            };
            let mut response = response;
            self.make_call_ids_unique(spec.session_id, &mut response.tool_calls)?;
            state.turns += 1;
            state.usage = Usage::add_reported(state.usage, response.usage);
            // The model that answered: the one the request went to.
            let answered = ModelRef { model: request.model.clone(), ..self.inner.provider.model.clone() };
            let window = super::context_window_of(&answered, &self.inner.settings);
            self.record_turn(spec.session_id, &response, answered, prompt_chars)?;
            state.turn_continuation =
                response.tool_calls.iter().find(|c| c.name == ContinueSession.name()).map(|c| c.id.clone());
            observer.event(RunEvent::TurnRecorded { usage: response.usage, window });
            if response.tool_calls.is_empty() {
                // A Stop hook may keep the turn going, with its words.
                if self
                    .stop_hooks(&run_ctx, std::path::Path::new(&seed.cwd), &response.text, stop_hook_active, cancel)
                    .await?
                {
                    stop_hook_active = true;
                    continue;
                }
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
            self.fire_rules(spec.session_id, &seed.cwd, state, observer)?;
        }
    }

    pub(super) async fn call_model(
        &self,
        request: &ModelRequest,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
    ) -> Result<ModelResponse, RunError> {
        self.call_model_keeping(request, observer, cancel, &mut String::new()).await
    }

    /// [`Runtime::call_model`], keeping in `partial` the answer text that
    /// had streamed when the call was cancelled.
    async fn call_model_keeping(
        &self,
        request: &ModelRequest,
        observer: &dyn RunObserver,
        cancel: &watch::Receiver<bool>,
        partial: &mut String,
    ) -> Result<ModelResponse, RunError> {
        let sink = ForwardDeltas { observer, text: std::sync::Mutex::default() };
        let mut cancel = cancel.clone();
        let result = tokio::select! {
            response = self.inner.provider.provider.stream(request, &sink) => Ok(response?),
            _ = cancel.wait_for(|c| *c) => Err(RunError::Cancelled),
        };
        if matches!(result, Err(RunError::Cancelled)) {
            *partial = std::mem::take(&mut *sink.text.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        }
        result
    }

    /// Records the answer a cancelled turn had written so far, marked
    /// interrupted.
    fn record_interrupted(&self, session_id: SessionId, text: String, model: ModelRef) -> Result<(), RunError> {
        let meta = MessageMeta { model: Some(model), interrupted: true, ..MessageMeta::default() };
        let message = Message { meta: Some(Box::new(meta)), ..Message::assistant(text) };
        self.inner.leases.append(session_id, [EventBody::Message(message)])?;
        self.inner.notifier.session_changed(session_id);
        Ok(())
    }

    /// Records one model turn: thinking, the assistant message with its
    /// usage (and the size of the request it answered, when known), and its
    /// tool calls, in one transaction.
    fn record_turn(
        &self,
        session_id: SessionId,
        response: &ModelResponse,
        model: ModelRef,
        prompt_chars: Option<u64>,
    ) -> Result<Vec<Event>, RunError> {
        let mut bodies: Vec<EventBody> =
            response.thinking.iter().cloned().map(|t: Thinking| EventBody::Thinking(t)).collect();
        bodies.push(EventBody::Message(Message {
            meta: Some(Box::new(MessageMeta {
                usage: response.usage,
                model: Some(model),
                prompt_chars,
                stop_reason: Some(response.stop_reason.as_str().to_owned()),
                ..MessageMeta::default()
            })),
            ..Message::assistant(response.text.clone())
        }));
        bodies.extend(response.tool_calls.iter().cloned().map(EventBody::ToolCall));
        let events = self.inner.leases.append(session_id, bodies)?;
        self.inner.notifier.session_changed(session_id);
        Ok(events)
    }

    /// What became of the message `spec` answers (the newest of its
    /// `user_event_ids`) before this run: read forward from it, once the run
    /// holds the session and has settled what a stopped run left. Its answer
    /// is the first assistant message after it whose turn made no tool call,
    /// before the next message of a person or a trigger. An answer a stopped
    /// run left unfinished (calls answered or settled, no final message yet)
    /// is pending: the run goes on from there, as a server taking over a job
    /// does. A later message before any answer has overtaken it: a newer
    /// message never makes an older one look answered.
    fn answer_so_far(&self, spec: &RunSpec) -> Result<AnswerSoFar, RunError> {
        const PAGE: u64 = 64;
        let store = self.agent_store();
        let mut from = Seq(0);
        for id in &spec.user_event_ids {
            from = from.max(store.event(*id)?.seq);
        }
        let mut answer: Option<String> = None;
        let mut continuing: Option<seri_core::ToolCallId> = None;
        loop {
            let after = Seq(from.get() + 1);
            let page = store.events_page(spec.session_id, SeqRange::starting_at(after), Some(PAGE))?;
            for event in &page {
                match &event.body {
                    // An answer cut short is no answer: the message still waits for one.
                    EventBody::Message(m) if m.role == seri_core::Role::Assistant && !m.meta().interrupted => {
                        answer = Some(m.content.clone());
                    }
                    EventBody::ToolCall(call) => {
                        answer = None;
                        if call.name == ContinueSession.name() {
                            continuing = Some(call.id.clone());
                        }
                    }
                    EventBody::ToolResult(result)
                        if !result.is_error && continuing.as_ref() == Some(&result.tool_call_id) =>
                    {
                        let (session, call, messages) = (spec.session_id, &result.tool_call_id, &spec.user_event_ids);
                        if let Some(continued) =
                            store.read(|r| crate::continuation::continued_for(r, session, call, messages))?
                        {
                            return Ok(AnswerSoFar::Continued(continued));
                        }
                    }
                    EventBody::Message(m) if m.is_from_user_or_trigger() => {
                        return Ok(match answer {
                            Some(text) => AnswerSoFar::Given(text),
                            None => AnswerSoFar::Overtaken { later: event.seq },
                        });
                    }
                    _ => {}
                }
                from = event.seq;
            }
            if (page.len() as u64) < PAGE {
                return Ok(answer.map_or(AnswerSoFar::Pending, AnswerSoFar::Given));
            }
        }
    }

    /// Gives every call of a model turn an id no other call of its session
    /// has: providers that send none get fresh ones already, but some send
    /// the same id twice in a turn, or again in a later turn. A repeat
    /// would pair a result with the wrong call, and a `continue_session`
    /// whose id an earlier continuation used would be taken for a replay
    /// of it and swallow the person's message.
    fn make_call_ids_unique(&self, session_id: SessionId, calls: &mut [ToolCall]) -> Result<(), RunError> {
        if calls.is_empty() {
            return Ok(());
        }
        let ids: Vec<seri_core::ToolCallId> = calls.iter().map(|c| c.id.clone()).collect();
        let used: std::collections::HashSet<seri_core::ToolCallId> =
            self.agent_store().tool_call_ids_used(session_id, &ids)?.into_iter().collect();
        let mut seen = std::collections::HashSet::new();
        for call in calls.iter_mut() {
            let repeated = call.id.0.is_empty() || used.contains(&call.id) || !seen.insert(call.id.clone());
            if repeated {
                let fresh = seri_core::ToolCallId(format!("{}-{}", call.id.0, self.inner.store.new_run_id()));
                tracing::info!(old = %call.id.0, new = %fresh.0, "gave a repeated tool call id a fresh one");
                seen.insert(fresh.clone());
                call.id = fresh;
            }
        }
        Ok(())
    }
}

/// Forwards the provider's deltas to the run's observer, keeping the
/// answer's text so far (what a cancelled turn leaves).
struct ForwardDeltas<'a> {
    observer: &'a dyn RunObserver,
    text: std::sync::Mutex<String>,
}

impl EventSink for ForwardDeltas<'_> {
    fn emit(&self, event: StreamEvent) {
        match event {
            StreamEvent::TextDelta(text) => {
                self.text.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push_str(&text);
                self.observer.event(RunEvent::TextDelta(text));
            }
            StreamEvent::ThinkingDelta(text) => self.observer.event(RunEvent::ThinkingDelta(text)),
            StreamEvent::Retrying(notice) => self.observer.event(RunEvent::Retrying(notice)),
            StreamEvent::ToolCallStarted { .. } | StreamEvent::ToolCallReady(_) => {}
        }
    }
}
