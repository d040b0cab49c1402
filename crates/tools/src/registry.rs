//! The registry: which tools exist, which a run may see, and dispatch.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::coding::coding_tools;
use crate::error::{InputError, ToolError};
use crate::input::index;
use crate::outcome::ToolOutcome;
use crate::run::RunContext;
use crate::secrets::Secrets;
use crate::tool::{Availability, Tool, ToolContext, ToolSpec};
use crate::verbs::delegate::{Delegate, DelegationRequest};
use crate::verbs::return_result::{self, ReturnResult};
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
    /// Redacted from every result before it leaves [`ToolRegistry::call`].
    secrets: Secrets,
    /// Places no tool reads or writes.
    protected: Arc<Vec<PathBuf>>,
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

    /// The session verbs: `continue_session`, `status`, `read`, `plan`,
    /// `delegate` (with the default nesting limit: children do not
    /// delegate).
    pub fn with_session_verbs() -> Self {
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ContinueSession),
            Arc::new(Status),
            Arc::new(Read),
            Arc::new(PlanTool),
            Arc::new(Delegate::default()),
        ];
        Self { tools, secrets: Secrets::default(), protected: Arc::default() }
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

    /// Puts `tool` in the place of the tool of the same name, or adds it;
    /// returns the tool it replaced. For configuring a registered tool:
    /// `replace(Arc::new(Delegate::with_max_depth(2)))` lets children
    /// delegate once more.
    pub fn replace(&mut self, tool: Arc<dyn Tool>) -> Option<Arc<dyn Tool>> {
        match self.tools.iter_mut().find(|t| t.name() == tool.name()) {
            Some(slot) => Some(std::mem::replace(slot, tool)),
            None => {
                self.tools.push(tool);
                None
            }
        }
    }

    /// The registry of a child run that `request` starts: this registry's
    /// tools (all of them, or only those `request.tools` names, in the
    /// order named), plus `return_result` around the result schema for a
    /// typed child. `child` is the child as the rules will see it (its run
    /// kind; the rules do not look at its session or run id). Every name is
    /// checked here so that a mistake is the parent's error result naming
    /// the entry (`tools[1]`), not a child that silently lacks a tool: it
    /// must be a tool of this registry that a run like `child` may use.
    /// The availability rules still decide, per request, what the child is
    /// offered.
    pub fn for_child(&self, child: &RunContext, request: &DelegationRequest) -> Result<ToolRegistry, InputError> {
        let typed = request.result_schema.as_ref().map(|s| Arc::new(ReturnResult::new(s.clone())) as Arc<dyn Tool>);
        let mut tools: Vec<Arc<dyn Tool>> = match &request.tools {
            None => self.tools.clone(),
            Some(names) => {
                let mut chosen = Vec::with_capacity(names.len());
                for (n, name) in names.iter().enumerate() {
                    if name == return_result::NAME {
                        if typed.is_some() {
                            // A typed child gets it anyway; naming it is harmless.
                            continue;
                        }
                        return Err(InputError::new(
                            index("tools", n),
                            "`return_result` is for a typed child only: give `resultSchema` instead of naming it",
                        ));
                    }
                    let tool = self.get(name).ok_or_else(|| {
                        let usable: Vec<&str> = self
                            .tools
                            .iter()
                            .filter(|t| t.availability(child) == Availability::Available)
                            .map(|t| t.name())
                            .collect();
                        InputError::new(
                            index("tools", n),
                            format!("there is no tool named `{name}`; a child may use: {}", usable.join(", ")),
                        )
                    })?;
                    if let Availability::Unavailable(reason) = tool.availability(child) {
                        return Err(InputError::new(
                            index("tools", n),
                            format!("`{name}` is not available to a child run: {reason}"),
                        ));
                    }
                    chosen.push(tool.clone());
                }
                chosen
            }
        };
        tools.extend(typed);
        Ok(ToolRegistry { tools, secrets: self.secrets.clone(), protected: self.protected.clone() })
    }

    /// Redacts `secrets` from every result of this registry (and of the
    /// registries of the children it starts): see [`crate::secrets`].
    pub fn set_secrets(&mut self, secrets: Secrets) {
        self.secrets = secrets;
    }

    /// Places no tool of this registry (nor of its children's) reads or
    /// writes, whatever the workspace: seri's profile, the sandbox's
    /// `denyRead` places. See [`Workspace::with_protected`](crate::Workspace::with_protected).
    pub fn set_protected(&mut self, places: Vec<PathBuf>) {
        self.protected = Arc::new(places);
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
    /// reason, so a model that names one anyway learns why. Whatever the
    /// call returns, result or error, has the registry's secrets redacted.
    pub async fn call(&self, ctx: ToolContext<'_>, name: &str, input: Value) -> Result<ToolOutcome, ToolError> {
        let tool = self.get(name).ok_or_else(|| ToolError::unknown_tool(name))?;
        let protected;
        let ctx = if self.protected.is_empty() {
            ctx
        } else {
            protected = ctx.workspace.clone().with_protected(&self.protected);
            ToolContext { workspace: &protected, ..ctx }
        };
        let result = match tool.availability(ctx.run) {
            Availability::Available => tool.call(ctx, input).await,
            Availability::Unavailable(reason) => Err(ToolError::Unavailable { name: name.to_owned(), reason }),
        };
        if self.secrets.is_empty() {
            return result;
        }
        match result {
            Ok(mut outcome) => {
                if let Cow::Owned(text) = self.secrets.redact(&outcome.text) {
                    outcome.text = text;
                }
                if let Some(facts) = &mut outcome.facts {
                    self.secrets.redact_facts(facts);
                }
                Ok(outcome)
            }
            Err(error) => Err(error.redacted(&self.secrets)),
        }
    }
}
