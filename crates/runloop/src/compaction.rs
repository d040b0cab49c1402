//! The compact strategy at run time: seri's prefix summarizer.
//!
//! Before every model call (the first after `--resume` included) the run
//! loop estimates the working context; at half the window or more it
//! compacts first: the planner (`seri_projection::compaction`) picks a safe
//! cut that keeps about `keepTokens` of the newest messages, the same model
//! that runs the turn writes a recap of everything older, and the recap is
//! appended as a `context_compacted` event that marks where the working
//! context now starts. Nothing is deleted.
//!
//! - An automatic compaction that fails is fail-soft: the turn goes on with
//!   the uncompacted context.
//! - When the provider still refuses a request as too long, the run loop
//!   compacts once more (when a safe cut exists) and retries the call; if
//!   that compaction fails, or the retry overflows again, the run loop
//!   continues into a successor (`runtime/overflow.rs`) rather than failing.
//! - `/compact [focus]` runs the same steps on demand, without the trigger.
//!
//! The compactor is a value the runtime owns: it holds its own store
//! handle, the session's model and provider, and the planning figures, and
//! knows nothing of the runtime; the runtime only decides when to call it
//! (and takes the session's lease for `/compact`).
//!
//! The summarizer's request carries no tools. If it would not fit the
//! window, the evicted part is trimmed (tool results shortened first, then
//! calls and thinking, then the oldest events left out) a bounded number of
//! times; the trimmed events stay in the store.

use seri_core::compaction::CompactionTrigger;
use seri_core::tokens::tokens_from_chars;
use std::sync::Arc;

use seri_core::{AgentId, ContextCompacted, Event, EventBody, SessionId};
use seri_projection::ThreadEvents;
use seri_projection::compaction::{
    CompactionDecision, CompactionPlan, CompactionSettings, NOT_ENOUGH_HISTORY, ReadContextError, SummarizerInput,
    WorkingContext, load_working_context, parse_recap, plan_compaction, plan_overflow_compaction, read_working_context,
};
use seri_prompt::{SUMMARIZER_INSTRUCTIONS, SummarizerMessage};
use seri_providers::{ConfiguredProvider, ErrorKind, IgnoreEvents, ModelRequest, RequestMessage};
use seri_store::{AgentStore, SeqRange, Store, StoreError};

use crate::error::RunError;
use crate::notify::Notifier;
use crate::protocol::{RunEvent, RunObserver};

/// Tokens reserved for the summarizer's answer when checking that its
/// request fits the window, and the most it may write: four short sections.
pub const SUMMARY_OUTPUT_RESERVE_TOKENS: u64 = 4_096;

/// How many times the summarizer's request is sent at most: once, then
/// again each time the provider refuses it as too long and a smaller
/// request is built.
pub const MAX_SUMMARY_REQUESTS: u32 = 3;

/// Why a compaction did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    /// No safe cut evicts enough messages.
    #[error("{NOT_ENOUGH_HISTORY}")]
    NotEnoughHistory,
    /// The session could not be read or the recap not recorded.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The working context or the summarizer's input could not be built.
    #[error("the compaction could not be planned: {0}")]
    Plan(String),
    /// The summarizer's request failed.
    #[error("the summarizer failed: {0}")]
    Summarizer(#[from] seri_providers::ProviderError),
    /// The summarizer's answer lacked a field.
    #[error("the summarizer's recap is unusable: {0}")]
    Recap(#[from] seri_projection::compaction::RecapParseError),
}

/// A session's thread read by range, for the working-context reader.
pub(crate) struct StoreThread<'a> {
    pub(crate) store: &'a AgentStore<'a>,
    pub(crate) session: SessionId,
}

impl ThreadEvents for StoreThread<'_> {
    type Error = StoreError;

    fn events(&self, range: seri_core::SeqRange) -> Result<Vec<Event>, StoreError> {
        self.store.events(self.session, SeqRange::between(range.from, range.to))
    }

    fn for_each_body(
        &self,
        range: seri_core::SeqRange,
        visit: &mut (dyn FnMut(seri_core::Seq, EventBody) + Send),
    ) -> Result<(), StoreError> {
        self.store.each_body(self.session, SeqRange::between(range.from, range.to), visit)
    }

    fn context_marks(&self, upto: seri_core::Seq, limit: u64) -> Result<Vec<Event>, StoreError> {
        self.store.context_marks(self.session, upto, limit)
    }
}

/// A session's thread read by range inside one read transaction.
struct ReaderThread<'a, 'r> {
    reader: &'a seri_store::Reader<'r>,
    session: SessionId,
}

impl ThreadEvents for ReaderThread<'_, '_> {
    type Error = StoreError;

    fn events(&self, range: seri_core::SeqRange) -> Result<Vec<Event>, StoreError> {
        self.reader.events(self.session, SeqRange::between(range.from, range.to))
    }

    fn for_each_body(
        &self,
        range: seri_core::SeqRange,
        visit: &mut (dyn FnMut(seri_core::Seq, EventBody) + Send),
    ) -> Result<(), StoreError> {
        self.reader.each_body(self.session, SeqRange::between(range.from, range.to), visit)
    }

    fn context_marks(&self, upto: seri_core::Seq, limit: u64) -> Result<Vec<Event>, StoreError> {
        self.reader.context_marks(self.session, upto, limit)
    }
}

/// The working context of a session: its events from the newest recap on
/// (only those are read), grouped into messages as they are read. The
/// count, the marks and the events are read in one transaction (one
/// snapshot, one round trip fewer each on PostgreSQL).
pub(crate) fn working_context(store: &AgentStore<'_>, session: SessionId) -> Result<WorkingContext, RunError> {
    let loaded = store.read(|reader| {
        let last_seq = seri_core::Seq(reader.event_count(session)?);
        match load_working_context(&ReaderThread { reader, session }, last_seq) {
            // The store's failure is the read's, so a lost connection is
            // read again as any read is.
            Err(ReadContextError::Read { source, .. }) => Err(source),
            loaded => Ok(loaded),
        }
    })?;
    loaded.map_err(|e| RunError::Context(e.to_string()))
}

/// The session's view (without links: see `AgentStore::read_with_view`)
/// and its working context, read in one transaction: what a turn reads
/// before it asks the model.
pub(crate) fn view_and_working_context(
    store: &AgentStore<'_>,
    session: SessionId,
) -> Result<(seri_core::SessionInfo, WorkingContext), RunError> {
    let (view, loaded) = store.read_with_view(session, |reader, view| {
        match load_working_context(&ReaderThread { reader, session }, seri_core::Seq(view.last_seq)) {
            Err(ReadContextError::Read { source, .. }) => Err(source),
            loaded => Ok(loaded),
        }
    })?;
    Ok((view, loaded.map_err(|e| RunError::Context(e.to_string()))?))
}

/// The events of a session's working context, for what needs them whole:
/// the summarizer, and a rewind's list of turns.
pub(crate) fn working_context_events(store: &AgentStore<'_>, session: SessionId) -> Result<Vec<Event>, RunError> {
    let last_seq = seri_core::Seq(store.event_count(session)?);
    let thread = StoreThread { store, session };
    read_working_context(&thread, last_seq).map_err(|e| RunError::Context(e.to_string()))
}

/// What compacting on demand says on the continue strategy, whose
/// transcripts are never compacted: nothing changes.
pub const NOT_ON_CONTINUE: &str = "This session uses the continue strategy: its transcript is never compacted. \
     Continue it into a successor session instead; this one keeps its whole transcript.";

/// The compact strategy's worker, one per runtime.
pub(crate) struct Compactor {
    store: Arc<Store>,
    agent: AgentId,
    /// The runtime's provider: each recap is written by the session's
    /// model (`CompactionSettings::model`) through it.
    provider: ConfiguredProvider,
    notifier: Notifier,
    /// Who the runtime is when it holds a session: a recap is appended only
    /// while it still does.
    owner: seri_store::LeaseOwner,
    /// The sessions told that compacting cannot help: said once each.
    told_skipped: std::sync::Mutex<std::collections::HashSet<SessionId>>,
    /// After a failed automatic compaction, the context size a session
    /// must reach before the next automatic attempt: a summarizer that
    /// failed is not paid again every turn for the same answer.
    backoff: std::sync::Mutex<std::collections::HashMap<SessionId, u64>>,
}

/// How much a session's context must grow, in percent of its window,
/// after a failed automatic compaction before the next automatic attempt.
/// The overflow retry and `/compact` do not wait.
pub const COMPACTION_RETRY_GROWTH_PERCENT: u64 = 10;

impl Compactor {
    /// A compactor over `agent`'s part of `store` that asks `provider` for
    /// recaps; `notifier` hears of each recap. Each call is given the
    /// session's [`CompactionSettings`]: its model's window, the model
    /// that writes the recap (the one the turn uses), the keep budget.
    pub(crate) fn new(
        store: Arc<Store>,
        agent: AgentId,
        provider: ConfiguredProvider,
        notifier: Notifier,
        owner: seri_store::LeaseOwner,
    ) -> Self {
        Self { store, agent, provider, notifier, owner, told_skipped: Default::default(), backoff: Default::default() }
    }

    fn store(&self) -> AgentStore<'_> {
        self.store.agent(&self.agent)
    }

    fn backoff(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<SessionId, u64>> {
        self.backoff.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn working_context(&self, session: SessionId) -> Result<WorkingContext, RunError> {
        working_context(&self.store(), session)
    }

    /// Whether [`Self::compact_if_needed`] would compact `context` now:
    /// so `PreCompact` hooks run only before a compaction that happens.
    pub(crate) fn would_compact(
        &self,
        session: SessionId,
        settings: &CompactionSettings,
        context: &WorkingContext,
    ) -> bool {
        if !matches!(
            plan_compaction(context, settings, CompactionTrigger::Automatic, None),
            CompactionDecision::Compact(_)
        ) {
            return false;
        }
        let tokens = context.estimate(&settings.model).tokens();
        self.backoff().get(&session).is_none_or(|at| tokens >= *at)
    }

    /// The automatic check before a model call. Fail-soft: a failed
    /// compaction is reported and the uncompacted context is used.
    /// Returns the new working context when it compacted, `None` when the
    /// context stays as it is.
    pub(crate) async fn compact_if_needed(
        &self,
        session: SessionId,
        settings: &CompactionSettings,
        context: &WorkingContext,
        observer: &dyn RunObserver,
    ) -> Result<Option<WorkingContext>, RunError> {
        let decision = plan_compaction(context, settings, CompactionTrigger::Automatic, None);
        // At the trigger with fewer than four messages to evict: skipped, as
        // the seri document says, and said once per session.
        if let CompactionDecision::NotEnoughHistory { .. } = &decision {
            let first = self.told_skipped.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(session);
            if first {
                tracing::info!(%session, "{decision}");
                observer.event(RunEvent::CompactionSkipped { reason: decision.to_string() });
            }
            return Ok(None);
        }
        let CompactionDecision::Compact(plan) = decision else {
            return Ok(None);
        };
        let tokens = context.estimate(&settings.model).tokens();
        let waiting_for = self.backoff().get(&session).copied().filter(|at| tokens < *at);
        if let Some(at) = waiting_for {
            tracing::debug!(%session, tokens, retry_at_tokens = at, "a failed compaction waits for the context to grow");
            return Ok(None);
        }
        match self.compact_with(session, settings, &plan, observer).await {
            Ok(_) => Ok(Some(self.working_context(session)?)),
            Err(e) => {
                let growth = (settings.window * COMPACTION_RETRY_GROWTH_PERCENT / 100).max(1);
                let retry_at_tokens = tokens + growth;
                self.backoff().insert(session, retry_at_tokens);
                tracing::warn!(%session, error = %e, retry_at_tokens, "automatic compaction failed; continuing uncompacted");
                observer.event(RunEvent::CompactionFailed { error: e.to_string(), retry_at_tokens });
                Ok(None)
            }
        }
    }

    /// The overflow retry's compaction: not fail-soft.
    pub(crate) async fn compact_after_overflow(
        &self,
        session: SessionId,
        settings: &CompactionSettings,
        observer: &dyn RunObserver,
    ) -> Result<WorkingContext, CompactionError> {
        let context = self.working_context(session).map_err(|e| CompactionError::Plan(e.to_string()))?;
        match plan_overflow_compaction(&context, settings) {
            CompactionDecision::Compact(plan) => {
                self.compact_with(session, settings, &plan, observer).await?;
                self.working_context(session).map_err(|e| CompactionError::Plan(e.to_string()))
            }
            CompactionDecision::NotNeeded { .. } | CompactionDecision::NotEnoughHistory { .. } => {
                Err(CompactionError::NotEnoughHistory)
            }
        }
    }

    /// `/compact [focus]`, once the caller holds the session: compacts
    /// now, whatever the estimate. Returns what to tell the person; too
    /// little history is `Not enough history to compact.`
    pub(crate) async fn compact_now(
        &self,
        session: SessionId,
        settings: &CompactionSettings,
        focus: &str,
    ) -> Result<String, RunError> {
        let context = self.working_context(session)?;
        let focus = Some(focus.trim()).filter(|f| !f.is_empty());
        match plan_compaction(&context, settings, CompactionTrigger::Manual, focus) {
            CompactionDecision::Compact(plan) => {
                match self.compact_with(session, settings, &plan, &crate::protocol::Quiet).await {
                    Ok(done) => Ok(compacted_line(&done)),
                    Err(e) => Ok(format!("Compaction failed; nothing changed: {e}")),
                }
            }
            // Why not, in the person's terms: what stays and what little is before it.
            refused @ CompactionDecision::NotEnoughHistory { .. } => Ok(refused.to_string()),
            CompactionDecision::NotNeeded { .. } => Ok(NOT_ENOUGH_HISTORY.to_owned()),
        }
    }

    /// Summarises the plan's evicted part and appends the recap event.
    async fn compact_with(
        &self,
        session: SessionId,
        settings: &CompactionSettings,
        plan: &CompactionPlan,
        observer: &dyn RunObserver,
    ) -> Result<ContextCompacted, CompactionError> {
        // The session is held, so these are the events the plan was made from.
        let events =
            working_context_events(&self.store(), session).map_err(|e| CompactionError::Plan(e.to_string()))?;
        let mut input = SummarizerInput::new(plan, &events).map_err(|e| CompactionError::Plan(e.to_string()))?;
        let window = settings.window;
        // A small local model cannot spare 4k tokens for the answer; a
        // quarter of its window is still room for four short sections.
        let reserve = SUMMARY_OUTPUT_RESERVE_TOKENS.min(window / 4);
        let instructions = tokens_from_chars(SUMMARIZER_INSTRUCTIONS.chars().count() as u64);
        let mut budget = window;
        let mut requests = 0;
        let answer = loop {
            let message = render(&input);
            let needed = instructions + tokens_from_chars(message.chars().count() as u64) + reserve;
            if needed > budget {
                // Trimming is bounded (`MAX_SUMMARY_TRIM_ATTEMPTS` steps) and
                // fails when even an input without events does not fit; a
                // trim that frees nothing more means it cannot fit either.
                let before = input.tokens();
                let report = input.trim_to_fit(before.saturating_sub(needed - budget));
                if report.is_err() || input.tokens() >= before {
                    return Err(CompactionError::Plan(format!(
                        "the summarizer's request needs about {needed} tokens and cannot be trimmed to the {budget} available"
                    )));
                }
                continue;
            }
            requests += 1;
            // The model the turn uses, not a cheaper one.
            let mut request = ModelRequest::new(settings.model.model.clone(), SUMMARIZER_INSTRUCTIONS);
            request.messages.push(RequestMessage::user(message));
            request.max_output_tokens = u32::try_from(reserve).ok();
            match self.provider.provider.stream(&request, &IgnoreEvents).await {
                Ok(response) => break response.text,
                Err(e) if e.kind == ErrorKind::ContextOverflow && requests < MAX_SUMMARY_REQUESTS => {
                    // The estimate was optimistic: ask for a quarter less.
                    budget = needed.saturating_sub(needed / 4).min(budget);
                }
                Err(e) => return Err(e.into()),
            }
        };
        let compacted = plan.compacted(parse_recap(&answer)?);
        self.backoff().remove(&session);
        self.store().write(|tx| {
            tx.require_lease(session, &self.owner)?;
            tx.append(session, [EventBody::ContextCompacted(Box::new(compacted.clone()))])
        })?;
        self.notifier.session_changed(session);
        observer.event(RunEvent::Compacted {
            evicted_from_seq: compacted.evicted_from_seq,
            evicted_to_seq: compacted.evicted_to_seq,
            tokens_before: compacted.tokens_before,
            tokens_after: compacted.tokens_after,
            still_past_trigger: settings.reaches_trigger(compacted.tokens_after),
        });
        Ok(compacted)
    }
}

fn render(input: &SummarizerInput) -> String {
    let evicted = input.evicted();
    let transcript = input.transcript();
    SummarizerMessage::new(evicted.from, evicted.to, &transcript)
        .previous_recap(input.previous_recap())
        .trimmed(input.trimmed().dropped.map(|r| (r.from, r.to)))
        .focus(input.focus())
        .to_string()
}

/// What `/compact` prints after compacting.
pub fn compacted_line(c: &ContextCompacted) -> String {
    format!(
        "Compacted seq {}–{} into a recap: about {} → {} tokens.",
        c.evicted_from_seq, c.evicted_to_seq, c.tokens_before, c.tokens_after
    )
}
