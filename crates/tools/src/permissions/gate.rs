//! [`Permissions`]: the policy and, in the REPL, the person to ask; the one
//! place that decides whether a coding tool's action goes ahead.

use std::sync::Arc;

use seri_core::DenialReason;

use super::approval::{ApprovalRequest, Approver, Decision};
use super::denial::Denial;
use super::policy::{Permission, PermissionPolicy};

/// The permission policy of a run and who answers its questions.
#[derive(Clone)]
pub struct Permissions {
    policy: PermissionPolicy,
    approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for Permissions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permissions").field("policy", &self.policy).field("headless", &self.approver.is_none()).finish()
    }
}

impl Permissions {
    /// A run with nobody to ask (`seri -p`): what would be asked is refused.
    pub fn headless(policy: PermissionPolicy) -> Self {
        Self { policy, approver: None }
    }

    /// A run whose questions `approver` answers (the REPL).
    pub fn interactive(policy: PermissionPolicy, approver: Arc<dyn Approver>) -> Self {
        Self { policy, approver: Some(approver) }
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
    /// - the tool is `deny`: refused (`policy`), whatever else holds;
    /// - it is `allow` and the path is inside the workspace: goes ahead;
    /// - otherwise (`ask`, or a path outside): a trusted run (`--yes`) goes
    ///   ahead; a headless run is refused (`outside_workspace` for a path
    ///   outside, else `policy`); the REPL asks the person, and a no is
    ///   refused (`user`).
    pub async fn check(&self, request: &ApprovalRequest) -> Result<(), Denial> {
        let permission = self.policy.permission(&request.tool);
        let denial = |reason, detail: String| Denial { tool: request.tool.clone(), reason, detail, instead: None };
        if permission == Permission::Deny {
            return Err(denial(
                DenialReason::Policy,
                format!("{} is set to deny in this run's permissions ({})", request.tool, request.summary()),
            ));
        }
        if permission == Permission::Allow && !request.outside_workspace {
            return Ok(());
        }
        if self.policy.is_trusted() {
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
