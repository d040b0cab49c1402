//! The per-turn blocks together, in the order they close every request.

use std::fmt;

use crate::context_usage::ContextUsage;
use crate::plan_state::PlanState;
use crate::session_status::SessionStatus;

/// The blocks rendered after the conversation on every request, never
/// stored: `<session_status>`, `<plan_state>`, and `<context_usage>` where
/// continuing is possible.
///
/// They go last so that everything before them (system prompt, tools, the
/// transcript) is the previous request's prefix and stays in the provider's
/// cache; see `PROMPT_MAP.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnBlocks<'a> {
    /// What the session is about.
    pub session_status: SessionStatus<'a>,
    /// The checklist.
    pub plan_state: PlanState<'a>,
    /// How full the context is; `None` where the run cannot continue (the
    /// guidance would point at a tool it does not have).
    pub context_usage: Option<ContextUsage>,
}

impl fmt::Display for TurnBlocks<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{}", self.session_status, self.plan_state)?;
        if let Some(usage) = &self.context_usage {
            write!(f, "\n{usage}")?;
        }
        Ok(())
    }
}
