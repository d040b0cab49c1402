//! Tools a model can call, and the rules for which runs may call them.
//!
//! - [`Tool`] is one tool: its name, its description (a verb contract from
//!   `seri-prompt`), the JSON schema of its input, its availability rule over
//!   a [`RunContext`], and the call itself.
//! - [`ToolRegistry`] lists, per run, only the tools available to it, and
//!   dispatches calls.
//! - The session verbs: [`ContinueSession`], [`Status`], [`Read`],
//!   [`PlanTool`] and [`Delegate`], and [`ReturnResult`], which only a typed
//!   child run is given. Their input handling (normalisation, validation,
//!   typed errors that name the field, result schemas) lives in [`verbs`].
//! - [`SessionAccess`] is the narrow read interface the run loop implements
//!   over the store; [`InMemorySessions`] implements it for tests.
//! - The coding tools in [`coding`]: [`ReadFile`], [`WriteFile`], [`Edit`],
//!   [`List`], [`Grep`] and [`Bash`], for interactive and child runs.
//! - The [`permissions`] layer in front of them: the [`Workspace`] they may
//!   reach, the [`PermissionPolicy`] (`allow`/`ask`/`deny` per tool, from
//!   `config.json` and flags), and [`Permissions`], which asks an
//!   [`Approver`] (the REPL's person) or refuses when nobody can be asked.
//!
//! Tools decide; they never write events. A call returns a [`ToolOutcome`]:
//! the text the model reads and a [`ToolAction`] for the run loop (events to
//! append, a validated [`ContinuationRequest`] for the continuation
//! runtime, a [`DelegationRequest`] that starts a child run, or a typed
//! child's returned value), or a [`ToolError`] the model reads and can act
//! on; a permission
//! refusal is a [`ToolError::Denied`] whose [`Denial::event`] the run loop
//! records. Only the store writes events. Reads reach only the calling
//! agent's own threads: another agent's thread is reported exactly like a
//! missing one. The coding tools touch the working tree only at paths
//! resolved through symlinks and checked against the workspace, and only
//! after the permission layer said yes.

pub mod access;
pub mod coding;
pub mod error;
pub mod in_memory;
mod input;
pub mod outcome;
pub mod pattern;
pub mod permissions;
pub mod registry;
pub mod result_schema;
pub mod run;
pub mod sandbox;
pub mod schemas;
pub mod secrets;
mod threads;
pub mod tool;
pub mod verbs;

pub use access::{AccessError, AttachmentHead, FoundEvent, SessionAccess};
pub use coding::{
    Bash, BashSettings, Edit, Grep, List, ReadFile, Remember, WriteFile, check as check_permission, coding_tools,
};
pub use error::{InputError, Refusal, ToolError};
pub use in_memory::InMemorySessions;
pub use outcome::{ToolAction, ToolImage, ToolOutcome};
pub use permissions::{
    ApprovalRequest, Approver, AskHook, CallRef, Decision, Denial, HookAnswer, MCP_TOOL_PREFIX, Permission,
    PermissionFlags, PermissionPolicy, Permissions, PolicyError, ResolvedPath, Workspace, WorkspaceError,
};
pub use registry::{DuplicateToolError, ToolRegistry};
pub use run::{RunContext, RunKind, RunRef};
pub use sandbox::{Launcher, Sandbox, SandboxMode, SandboxPolicy, SessionSandbox, WhenUnavailable};
pub use secrets::{Secret, Secrets};
pub use seri_core::{CommandExit, CommandRun, ToolFacts};
pub use tool::{Availability, Tool, ToolContext, ToolSpec};
pub use verbs::continue_session::{
    ContinuationRequest, ContinueSession, ContinueSessionInput, SourceInput, normalize_continue_session_input,
    normalize_extra_value, parse_continue_session_input,
};
pub use verbs::delegate::{
    Delegate, DelegationRequest, ResultSchema, Subagent, Violation, Violations, parse_delegate_input,
};
pub use verbs::plan::PlanTool;
pub use verbs::read::Read;
pub use verbs::return_result::ReturnResult;
pub use verbs::status::Status;
