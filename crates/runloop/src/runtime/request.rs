//! Building the request for the next model call: the frozen system
//! prompt, the working context, the tools this run may use, and the
//! per-turn blocks last, so everything before them is the previous
//! request's prefix. Every request is checked for tool-call pairing here,
//! before it can reach a provider.

use std::num::NonZeroU64;

use seri_core::SessionInfo;
use seri_core::tokens::tokens_from_chars;
use seri_projection::compaction::WorkingContext;
use seri_prompt::{ContextUsage, PermissionModeBlock, PlanState, SessionStatus, SuccessorEstimate, TurnBlocks};
use seri_providers::{ImageInput, ModelRequest, RequestMessage};
use seri_tools::{ContinueSession, RunContext};

use super::Runtime;
use crate::context::{check_pairing, request_messages};
use crate::error::RunError;

impl Runtime {
    /// The tools a run of the session `seed` began is offered, as a request
    /// sends them. MCP tools come from the session's frozen list, not from
    /// the servers running now: the prefix stays the one the session began
    /// with.
    pub(super) fn tool_specs(
        &self,
        run_ctx: &RunContext,
        seed: &seri_core::SessionSeed,
    ) -> std::sync::Arc<[seri_providers::ToolSpec]> {
        let frozen: &[seri_core::FrozenTool] = seed.system_prompt.as_ref().map_or(&[], |p| &p.tools);
        let mcp_allowed = seri_tools::coding::availability(run_ctx) == seri_tools::Availability::Available;
        let built_in = self.built_in_specs(run_ctx);
        if frozen.is_empty() || !mcp_allowed {
            return built_in;
        }
        built_in
            .iter()
            .cloned()
            .chain(frozen.iter().map(|t| seri_providers::ToolSpec {
                name: t.name.clone(),
                description: t.description.clone(),
                input_schema: t.input_schema.clone(),
            }))
            .collect()
    }

    /// The built-in tools a run may use, as requests send them: one shared
    /// list per set of tools (a tool's definition is fixed once its
    /// runtime is made), built the first time a run needs it.
    fn built_in_specs(&self, run_ctx: &RunContext) -> std::sync::Arc<[seri_providers::ToolSpec]> {
        let offered = || {
            self.inner
                .tools
                .all()
                .filter(|t| !t.name().starts_with(seri_tools::MCP_TOOL_PREFIX))
                .filter(|t| t.availability(run_ctx) == seri_tools::Availability::Available)
        };
        let names: Vec<String> = offered().map(|t| t.name().to_owned()).collect();
        let lists = || self.inner.tool_lists.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(list) = lists().get(&names) {
            return list.clone();
        }
        let list: std::sync::Arc<[seri_providers::ToolSpec]> = offered()
            .map(|t| {
                let spec = t.spec();
                seri_providers::ToolSpec {
                    name: spec.name,
                    description: spec.description,
                    input_schema: spec.input_schema,
                }
            })
            .collect();
        lists().insert(names, list.clone());
        list
    }

    /// The request for the next model call: the frozen system prompt, the
    /// working context, then the per-turn blocks last so the prefix before
    /// them is the previous request's and stays cached.
    ///
    /// `info` is the session's view (for the per-turn blocks and its
    /// model), read from its stored snapshot and the few events after it,
    /// never from the whole history.
    pub(super) fn build_request(
        &self,
        run_ctx: &RunContext,
        info: &SessionInfo,
        context: WorkingContext,
    ) -> Result<ModelRequest, RunError> {
        let session_id = run_ctx.session_id;
        let seed = self.seed(session_id)?;
        let system = seed.system_prompt.as_ref().map(|p| p.text.clone()).unwrap_or_default();
        let model = self.session_model(info);
        let ratio = context.ratio(&model);
        let mut request = ModelRequest::new(model.model, system);
        let generation = &self.inner.settings.generation;
        request.sampling = generation.sampling;
        request.max_output_tokens = generation.max_output_tokens;
        request.reasoning = generation.reasoning;
        request.context_window = Some(self.session_context_window(info));
        request.messages = request_messages(context, |attachment| self.image(session_id, attachment));
        let provider = &self.inner.provider.provider;
        if !provider.takes_images() {
            crate::context::pictures_as_notes(&mut request.messages, provider.name());
        }
        request.mark_cache_breakpoint();
        request.tools = self.tool_specs(run_ctx, &seed);
        // This request's local estimate, for the block when nothing was
        // billed, and what a successor would start with: the same system
        // prompt and tools, and as much of this history as a projection
        // carries.
        let parts = super::context_report::measure(&request, ratio);
        let estimate = parts.iter().map(|p| p.tokens).sum();
        let (fixed, history): (Vec<_>, Vec<_>) =
            parts.iter().partition(|p| p.name == "system prompt" || p.name == "tools");
        let successor = SuccessorEstimate::new(
            fixed.iter().map(|p| p.tokens).sum(),
            tokens_from_chars(seri_projection::budget_for_window(self.session_context_window(info))),
            history.iter().map(|p| p.tokens).sum(),
        );
        request.messages.push(RequestMessage::user(self.turn_blocks(info, run_ctx, estimate, successor)));
        check_pairing(&request.messages)?;
        Ok(request)
    }

    /// An image attachment of the session as the provider is sent it, or
    /// `None` (logged) when its file cannot be read: the request goes out
    /// without the picture rather than not at all.
    fn image(&self, session_id: seri_core::SessionId, attachment: &seri_core::Attachment) -> Option<ImageInput> {
        let media_type = attachment.media_type.clone()?;
        let store = self.inner.store.agent(&self.inner.agent);
        let reference = format!("{}{}", seri_store::ATTACHMENT_SCHEME, attachment.id);
        let read = store
            .resolve_attachment(session_id, &reference)
            .map_err(|e| e.to_string())
            .and_then(|path| std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display())));
        match read {
            Ok(data) if data.len() as u64 <= seri_core::MAX_IMAGE_BYTES => {
                Some(ImageInput { attachment_id: attachment.id.clone(), media_type, bytes: data.len() as u64, data })
            }
            Ok(data) => {
                tracing::warn!(attachment = %attachment.id, bytes = data.len(), "image too large to send; left out");
                None
            }
            Err(error) => {
                tracing::warn!(attachment = %attachment.id, %error, "image attachment unreadable; left out");
                None
            }
        }
    }

    fn turn_blocks(
        &self,
        info: &SessionInfo,
        run_ctx: &RunContext,
        estimate: u64,
        successor: SuccessorEstimate,
    ) -> String {
        let window = NonZeroU64::new(self.session_context_window(info)).unwrap_or(NonZeroU64::MIN);
        let can_continue = ContinueSession::is_available_to(run_ctx);
        let blocks = TurnBlocks {
            session_status: SessionStatus::of(info),
            plan_state: PlanState::new(info.plan.as_ref(), run_ctx.run_id()),
            context_usage: can_continue.then(|| {
                ContextUsage::from_usage_or_estimate(info.last_usage.as_ref(), estimate, window)
                    .with_successor(successor)
            }),
        }
        .to_string();
        // Plan mode is said last, where the model reads it right before it
        // answers; a child of a plan-mode session reads it too.
        let mode = self.call_permission_mode_from(run_ctx, info).unwrap_or_else(|_| self.session_permission_mode(info));
        match PermissionModeBlock::of(mode) {
            Some(block) => format!("{blocks}\n{block}"),
            None => blocks,
        }
    }
}
