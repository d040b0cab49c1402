//! When a request outgrows the model's window and nothing else can save
//! the turn, the conversation continues into a successor instead of the
//! turn failing: on the continue strategy at once (the agent did not
//! continue in time), on the compact strategy once the overflow retry's
//! compaction failed or its retry overflowed too.
//!
//! On the continue strategy the agent is first offered one turn in which
//! `continue_session` is the only tool ([`Runtime::offer_only_continue`]):
//! without the other tools' definitions the request may fit, and the agent
//! writes its own handoff. When that overflows too, or the agent does
//! something else, or on the compact strategy, the agent cannot write the
//! handoff (its request no longer fits). When the working context has a
//! recap, the summarizer's four fields become the handoff
//! ([`handoff_from_recap`]); otherwise seri writes one in its place (`seri_prompt::text::overflow`): the purpose,
//! the person's message as the current request, and a caution that nothing
//! was summarised. The projection carries the predecessor's recent
//! exchanges as on any continuation. The predecessor keeps a system note
//! saying which path was taken; the edge's call id (`seri-overflow-…`,
//! from the message answered) makes a replay find the same successor.

use seri_core::{Actor, ContextCompacted, ContinueReason, Handoff, Message, PlanTransfer, ToolCall, ToolCallId};
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
    /// On the continue strategy, after the provider refused a request as
    /// too long: one more request, the same working context with only
    /// `continue_session` offered and an instruction to call it now (a
    /// request without the other tools' definitions may fit where the full
    /// one did not). The answer when it calls `continue_session` (only that
    /// call is kept), with a note in the session saying which path was
    /// taken; `None` when this request overflowed too, or the model did
    /// something else: then seri writes the handoff itself
    /// ([`Runtime::continue_after_overflow`]). Offered once per run.
    pub(super) async fn offer_only_continue(
        &self,
        run_ctx: &RunContext,
        offered: &mut bool,
        observer: &dyn crate::protocol::RunObserver,
        cancel: &tokio::sync::watch::Receiver<bool>,
    ) -> Result<Option<seri_providers::ModelResponse>, RunError> {
        let session = run_ctx.session_id;
        if std::mem::replace(offered, true) || self.overflows_alone(session)? {
            return Ok(None);
        }
        let info = self.agent_store().info(session)?;
        let context = self.working_context(session)?;
        let mut request = self.build_request(run_ctx, &info, context)?;
        let continue_session = seri_tools::ContinueSession.name();
        request.tools = request.tools.iter().filter(|tool| tool.name == continue_session).cloned().collect();
        match request.messages.last_mut() {
            Some(seri_providers::RequestMessage::User { text, .. }) => {
                text.push_str("\n\n");
                text.push_str(overflow::CONTINUE_NOW);
            }
            _ => request.messages.push(seri_providers::RequestMessage::user(overflow::CONTINUE_NOW)),
        }
        let mut response = match self.call_model(&request, observer, cancel).await {
            Ok(response) => response,
            Err(RunError::Provider(e)) if e.kind == seri_providers::ErrorKind::ContextOverflow => {
                tracing::info!(%session, "the turn offering only continue_session overflowed too");
                return Ok(None);
            }
            Err(other) => return Err(other),
        };
        response.tool_calls.retain(|call| call.name == continue_session);
        response.tool_calls.truncate(1);
        if response.tool_calls.is_empty() {
            tracing::info!(%session, "offered only continue_session, the model did not call it");
            return Ok(None);
        }
        let note = Message { actor: Actor::System, ..Message::user(overflow::OFFERED) };
        self.agent_store().append(session, [seri_core::EventBody::Message(note)])?;
        Ok(Some(response))
    }

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
        if is_alone(&initiating) {
            return Err(failed(overflow::ALONE.to_owned()));
        }
        let text = initiating.body.as_message().map(|m| m.content.clone()).unwrap_or_default();
        let current: String = text.chars().take(CURRENT_REQUEST_CHARS).collect();
        let title = if info.title.trim().is_empty() { "Continued session".to_owned() } else { info.title.clone() };
        let plan = info.plan.as_ref().filter(|p| p.has_unfinished_steps());
        let current = (!current.trim().is_empty()).then_some(current);
        // The summarizer's latest recap, when the context has one (the
        // overflow retry's own compaction, an earlier one, an imported
        // peer's), is the handoff's substance; else seri writes it.
        let recap = self.working_context(session)?.recap().map(|r| r.compacted.clone());
        let (handoff, note) = match recap {
            Some(recap) => (handoff_from_recap(&recap, &title, current), overflow::NOTE_RECAP),
            None => (
                Handoff {
                    purpose: Some(overflow::PURPOSE.replace("{title}", &title)),
                    current_request: current,
                    cautions: vec![overflow::CAUTION.to_owned()],
                    ..Handoff::default()
                },
                overflow::NOTE,
            ),
        };
        let request = ContinuationRequest {
            reason: ContinueReason::ContextPressure,
            title: title.clone(),
            description: if info.description.trim().is_empty() { title.clone() } else { info.description.clone() },
            handoff,
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
        let note = Message { actor: Actor::System, ..Message::user(note) };
        if let Err(error) = store.append(session, [seri_core::EventBody::Message(note)]) {
            tracing::warn!(%session, %error, "the overflow note was not recorded");
        }
        Ok(continued)
    }
}

impl Runtime {
    /// Whether the session's newest message has nothing older to leave
    /// behind (see [`is_alone`]); false when it holds no message.
    fn overflows_alone(&self, session: seri_core::SessionId) -> Result<bool, RunError> {
        Ok(self.agent_store().newest_user_message(session)?.is_some_and(|message| is_alone(&message)))
    }
}

/// Whether `initiating` has nothing older to leave behind, so a successor
/// would send the same request again: it is the session's first event, or
/// a message a continuation copied into this session (the older history
/// was already left behind).
fn is_alone(initiating: &seri_core::Event) -> bool {
    initiating.seq.get() <= 1 || initiating.body.as_message().is_some_and(|m| m.meta().continued_from.is_some())
}

/// A handoff from the summarizer's recap: its goal is the purpose, its
/// progress what is established, its blockers the open questions, its next
/// steps the next actions (each field that says something), and a caution
/// naming the range it summarised; the person's message is the current
/// request.
fn handoff_from_recap(compacted: &ContextCompacted, title: &str, current_request: Option<String>) -> Handoff {
    let field = |text: &str| {
        let text = text.trim();
        (!text.is_empty() && text != seri_core::compaction::EMPTY_RECAP_FIELD).then(|| text.to_owned())
    };
    let recap = &compacted.recap;
    let caution = overflow::FROM_RECAP
        .replace("{from}", &compacted.evicted_from_seq.get().to_string())
        .replace("{to}", &compacted.evicted_to_seq.get().to_string());
    Handoff {
        purpose: Some(field(&recap.goal).unwrap_or_else(|| overflow::PURPOSE.replace("{title}", title))),
        current_request,
        established_facts: field(&recap.progress).map(|t| list_items(&t)).unwrap_or_default(),
        open_questions: field(&recap.blockers).map(|t| list_items(&t)).unwrap_or_default(),
        next_actions: field(&recap.next_steps).map(|t| list_items(&t)).unwrap_or_default(),
        cautions: vec![caution],
        ..Handoff::default()
    }
}

/// A recap field as the items of a handoff's list: a markdown list (`- `,
/// `* `, `1. `) is its items, each without its marker (the handoff draws
/// its own, so a recap's bullets are not doubled); other text is one item.
/// A line that does not start an item continues the one before it.
fn list_items(text: &str) -> Vec<String> {
    fn marker_end(line: &str) -> Option<usize> {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(rest) = trimmed.strip_prefix("- ").or_else(|| trimmed.strip_prefix("* ")) {
            return Some(line.len() - rest.len());
        }
        let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
        (digits > 0 && trimmed[digits..].starts_with(". ")).then_some(indent + digits + 2)
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.first().is_none_or(|l| marker_end(l).is_none()) {
        return vec![text.trim().to_owned()];
    }
    let mut items: Vec<String> = Vec::new();
    for line in lines {
        match (marker_end(line), items.last_mut()) {
            (Some(end), _) => items.push(line[end..].trim().to_owned()),
            (None, Some(item)) => {
                item.push(' ');
                item.push_str(line.trim());
            }
            (None, None) => items.push(line.trim().to_owned()),
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::list_items;

    #[test]
    fn a_recaps_list_becomes_the_handoffs_items_without_doubled_bullets() {
        assert_eq!(
            list_items("- Answered q1 to q4.\n- Wrote the parser."),
            ["Answered q1 to q4.", "Wrote the parser."]
        );
        assert_eq!(list_items("* one\n  and more of it\n* two"), ["one and more of it", "two"]);
        assert_eq!(list_items("1. first\n2. second"), ["first", "second"]);
        assert_eq!(list_items("The parser reads the whole input."), ["The parser reads the whole input."]);
        assert_eq!(list_items("A line - with a dash."), ["A line - with a dash."]);
    }
}
