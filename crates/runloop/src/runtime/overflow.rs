//! When a request outgrows the model's window and nothing else can save
//! the turn, the conversation continues into a successor instead of the
//! turn failing: on the continue strategy at once (the agent did not
//! continue in time), on the compact strategy once the overflow retry's
//! compaction failed or its retry overflowed too.
//!
//! The agent cannot write the handoff (its request no longer fits), so seri
//! writes one in its place (`seri_prompt::text::overflow`): the purpose,
//! the person's message as the current request, and a caution that nothing
//! was summarised. The projection carries the predecessor's recent
//! exchanges as on any continuation. The predecessor keeps a system note
//! saying which path was taken; the edge's call id (`seri-overflow-…`,
//! from the message answered) makes a replay find the same successor.

use seri_core::{Actor, ContinueReason, Handoff, Message, PlanTransfer, ToolCall, ToolCallId};
use seri_prompt::text::overflow;
use seri_tools::{ContinuationRequest, RunContext, Tool as _};

use super::Runtime;
use crate::error::RunError;
use crate::protocol::ContinuedTo;

/// The prefix of the call id of a continuation seri made on its own.
const OVERFLOW_CALL_PREFIX: &str = "seri-overflow-";

/// The longest current request the handoff quotes; the message itself is
/// copied whole into the successor.
const CURRENT_REQUEST_CHARS: usize = 2_000;

impl Runtime {
    /// Continues the run's session into a successor with a handoff seri
    /// writes, after `overflow` (the provider's refusal) left nothing else.
    pub(super) fn continue_after_overflow(
        &self,
        run_ctx: &RunContext,
        overflow_error: seri_providers::ProviderError,
    ) -> Result<ContinuedTo, RunError> {
        let failed = |why: String| RunError::OverflowUncontinued(Box::new((overflow_error.clone(), why)));
        let store = self.agent_store();
        let session = run_ctx.session_id;
        let info = store.info(session)?;
        let Some(initiating) = store.newest_user_message(session)? else {
            return Err(failed("the session holds no message to answer".to_owned()));
        };
        // Nothing older to leave behind: a successor would send the same
        // request again. And a message copied into this session by a
        // continuation already had the older history left behind.
        if initiating.seq.get() <= 1 {
            return Err(failed(overflow::ALONE.to_owned()));
        }
        if initiating.body.as_message().is_some_and(|m| m.meta().continued_from.is_some()) {
            return Err(failed(overflow::ALONE.to_owned()));
        }
        let text = initiating.body.as_message().map(|m| m.content.clone()).unwrap_or_default();
        let current: String = text.chars().take(CURRENT_REQUEST_CHARS).collect();
        let title = if info.title.trim().is_empty() { "Continued session".to_owned() } else { info.title.clone() };
        let plan = info.plan.as_ref().filter(|p| p.has_unfinished_steps());
        let request = ContinuationRequest {
            reason: ContinueReason::ContextPressure,
            title: title.clone(),
            description: if info.description.trim().is_empty() { title.clone() } else { info.description.clone() },
            handoff: Handoff {
                purpose: Some(overflow::PURPOSE.replace("{title}", &title)),
                current_request: (!current.trim().is_empty()).then_some(current),
                cautions: vec![overflow::CAUTION.to_owned()],
                ..Handoff::default()
            },
            sources: Vec::new(),
            plan_transfer: if plan.is_some() { PlanTransfer::Carry } else { PlanTransfer::Omit },
            carried_plan: plan.map(|p| seri_core::Plan { steps: p.steps.clone(), owner_run_id: None }),
            initiating_event_id: initiating.id,
            initiating_seq: initiating.seq,
            dry_run: false,
        };
        let call = ToolCall {
            id: ToolCallId(format!("{OVERFLOW_CALL_PREFIX}{}", initiating.id)),
            name: seri_tools::ContinueSession.name().to_owned(),
            arguments: serde_json::Value::Null,
        };
        let continued = self.continue_session(run_ctx, &call, &request).map_err(|e| failed(e.to_string()))?;
        // Which path was taken, in the predecessor's own events.
        let note = Message { actor: Actor::System, ..Message::user(overflow::NOTE) };
        if let Err(error) = store.append(session, [seri_core::EventBody::Message(note)]) {
            tracing::warn!(%session, %error, "the overflow note was not recorded");
        }
        Ok(continued)
    }
}
