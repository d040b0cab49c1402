//! The permission layer in front of the coding tools.
//!
//! - [`Workspace`]: the working directory and its allowed roots, and path
//!   resolution that follows symlinks before checking, so no spelling of a
//!   path leaves them unnoticed.
//! - [`PermissionPolicy`]: `allow`, `ask` or `deny` per tool, from defaults,
//!   `config.json` and the `--allow`/`--deny`/`--yes` flags (the module doc
//!   of [`policy`] gives the precedence).
//! - [`Permissions`]: the policy plus, in the REPL, an [`Approver`] that
//!   asks the person; [`Permissions::check`] is the only place an action is
//!   let through or refused.
//! - [`PathRules`]: Claude Code's `Read(…)`/`Edit(…)` rules, by glob.
//! - [`Denial`]: a refusal, which the model reads as the call's error and
//!   the run loop records as a `permission_denied` event with its reason.
//!
//! Tools build an [`ApprovalRequest`] once their input is validated (so the
//! person is never asked about a call that would fail anyway), call
//! `check`, and act only on `Ok`. `bash` runs in the working directory but
//! its command can reach anything: its policy is its only gate.

pub mod approval;
pub mod command;
pub mod denial;
pub mod gate;
pub mod paths;
pub mod policy;
pub mod workspace;

pub use approval::{ApprovalRequest, Approver, AskHook, CallRef, Decision, HookAnswer};
pub use command::{CommandDecision, CommandPattern, CommandRules, SeenPart, Sight, Unseen, UnseenKind, see};
pub use denial::Denial;
pub use gate::{EDIT_TOOLS, Permissions, READ_ONLY_TOOLS};
pub use paths::{PathAccess, PathDecision, PathRules};
pub use policy::{GATED_TOOLS, MCP_TOOL_PREFIX, Permission, PermissionFlags, PermissionPolicy, PolicyError};
pub use workspace::{ResolvedPath, Workspace, WorkspaceError};
