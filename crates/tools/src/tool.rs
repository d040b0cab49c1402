//! The `Tool` trait: one tool's name, contract, schema, availability rule and call.

use async_trait::async_trait;
use serde_json::Value;

use crate::access::SessionAccess;
use crate::error::ToolError;
use crate::outcome::ToolOutcome;
use crate::permissions::{Permissions, Workspace};
use crate::run::RunContext;

/// Whether a run may see and call a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Availability {
    /// Listed in the run's request and callable.
    Available,
    /// Not listed; a call anyway is refused with this reason.
    Unavailable(&'static str),
}

/// What a call can reach: the caller, the store's reads, and for the coding
/// tools the working tree and the permission layer in front of it.
#[derive(Clone, Copy)]
pub struct ToolContext<'a> {
    /// Who is calling.
    pub run: &'a RunContext,
    /// The reads the run loop provides.
    pub access: &'a dyn SessionAccess,
    /// The working directory (the session's `cwd`) and its allowed roots.
    pub workspace: &'a Workspace,
    /// The run's permission policy and who answers its questions.
    pub permissions: &'a Permissions,
    /// The call being run, when the run loop runs it: a question about it
    /// names it and carries its arguments, so a client can show and answer
    /// that very call.
    pub call: Option<&'a seri_core::ToolCall>,
}

impl std::fmt::Debug for ToolContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("run", self.run)
            .field("workspace", self.workspace)
            .field("permissions", self.permissions)
            .finish_non_exhaustive()
    }
}

/// One tool.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;

    /// Its contract, as the model reads it.
    fn description(&self) -> &str;

    /// The JSON schema of its input.
    fn input_schema(&self) -> Value;

    /// Whether the run may see and call it.
    fn availability(&self, run: &RunContext) -> Availability;

    /// Runs the call. Decides only: events it wants written come back in the
    /// outcome for the run loop to append.
    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError>;

    /// What a request lists for this tool.
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            input_schema: self.input_schema(),
        }
    }
}

/// A tool as a request lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name.
    pub name: String,
    /// The contract.
    pub description: String,
    /// The input's JSON schema.
    pub input_schema: Value,
}
