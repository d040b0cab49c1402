//! The continuation runtime: what happens after the `continue_session` verb
//! accepted its input (`#continueSessionFromAgent` in the continuation
//! document), in the document's order:
//!
//! 1. **Replay**: an edge for (predecessor, tool call id) already exists →
//!    that successor, nothing new.
//! 2. **Validate** what only the runtime can: the successor cap per
//!    predecessor ([`MAX_SESSION_CONTINUATIONS_PER_SESSION`]). (Input shapes,
//!    parked children, the loop rule and sources were checked by the verb.)
//! 3. **Compile** the projection, reading only the ranges it needs, and
//!    check that the successor's first request fits its model's window.
//! 4. **Create atomically**: successor session, edge with manifest, the
//!    projection message and the copied initiating message, attachments
//!    linked. All or nothing, in the [`CreationStep`] order; [`hooks`] has
//!    the seams tests use to prove it.
//! 5. The caller ends the predecessor's turn; whoever follows the run's
//!    outcome ([`crate::Runtime::run_following`]) runs the successor.
//! 6. **Emit** `session-change` for both sessions and `account-change`.

pub mod hooks;

use seri_core::{
    Actor, ContinuationEdge, ContinuationHandoff, ContinueReason, ContinuedFrom, EventBody, Message, MessageMeta,
    PlanTransfer, PlanUpdated, Role, Seq, SessionId, TitleSource, ToolCall, tokens::tokens_from_chars,
};
use seri_projection::{ContinuationInput, Lineage, compile_continuation_projection};
use seri_store::{AgentStore, DataError, Reader, SeqRange, StoreError};
use seri_tools::ContinuationRequest;

use crate::compaction::StoreThread;
use crate::protocol::ContinuedTo;
use crate::runtime::SessionPrompts;

pub use hooks::{CreationHooks, CreationStep};

/// How many successors one predecessor may have. A predecessor gains more
/// than one only when someone types in it again after it continued (a
/// branch); dozens would mean a loop the other rules missed, so the runtime
/// refuses before it fills the database.
pub const MAX_SESSION_CONTINUATIONS_PER_SESSION: u64 = 16;

/// Why a continuation was refused. The model reads the message as an error
/// tool result; nothing was created.
#[derive(Debug, thiserror::Error)]
pub enum ContinuationRefused {
    /// The predecessor already has the maximum number of successors.
    #[error(
        "this session already continued {count} times, the most allowed ({max}); answer here or ask the person to start a new session"
    )]
    TooManySuccessors {
        /// Successors so far.
        count: u64,
        /// The cap.
        max: u64,
    },
    /// The successor's first request would not fit its model's window.
    #[error(
        "the successor's first request would need about {needed} tokens but the model's window is {window}: {over} too many; shorten the handoff or cite fewer sources"
    )]
    DoesNotFit {
        /// Estimated tokens of system prompt, projection and copied message.
        needed: u64,
        /// The window.
        window: u64,
        /// By how much it is over.
        over: u64,
    },
    /// The projection could not be compiled.
    #[error("the projection could not be built: {0}")]
    Projection(String),
    /// The store failed; nothing was created.
    #[error("the successor could not be created: {0}")]
    Store(#[from] StoreError),
    /// A test asked for a failure after this step ([`CreationHooks::fail_after`]).
    #[doc(hidden)]
    #[error("the successor could not be created: a test hook failed it after step `{step}`")]
    InjectedFault {
        /// The step after which it failed.
        step: CreationStep,
    },
}

/// What the runtime needs to know besides the request.
pub struct ContinuationContext<'a> {
    /// The predecessor's store handle.
    pub store: &'a AgentStore<'a>,
    /// The predecessor.
    pub predecessor: SessionId,
    /// The `continue_session` call.
    pub call: &'a ToolCall,
    /// The successor model's context window, in tokens.
    pub window: u64,
    /// The characters of the tool definitions the successor's requests
    /// carry, as the estimate counts them: its first request must fit them
    /// too.
    pub tool_chars: u64,
    /// Test seams in the creation transaction; inert unless a test sets one.
    pub hooks: &'a CreationHooks,
    /// Builds the successor's own system prompt; `None` (or a failure to
    /// build it, logged) keeps the predecessor's.
    pub prompts: Option<&'a dyn SessionPrompts>,
}

/// The handoff `edge` was asked with, for a person's card of it: as the
/// runtime stored it on the successor's projection message; for a
/// continuation made before it was stored there, the predecessor's
/// `continue_session` call parsed again ([`handoff_of`]). `None` when
/// neither can be read.
pub fn continuation_handoff(
    store: &AgentStore<'_>,
    edge: &ContinuationEdge,
) -> Result<Option<ContinuationHandoff>, StoreError> {
    // The projection message is the successor's first event.
    let first = store.events_page(edge.successor_session_id, SeqRange::starting_at(Seq(1)), Some(2))?;
    let projection = first.iter().find_map(|e| match &e.body {
        EventBody::Message(m) if m.meta().projection_of == Some(edge.id) => Some(m),
        _ => None,
    });
    if let Some(stored) = projection.and_then(|m| m.meta().handoff.as_deref()) {
        return Ok(Some(stored.clone()));
    }
    // An older store: the call follows the initiating message in the predecessor.
    let events = store.events(edge.predecessor_session_id, SeqRange::starting_at(edge.manifest.initiating_seq))?;
    let call = events.iter().find_map(|e| match &e.body {
        EventBody::ToolCall(c) if c.id == edge.tool_call_id => Some(c),
        _ => None,
    });
    Ok(handoff_of(projection, call))
}

/// The handoff of a continuation from its stored facts: the one on the
/// successor's projection message, else (a continuation recorded before
/// it was kept there) the `continue_session` call parsed by the function
/// the runtime parsed it with; `None` when neither reads.
pub fn handoff_of(projection: Option<&Message>, call: Option<&ToolCall>) -> Option<ContinuationHandoff> {
    if let Some(stored) = projection.and_then(|m| m.meta().handoff.as_deref()) {
        return Some(stored.clone());
    }
    let parsed = seri_tools::parse_continue_session_input(call?.arguments.clone()).ok()?;
    Some(ContinuationHandoff { title: parsed.title, description: parsed.description, handoff: parsed.handoff })
}

/// Runs steps 1 to 4 and returns where the answer goes: the successor this
/// call created, or the one an earlier execution of the same call created.
/// The run loop then ends the turn, enqueues the successor's run and emits
/// notifications; a caller without a run loop does those itself.
///
/// Replay and the cap are checked again inside the creation transaction,
/// which holds the write lock, so two processes executing the same call (or
/// branching at the cap) at once cannot both create a successor.
pub fn continue_session(
    ctx: &ContinuationContext<'_>,
    request: &ContinuationRequest,
) -> Result<ContinuedTo, ContinuationRefused> {
    let store = ctx.store;
    if let Some(done) = store.read(|r| replay(r, ctx.predecessor, ctx.call))? {
        return Ok(done);
    }
    check_cap(store.successor_count(ctx.predecessor)?)?;

    let Prepared { predecessor_seed, model, lineage, projection, initiating, original, system_prompt, needed } =
        prepare(ctx, request)?;
    if needed > ctx.window {
        return Err(ContinuationRefused::DoesNotFit { needed, window: ctx.window, over: needed - ctx.window });
    }

    let projection_message = |continuation_id| Message {
        role: Role::User,
        actor: Actor::System,
        content: projection.text.clone(),
        meta: Some(Box::new(MessageMeta {
            projection_of: Some(continuation_id),
            handoff: Some(Box::new(ContinuationHandoff {
                title: request.title.clone(),
                description: request.description.clone(),
                handoff: request.handoff.clone(),
            })),
            ..MessageMeta::default()
        })),
        ..Message::default()
    };
    let mut copied = original.clone();
    copied.meta_mut().continued_from =
        Some(ContinuedFrom { session_id: ctx.predecessor, event_id: initiating.id, seq: initiating.seq });

    let hooks = ctx.hooks;
    let continued = store.write(|tx| -> Result<ContinuedTo, ContinuationRefused> {
        if let Some(done) = replay(&tx.read(), ctx.predecessor, ctx.call)? {
            return Ok(done);
        }
        check_cap(tx.read().successor_count(ctx.predecessor)?)?;

        let mut seed = tx.new_seed(predecessor_seed.cwd.clone());
        seed.title = Some(request.title.clone());
        seed.description = Some(request.description.clone());
        seed.title_source = Some(TitleSource::Agent);
        seed.model_override = model.clone();
        seed.plan = request.carried_plan.clone();
        seed.system_prompt = system_prompt.clone();
        let successor = tx.create_session(&seed)?.id;
        hooks.after(CreationStep::SuccessorCreated)?;

        let continuation_id = tx.new_continuation_id();
        tx.insert_continuation(&ContinuationEdge {
            id: continuation_id,
            predecessor_session_id: ctx.predecessor,
            successor_session_id: successor,
            origin_session_id: lineage.origin_session_id,
            tool_call_id: ctx.call.id.clone(),
            initiating_event_id: initiating.id,
            reason: request.reason,
            manifest: projection.manifest.clone(),
            created_at: tx.now(),
        })?;
        hooks.after(CreationStep::EdgeInserted)?;

        for attachment in &original.attachments {
            tx.link_attachment(ctx.predecessor, successor, &attachment.id)?;
        }
        hooks.after(CreationStep::AttachmentsLinked)?;

        tx.append(successor, [EventBody::Message(projection_message(continuation_id))])?;
        hooks.after(CreationStep::ProjectionAppended)?;

        let copied = tx.append(successor, [EventBody::Message(copied.clone())])?;
        hooks.after(CreationStep::MessageCopied)?;

        let user_event_id = copied.last().map(|e| e.id).ok_or(ContinuationRefused::Store(StoreError::Data(
            DataError::InconsistentContinuation { continuation_id, problem: "the copied message was not recorded" },
        )))?;
        Ok(ContinuedTo {
            session_id: successor,
            continuation_id,
            title: request.title.clone(),
            reason: request.reason,
            user_event_id,
        })
    })?;
    hooks::pause_if_asked(hooks::COMMITTED);
    Ok(continued)
}

/// `continue_session` with `dryRun: true`: what a continuation with this
/// input would carry (the projection compiled exactly as [`continue_session`]
/// would compile it), whether the successor's first request fits its
/// window, and the ranges worth citing. Creates nothing.
pub fn estimate_continuation(
    ctx: &ContinuationContext<'_>,
    request: &ContinuationRequest,
) -> Result<String, ContinuationRefused> {
    use seri_projection::continuation::recommend::{RecommendedWhy, recommended_sources};
    use seri_prompt::{ContinuationEstimate, EstimatedRange, ProposedSource};
    let prepared = prepare(ctx, request)?;
    let manifest = &prepared.projection.manifest;
    let range = |r: &seri_core::ManifestRange| EstimatedRange {
        from: r.from_seq.get(),
        to: r.to_seq.get(),
        bytes: r.bytes,
        what: match r.part {
            seri_core::ProjectionPart::Excerpt => "cited",
            seri_core::ProjectionPart::RecentExchange => "recent",
        },
    };
    let events = crate::compaction::working_context_events(ctx.store, ctx.predecessor)
        .map_err(|e| ContinuationRefused::Projection(e.to_string()))?;
    let proposed = recommended_sources(&events, request.initiating_seq)
        .into_iter()
        .map(|r| ProposedSource {
            from: r.from_seq.get(),
            to: r.to_seq.get(),
            why: r
                .why
                .iter()
                .map(|why| match why {
                    RecommendedWhy::FilesChanged(files) => {
                        format!("files changed: {}", files.iter().cloned().collect::<Vec<_>>().join(", "))
                    }
                    RecommendedWhy::Decisions => "the plan or status recorded".to_owned(),
                    RecommendedWhy::LatestExchange => "the latest exchange".to_owned(),
                })
                .collect::<Vec<_>>()
                .join("; "),
        })
        .collect();
    Ok(ContinuationEstimate {
        used_bytes: manifest.used_bytes,
        budget_bytes: manifest.budget_bytes,
        included: manifest.included.iter().map(range).collect(),
        omitted: manifest.omitted.iter().map(range).collect(),
        needed_tokens: prepared.needed,
        window: ctx.window,
        proposed,
    }
    .to_string())
}

/// What the creation needs, measured before its transaction: the
/// projection compiled exactly as the successor will get it, and the size
/// of the successor's first request.
struct Prepared {
    predecessor_seed: seri_core::SessionSeed,
    model: Option<seri_core::ModelRef>,
    lineage: Lineage,
    projection: seri_projection::ContinuationProjection,
    initiating: seri_core::Event,
    original: Message,
    system_prompt: Option<seri_core::FrozenPrompt>,
    /// Estimated tokens of system prompt, projection and copied message.
    needed: u64,
}

fn prepare(ctx: &ContinuationContext<'_>, request: &ContinuationRequest) -> Result<Prepared, ContinuationRefused> {
    let store = ctx.store;
    let predecessor_seed = store.seed(ctx.predecessor)?;
    // The model in force, `/model` included: the successor goes on with it.
    let model = store.info(ctx.predecessor)?.model_override;
    // The cached title, not a fold of the whole transcript: the projection
    // reads only the ranges it needs, and so does everything around it.
    let predecessor_title = store.summary(ctx.predecessor)?.title;
    let into_predecessor = store.continuation_into(ctx.predecessor)?;
    let lineage = Lineage {
        origin_session_id: into_predecessor.as_ref().map_or(ctx.predecessor, |e| e.origin_session_id),
        predecessor_session_id: ctx.predecessor,
        predecessor_title,
        depth: into_predecessor.as_ref().map_or(1, |e| e.manifest.depth + 1),
        reason: request.reason,
    };
    let thread = StoreThread { store, session: ctx.predecessor };
    let input = ContinuationInput::new(&lineage, &request.handoff, &request.sources, request.initiating_seq)
        .with_budget(seri_projection::budget_for_window(ctx.window));
    let projection =
        compile_continuation_projection(&input, &thread).map_err(|e| ContinuationRefused::Projection(e.to_string()))?;
    let initiating = store.event(request.initiating_event_id)?;
    let Some(original) = initiating.body.as_message().cloned() else {
        return Err(ContinuationRefused::Projection("the initiating event is not a message".to_owned()));
    };

    // The successor is a new session: it freezes its own prompt, from the
    // files as they are now, read before the creation transaction.
    let system_prompt = match ctx.prompts.map(|p| p.freeze(&predecessor_seed.cwd)) {
        Some(Ok(prompt)) => Some(prompt),
        Some(Err(error)) => {
            tracing::warn!(%error, "the successor keeps its predecessor's system prompt");
            predecessor_seed.system_prompt.clone()
        }
        None => predecessor_seed.system_prompt.clone(),
    };
    let system_chars = system_prompt.as_ref().map_or(0, |p| p.text.chars().count() as u64);
    let needed = tokens_from_chars(
        system_chars
            + ctx.tool_chars
            + projection.text.chars().count() as u64
            + original.content.chars().count() as u64,
    );
    Ok(Prepared { predecessor_seed, model, lineage, projection, initiating, original, system_prompt, needed })
}

/// The cap on successors per predecessor.
fn check_cap(count: u64) -> Result<(), ContinuationRefused> {
    if count >= MAX_SESSION_CONTINUATIONS_PER_SESSION {
        return Err(ContinuationRefused::TooManySuccessors { count, max: MAX_SESSION_CONTINUATIONS_PER_SESSION });
    }
    Ok(())
}

/// The events a `close` transfer appends to the predecessor with the tool
/// result: its plan is closed. `carry` and `omit` leave the predecessor's
/// transcript with nothing but the tool call and its result.
pub(crate) fn predecessor_events(request: &ContinuationRequest) -> Vec<EventBody> {
    match request.plan_transfer {
        PlanTransfer::Close => vec![EventBody::PlanUpdated(PlanUpdated { plan: None })],
        PlanTransfer::Carry | PlanTransfer::Omit => Vec::new(),
    }
}

/// Step 1, on its own: the successor an earlier execution of this very
/// call created, if there is one: same predecessor, same tool call id and
/// same initiating message. Checked before the verb validates
/// anything, so a replayed call never creates a second successor.
/// The successor a `continue_session` call (`call_id`) of `predecessor`
/// created to answer one of `messages`, if it did: that message was
/// answered there, not left waiting.
pub(crate) fn continued_for(
    reader: &Reader<'_>,
    predecessor: SessionId,
    call_id: &seri_core::ToolCallId,
    messages: &[seri_core::EventId],
) -> Result<Option<ContinuedTo>, StoreError> {
    match reader.continuation_by_tool_call(predecessor, call_id)? {
        Some(edge) if messages.contains(&edge.initiating_event_id) => continued_to_of(reader, &edge).map(Some),
        _ => Ok(None),
    }
}

pub(crate) fn replay(
    reader: &Reader<'_>,
    predecessor: SessionId,
    call: &ToolCall,
) -> Result<Option<ContinuedTo>, StoreError> {
    let Some(edge) = reader.continuation_by_tool_call(predecessor, &call.id)? else {
        return Ok(None);
    };
    // The same call answers the same message: an edge made for another
    // initiating message is another call that happened to get this id.
    let initiating = reader.newest_user_message(predecessor)?.map(|e| e.id);
    if initiating != Some(edge.initiating_event_id) {
        return Ok(None);
    }
    continued_to_of(reader, &edge).map(Some)
}

/// Where the newest continuation out of `predecessor` went, if it has one.
pub(crate) fn newest_successor(reader: &Reader<'_>, predecessor: SessionId) -> Result<Option<ContinuedTo>, StoreError> {
    match reader.continuations_from(predecessor)?.last() {
        Some(edge) => continued_to_of(reader, edge).map(Some),
        None => Ok(None),
    }
}

/// An edge as the run loop hands it on: the successor, its title, and the
/// copied message its run answers.
fn continued_to_of(reader: &Reader<'_>, edge: &ContinuationEdge) -> Result<ContinuedTo, StoreError> {
    let title = reader.summary(edge.successor_session_id)?.title;
    // The copied message is the successor's second event: the creation
    // transaction wrote exactly two.
    let copied = reader.events(edge.successor_session_id, SeqRange::between(Seq(2), Seq(2)))?;
    let Some(copied) = copied.first() else {
        return Err(StoreError::Data(DataError::InconsistentContinuation {
            continuation_id: edge.id,
            problem: "the successor has no copied message",
        }));
    };
    Ok(ContinuedTo {
        session_id: edge.successor_session_id,
        continuation_id: edge.id,
        title,
        reason: edge.reason,
        user_event_id: copied.id,
    })
}

/// How many events the creation transaction gives a successor: the
/// projection and the copied initiating message.
const SUCCESSOR_FIRST_EVENTS: u64 = 2;

/// Whether a successor holds nothing but what its creation wrote: its run
/// never got to it.
pub(crate) fn successor_unstarted(store: &AgentStore<'_>, continued: &ContinuedTo) -> Result<bool, StoreError> {
    Ok(store.event_count(continued.session_id)? <= SUCCESSOR_FIRST_EVENTS)
}

/// The reason's words for people: `topic change`.
pub fn reason_words(reason: ContinueReason) -> String {
    reason.as_str().replace('_', " ")
}
