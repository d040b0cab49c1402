//! Permission modes: how much a session's tools may do without asking, as
//! the person chose it (`--permission-mode`, Shift+Tab in the REPL, the
//! API). The choice is an event (`permission_mode_changed`), so it is seen
//! in the transcript and survives a restart; [`crate::SessionInfo`] folds it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much a session's tools may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// The permission policy as configured: reading runs, the rest asks.
    #[default]
    Default,
    /// File edits and writes inside the working directory run without
    /// asking; commands ask as configured.
    AcceptEdits,
    /// Only reading tools run: the agent looks around and proposes a plan;
    /// the person decides when to leave the mode.
    Plan,
    /// Nothing asks: every question is answered yes. `deny` still refuses.
    Bypass,
}

impl PermissionMode {
    /// Every mode, in the order Shift+Tab cycles them.
    pub const ALL: [PermissionMode; 4] =
        [PermissionMode::Default, PermissionMode::AcceptEdits, PermissionMode::Plan, PermissionMode::Bypass];

    /// Every name, in [`PermissionMode::ALL`]'s order.
    pub const NAMES: &'static [&'static str] = &["default", "accept-edits", "plan", "bypass"];

    /// `default`, `accept-edits`, `plan` or `bypass`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Plan => "plan",
            PermissionMode::Bypass => "bypass",
        }
    }

    /// The mode after this one when the person cycles (Shift+Tab): default,
    /// accept-edits, plan, and bypass only when `with_bypass` (a run that
    /// started in it), then round again.
    pub const fn next(self, with_bypass: bool) -> PermissionMode {
        match self {
            PermissionMode::Default => PermissionMode::AcceptEdits,
            PermissionMode::AcceptEdits => PermissionMode::Plan,
            PermissionMode::Plan if with_bypass => PermissionMode::Bypass,
            PermissionMode::Plan | PermissionMode::Bypass => PermissionMode::Default,
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is none of [`PermissionMode::NAMES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a permission mode; expected one of: default, accept-edits, plan, bypass")]
pub struct UnknownPermissionMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownPermissionMode;

    /// Reads seri's names, and Claude Code's (`acceptEdits`,
    /// `bypassPermissions`) so its settings carry over.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "default" => PermissionMode::Default,
            "accept-edits" | "acceptEdits" => PermissionMode::AcceptEdits,
            "plan" => PermissionMode::Plan,
            "bypass" | "bypassPermissions" => PermissionMode::Bypass,
            other => return Err(UnknownPermissionMode(other.to_owned())),
        })
    }
}

/// The person chose the session's permission mode from here on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionModeChanged {
    /// The mode.
    pub mode: PermissionMode,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_claude_codes_spellings_are_taken() {
        for mode in PermissionMode::ALL {
            assert_eq!(mode.as_str().parse::<PermissionMode>(), Ok(mode));
            assert_eq!(serde_json::to_value(mode).unwrap(), serde_json::json!(mode.as_str()));
        }
        assert_eq!("acceptEdits".parse(), Ok(PermissionMode::AcceptEdits));
        assert_eq!("bypassPermissions".parse(), Ok(PermissionMode::Bypass));
        let error = "yolo".parse::<PermissionMode>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "`yolo` is not a permission mode; expected one of: default, accept-edits, plan, bypass"
        );
    }

    #[test]
    fn cycling_skips_bypass_unless_the_run_started_in_it() {
        let cycle = |with_bypass| {
            let mut mode = PermissionMode::Default;
            let mut seen = vec![mode];
            for _ in 0..4 {
                mode = mode.next(with_bypass);
                seen.push(mode);
            }
            seen.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(" ")
        };
        assert_eq!(cycle(false), "default accept-edits plan default accept-edits");
        assert_eq!(cycle(true), "default accept-edits plan bypass default");
    }
}
