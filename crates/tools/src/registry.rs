//! The registry: which tools exist, which a run may see, and dispatch.

use std::sync::Arc;

use serde_json::Value;

use crate::coding::coding_tools;
use crate::error::ToolError;
use crate::outcome::ToolOutcome;
use crate::run::RunContext;
use crate::tool::{Availability, Tool, ToolContext, ToolSpec};
use crate::verbs::{continue_session::ContinueSession, plan::PlanTool, read::Read, status::Status};

/// Two tools with one name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a tool named `{name}` is already registered")]
pub struct DuplicateToolError {
    /// The name.
    pub name: String,
}

/// The tools of a runtime, in registration order.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.iter().map(|t| t.name())).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The session verbs: `continue_session`, `status`, `read`, `plan`.
    pub fn with_session_verbs() -> Self {
        let tools: Vec<Arc<dyn Tool>> =
            vec![Arc::new(ContinueSession), Arc::new(Status), Arc::new(Read), Arc::new(PlanTool)];
        Self { tools }
    }

    /// The session verbs followed by the coding tools (`read_file`,
    /// `write_file`, `edit`, `list`, `grep`, `bash`): what a seri agent
    /// working on a tree is given. Each tool's rule still decides which runs
    /// see it.
    pub fn with_coding_tools() -> Self {
        let mut registry = Self::with_session_verbs();
        registry.tools.extend(coding_tools());
        registry
    }

    /// Adds a tool; names are unique.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), DuplicateToolError> {
        if self.get(tool.name()).is_some() {
            return Err(DuplicateToolError { name: tool.name().to_owned() });
        }
        self.tools.push(tool);
        Ok(())
    }

    /// A tool by name, whoever may call it.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// Every registered tool, in registration order.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    /// What a request for this run lists: only the tools available to it,
    /// in registration order.
    pub fn available(&self, run: &RunContext) -> Vec<ToolSpec> {
        self.tools.iter().filter(|t| t.availability(run) == Availability::Available).map(|t| t.spec()).collect()
    }

    /// Runs a call. A tool the run may not use is refused with the rule's
    /// reason, so a model that names one anyway learns why.
    pub async fn call(&self, ctx: ToolContext<'_>, name: &str, input: Value) -> Result<ToolOutcome, ToolError> {
        let tool = self.get(name).ok_or_else(|| ToolError::UnknownTool { name: name.to_owned() })?;
        match tool.availability(ctx.run) {
            Availability::Available => tool.call(ctx, input).await,
            Availability::Unavailable(reason) => Err(ToolError::Unavailable { name: name.to_owned(), reason }),
        }
    }
}
