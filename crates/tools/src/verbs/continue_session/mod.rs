//! `continue_session`: carry the conversation into a successor session.
//!
//! This module handles the input and validates it; the runtime that acts on
//! a valid call (replay, the cap, the projection, the atomic creation, ending
//! the turn) belongs to the run loop's continuation runtime, which receives
//! a [`ContinuationRequest`] in [`ToolAction::Continue`].

mod normalize;
mod parse;
mod schema;
mod sources;

use async_trait::async_trait;
use serde_json::Value;
use seri_core::{Plan, PlanTransfer};
use seri_prompt::{ContextStrategy, text::verbs};

pub use normalize::{HOISTED_KEYS, normalize_continue_session_input, normalize_extra_value};
pub use parse::{
    ContinueSessionInput, HANDOFF_SECTIONS, INPUT_FIELDS, MEMORY_PREFIX, RESOURCE_SCHEMES, SourceInput,
    parse_continue_session_input,
};

use crate::error::{InputError, Refusal, ToolError};
pub use crate::outcome::ContinuationRequest;
use crate::outcome::{ToolAction, ToolOutcome};
use crate::run::{RunContext, RunKind};
use crate::threads;
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "continue_session";

/// The `continue_session` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContinueSession;

impl ContinueSession {
    /// The availability rule: a run exists, it is neither a delegated nor a
    /// typed child, it is not a script, and the session is on the continue
    /// strategy.
    pub fn rule(run: &RunContext) -> Availability {
        let Some(current) = run.run else {
            return Availability::Unavailable("there is no run to end");
        };
        match (current.kind, run.strategy) {
            (RunKind::Script, _) => Availability::Unavailable("scripts never continue sessions"),
            (RunKind::DelegatedChild { .. }, _) => {
                Availability::Unavailable("a delegated child run reports to its parent instead of continuing")
            }
            (RunKind::TypedChild { .. }, _) => {
                Availability::Unavailable("a typed child run must end with return_result instead of continuing")
            }
            (RunKind::Interactive, ContextStrategy::Compact) => {
                Availability::Unavailable("this session uses the compact strategy, not continuation")
            }
            (RunKind::Interactive, ContextStrategy::Continue) => Availability::Available,
        }
    }

    /// Whether the run may continue: what decides if a request carries
    /// `<context_usage>`, whose guidance names this tool.
    pub fn is_available_to(run: &RunContext) -> bool {
        Self::rule(run) == Availability::Available
    }
}

#[async_trait]
impl Tool for ContinueSession {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        verbs::CONTINUE_SESSION
    }

    fn input_schema(&self) -> Value {
        schema::input_schema()
    }

    fn availability(&self, run: &RunContext) -> Availability {
        Self::rule(run)
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        if let Some(run) = ctx.run.run
            && run.parked_children > 0
        {
            return Err(Refusal::ChildrenParked { count: run.parked_children }.into());
        }
        let input = parse_continue_session_input(input)?;
        let current = threads::own(ctx.access, &ctx.run.agent_id, ctx.run.session_id)
            .await?
            .ok_or_else(|| InputError::new("", "this session cannot be found"))?;
        let initiating = ctx.access.newest_user_message(current.id).await?.ok_or(Refusal::NoUserMessage)?;
        if initiating.body.as_message().is_some_and(|m| m.meta().continued_from.is_some()) {
            return Err(Refusal::JustContinued.into());
        }
        let sources = sources::resolve_sources(ctx, &current, &input.sources).await?;
        let (plan_transfer, carried_plan) = resolve_plan(input.transfer.plan, current.plan.as_ref())?;
        // A dry run's result is the run loop's estimate; this text stands in
        // only until it replaces it.
        let text = if input.dry_run {
            "Estimating what a continuation would carry.".to_owned()
        } else {
            format!(
                "Continuing in a new session titled {}. The successor answers the person's latest message; end your turn now.",
                serde_json::Value::from(input.title.as_str())
            )
        };
        let request = ContinuationRequest {
            reason: input.reason,
            title: input.title,
            description: input.description,
            handoff: input.handoff,
            sources,
            plan_transfer,
            carried_plan,
            initiating_event_id: initiating.id,
            initiating_seq: initiating.seq,
            dry_run: input.dry_run,
        };
        Ok(ToolOutcome::with_action(text, ToolAction::Continue(Box::new(request))))
    }
}

/// `transfer.plan` against the session's plan. `carry` when there is no
/// plan is refused: the model believes in a plan that does not exist and
/// would hand the successor nothing. `omit` and `close` with no plan ask for
/// what already holds (no plan goes on), so they are accepted rather than
/// forcing a retry.
fn resolve_plan(asked: Option<PlanTransfer>, plan: Option<&Plan>) -> Result<(PlanTransfer, Option<Plan>), InputError> {
    let plan = plan.filter(|p| !p.steps.is_empty());
    let carried = |p: &Plan| Plan { steps: p.steps.clone(), owner_run_id: None };
    match (asked, plan) {
        (None, Some(p)) if p.has_unfinished_steps() => Ok((PlanTransfer::Carry, Some(carried(p)))),
        (None, _) => Ok((PlanTransfer::Omit, None)),
        (Some(PlanTransfer::Carry), Some(p)) => Ok((PlanTransfer::Carry, Some(carried(p)))),
        (Some(transfer @ (PlanTransfer::Close | PlanTransfer::Omit)), Some(_)) => Ok((transfer, None)),
        (Some(PlanTransfer::Close | PlanTransfer::Omit), None) => Ok((PlanTransfer::Omit, None)),
        (Some(transfer @ PlanTransfer::Carry), None) => Err(InputError::new(
            "transfer.plan",
            format!("`{}`, but this session has no plan; leave transfer.plan out", plan_transfer_name(transfer)),
        )),
    }
}

const fn plan_transfer_name(transfer: PlanTransfer) -> &'static str {
    match transfer {
        PlanTransfer::Carry => "carry",
        PlanTransfer::Close => "close",
        PlanTransfer::Omit => "omit",
    }
}
