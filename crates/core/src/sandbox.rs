//! A session's sandbox choice: how much the commands its tools run may
//! touch ([`SandboxMode`]) and whether they reach the network, as the
//! person chose them (`/sandbox` in the REPL, `PUT …/sandbox` in the API).
//! The choice is an event ([`SandboxChanged`], `sandbox_changed`), so it is
//! seen in the transcript, survives a restart and reaches every process on
//! the database; [`crate::SessionInfo`] folds it (`sandboxMode`,
//! `sandboxNetwork`). What the modes mean on a machine, and how they are
//! enforced, is `seri-tools`' sandbox.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much a command may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read everything but the hidden places; write nothing.
    ReadOnly,
    /// Also write inside the workspace, the temporary folder and the
    /// configured writable paths.
    #[default]
    WorkspaceWrite,
    /// No sandbox: everything the user can do.
    FullAccess,
}

impl SandboxMode {
    /// Every mode, in order of what it allows.
    pub const ALL: [SandboxMode; 3] = [SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite, SandboxMode::FullAccess];

    /// The name as configured: `read-only`, `workspace-write`, `full-access`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::FullAccess => "full-access",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Longest part of an unknown name quoted back, in characters.
const QUOTED_CHARS: usize = 80;

/// A name that is none of the modes, with the names that are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not one of: read-only, workspace-write, full-access")]
pub struct UnknownSandboxMode {
    /// What was given (cut after 80 characters).
    pub given: String,
}

impl FromStr for SandboxMode {
    type Err = UnknownSandboxMode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        SandboxMode::ALL.into_iter().find(|m| m.as_str() == name).ok_or_else(|| {
            let mut given: String = name.chars().take(QUOTED_CHARS).collect();
            if name.chars().count() > QUOTED_CHARS {
                given.push('…');
            }
            UnknownSandboxMode { given }
        })
    }
}

/// The person changed the session's sandbox from here on: what is set is
/// chosen now, what is left out stays as chosen before (or the runtime's,
/// when never chosen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxChanged {
    /// The mode chosen now, if the change set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<SandboxMode>,
    /// The network chosen now (on or off), if the change set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_an_unknown_one_is_quoted_cut() {
        for mode in SandboxMode::ALL {
            assert_eq!(mode.as_str().parse::<SandboxMode>(), Ok(mode));
            assert_eq!(serde_json::to_value(mode).unwrap(), serde_json::json!(mode.as_str()));
        }
        let error = "read-write".parse::<SandboxMode>().unwrap_err();
        assert_eq!(error.to_string(), "`read-write` is not one of: read-only, workspace-write, full-access");
        let long = "x".repeat(200).parse::<SandboxMode>().unwrap_err();
        assert_eq!(long.given.chars().count(), QUOTED_CHARS + 1);
    }

    #[test]
    fn a_change_stores_only_what_it_sets() {
        let network = SandboxChanged { mode: None, network: Some(false) };
        assert_eq!(serde_json::to_value(network).unwrap(), serde_json::json!({"network": false}));
        let both = SandboxChanged { mode: Some(SandboxMode::ReadOnly), network: Some(true) };
        let payload = serde_json::json!({"mode": "read-only", "network": true});
        assert_eq!(serde_json::to_value(both).unwrap(), payload);
        assert_eq!(serde_json::from_value::<SandboxChanged>(payload).unwrap(), both);
    }
}
