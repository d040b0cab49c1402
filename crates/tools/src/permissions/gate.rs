//! [`Permissions`]: the policy and, in the REPL, the person to ask; the one
//! place that decides whether a coding tool's action goes ahead.

use std::sync::Arc;

use seri_core::{DenialReason, PermissionMode};

use super::approval::{ApprovalRequest, Approver, AskHook, Decision, HookAnswer};
use super::denial::Denial;
use super::policy::{Permission, PermissionPolicy};

/// The permission policy of a run and who answers its questions.
#[derive(Clone)]
pub struct Permissions {
    policy: PermissionPolicy,
    approver: Option<Arc<dyn Approver>>,
    /// The mode of the session whose call is checked; the policy's until
    /// [`Permissions::with_mode`] says otherwise.
    mode: PermissionMode,
    /// A `PreToolUse` hook asked that the person be asked about this call
    /// ([`Permissions::asking`]).
    ask_anyway: bool,
    /// Hooks that answer before the person is asked ([`Permissions::with_ask_hook`]).
    ask_hook: Option<Arc<dyn AskHook>>,
}

/// The tools that only read: all that runs in plan mode (besides the
/// session verbs, which have no permission).
pub const READ_ONLY_TOOLS: [&str; 3] = ["read_file", "list", "grep"];

/// The tools accept-edits lets change files inside the working directory
/// without asking.
pub const EDIT_TOOLS: [&str; 2] = ["write_file", "edit"];

impl std::fmt::Debug for Permissions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permissions")
            .field("policy", &self.policy)
            .field("mode", &self.mode)
            .field("headless", &self.approver.is_none())
            .finish()
    }
}

impl Permissions {
    /// A run with nobody to ask (`seri -p`): what would be asked is refused.
    pub fn headless(policy: PermissionPolicy) -> Self {
        Self { mode: policy.mode(), policy, approver: None, ask_anyway: false, ask_hook: None }
    }

    /// A run whose questions `approver` answers (the REPL).
    pub fn interactive(policy: PermissionPolicy, approver: Arc<dyn Approver>) -> Self {
        Self { mode: policy.mode(), policy, approver: Some(approver), ask_anyway: false, ask_hook: None }
    }

    /// The same permissions for a call of a session in `mode`.
    pub fn with_mode(&self, mode: PermissionMode) -> Self {
        Self { mode, ..self.clone() }
    }

    /// The same permissions, trusted as `--yes` makes them: what would be
    /// asked is allowed; a `deny` still refuses.
    pub fn trusted(&self) -> Self {
        let mut policy = self.policy.clone();
        policy.trust();
        Self { policy, ..self.clone() }
    }

    /// The same permissions for a call a `PreToolUse` hook wants asked
    /// about (`permissionDecision: "ask"`): what would be allowed is asked,
    /// each time; a deny still refuses, and a trusted run (`--yes`) or
    /// bypass mode still answers yes.
    pub fn asking(&self) -> Self {
        Self { ask_anyway: true, ..self.clone() }
    }

    /// The same permissions, with `hook` answering each question before
    /// the person is asked (where there is a person to ask).
    pub fn with_ask_hook(&self, hook: Arc<dyn AskHook>) -> Self {
        Self { ask_hook: Some(hook), ..self.clone() }
    }

    /// The mode calls are checked under.
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// The policy.
    pub fn policy(&self) -> &PermissionPolicy {
        &self.policy
    }

    /// Whether nobody can be asked.
    pub fn is_headless(&self) -> bool {
        self.approver.is_none()
    }

    /// Answers a question about `call` that this run's approver waits on;
    /// see [`Approver::answer`].
    pub fn answer(&self, call: &super::approval::CallRef, decision: Decision) -> bool {
        self.approver.as_ref().is_some_and(|a| a.answer(call, decision))
    }

    /// Decides whether the action goes ahead:
    ///
    /// - the session is in plan mode and the tool does more than read:
    ///   refused (`plan_mode`);
    /// - the tool is `deny`, or a `bash` command matches a deny pattern (one
    ///   of its parts does), or a deny path rule names the path: refused
    ///   (`policy`), whatever else holds;
    /// - a path rule that names the path sets the permission: an ask rule
    ///   asks each time; an allow rule allows, outside the workspace too;
    /// - for `bash`, the command patterns come next: a part seri cannot see
    ///   into (a script, inline code, a program chosen at run time) asks —
    ///   and is refused (`policy`) when a bash deny rule is set and the run
    ///   answers yes (`--yes`, bypass mode); a part that matches an ask
    ///   pattern asks, every part matching an allow pattern allows; else
    ///   the tool's permission holds;
    /// - in accept-edits mode, `write_file` and `edit` inside the workspace
    ///   go ahead;
    /// - `allow` with the path inside the workspace goes ahead;
    /// - otherwise (`ask`, or a path outside): a trusted run (`--yes`) or
    ///   bypass mode goes ahead; a headless run is refused
    ///   (`outside_workspace` for a path outside, else `policy`); a
    ///   `PermissionRequest` hook ([`Permissions::with_ask_hook`]) may
    ///   answer for the person (a no is refused, `hook`); else the REPL asks
    ///   the person, and a no is refused (`user`).
    pub async fn check(&self, request: &ApprovalRequest) -> Result<(), Denial> {
        let mut permission = self.policy.permission(&request.tool);
        // Whether a remembered "allow for this session" may answer it.
        let mut each_time = request.each_time;
        let denial = |reason, detail: String| Denial { tool: request.tool.clone(), reason, detail, instead: None };
        if self.mode == PermissionMode::Plan && !READ_ONLY_TOOLS.contains(&request.tool.as_str()) {
            return Err(denial(
                DenialReason::PlanMode,
                format!(
                    "the session is in plan mode, where only reading tools run ({}); propose your plan instead and the person decides when to leave plan mode",
                    request.summary()
                ),
            ));
        }
        if permission == Permission::Deny {
            return Err(denial(
                DenialReason::Policy,
                format!("{} is set to deny in this run's permissions ({})", request.tool, request.summary()),
            ));
        }
        // A path rule (`Read(…)`, `Edit(…)`) that names the path decides
        // before the tool's own permission; one that allows answers the
        // question a path outside the workspace would ask.
        let mut outside = request.outside_workspace;
        let mut ask_anyway = self.ask_anyway;
        if let Some(path) = &request.path
            && let Some(decided) = self.policy.paths().decide(&request.tool, path)
        {
            match decided.permission {
                Permission::Deny => {
                    return Err(denial(
                        DenialReason::Policy,
                        format!(
                            "{}: the rule `{}` denies it in this run's permissions",
                            request.summary(),
                            decided.rule
                        ),
                    ));
                }
                // Asked even in accept-edits mode: the rule named this path.
                Permission::Ask => ask_anyway = true,
                Permission::Allow => {
                    permission = Permission::Allow;
                    outside = false;
                }
            }
        }
        if request.tool == "bash"
            && let Some(decided) = self.policy.commands().decide(&request.target)
        {
            if decided.permission == Permission::Deny {
                return Err(denial(
                    DenialReason::Policy,
                    format!("{}: {} in this run's permissions", request.summary(), decided.because),
                ));
            }
            // What cannot be seen into may be what a deny rule forbids: a
            // run that answers every question yes refuses it instead.
            let answers_yes = self.policy.is_trusted() || self.mode == PermissionMode::Bypass;
            if decided.unseen && answers_yes && !self.policy.commands().deny.is_empty() {
                return Err(denial(
                    DenialReason::Policy,
                    format!(
                        "{}: {}; this run answers questions yes (--yes or bypass mode) and has a bash deny rule, so what it cannot check against that rule is refused, not run",
                        request.summary(),
                        decided.because
                    ),
                ));
            }
            permission = decided.permission;
            if decided.unseen && !self.policy.commands().deny.is_empty() {
                each_time = true;
            }
        }
        if self.mode == PermissionMode::AcceptEdits && EDIT_TOOLS.contains(&request.tool.as_str()) {
            permission = Permission::Allow;
        }
        if ask_anyway {
            permission = Permission::Ask;
            each_time = true;
        }
        if permission == Permission::Allow && !outside {
            return Ok(());
        }
        if self.policy.is_trusted() || self.mode == PermissionMode::Bypass {
            return Ok(());
        }
        let Some(approver) = &self.approver else {
            return Err(if request.outside_workspace {
                denial(
                    DenialReason::OutsideWorkspace,
                    format!(
                        "this headless run has nobody to ask about a path outside the working directory and its allowed roots ({})",
                        request.summary()
                    ),
                )
            } else {
                denial(
                    DenialReason::Policy,
                    format!(
                        "{tool} needs approval and this headless run has nobody to ask ({summary}); a person can allow it with --allow {tool}, --yes, or \"permissions\" in config.json",
                        tool = request.tool,
                        summary = request.summary()
                    ),
                )
            });
        };
        if let Some(hook) = &self.ask_hook {
            match hook.before_asking(request).await {
                HookAnswer::Allow => return Ok(()),
                HookAnswer::Deny(words) => {
                    return Err(denial(
                        DenialReason::Hook,
                        format!("a PermissionRequest hook denied {}: {words}", request.summary()),
                    ));
                }
                HookAnswer::Ask => {}
            }
        }
        let marked;
        let request = if each_time && !request.each_time {
            marked = ApprovalRequest { each_time: true, ..request.clone() };
            &marked
        } else {
            request
        };
        match approver.approve(request).await {
            Decision::Allow | Decision::AllowForSession => Ok(()),
            Decision::Deny => Err(denial(DenialReason::User, format!("the person declined {}", request.summary()))),
            Decision::Instead(words) => Err(Denial {
                instead: Some(words.trim().to_owned()),
                ..denial(DenialReason::User, format!("the person declined {}", request.summary()))
            }),
        }
    }
}
