//! `<permission_mode>`: the per-turn block that tells the model the session
//! is in plan mode (only reading tools run), so it proposes a plan instead
//! of calling tools that would be refused. Other modes need no words: a
//! refusal says what happened.

use std::fmt;

use seri_core::PermissionMode;

use crate::text::permission::PLAN_MODE;

/// The `<permission_mode>` block for a session in `mode`; it renders only
/// in plan mode (see [`PermissionModeBlock::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermissionModeBlock {
    mode: PermissionMode,
}

impl PermissionModeBlock {
    /// The block for a session in `mode`, or `None` where there is nothing
    /// to say (every mode but plan).
    pub fn of(mode: PermissionMode) -> Option<Self> {
        (mode == PermissionMode::Plan).then_some(Self { mode })
    }
}

impl fmt::Display for PermissionModeBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<permission_mode mode=\"{}\">\n{PLAN_MODE}\n</permission_mode>", self.mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plan_mode_has_a_block() {
        assert_eq!(PermissionModeBlock::of(PermissionMode::Default), None);
        assert_eq!(PermissionModeBlock::of(PermissionMode::AcceptEdits), None);
        assert_eq!(PermissionModeBlock::of(PermissionMode::Bypass), None);
        let block = PermissionModeBlock::of(PermissionMode::Plan).map(|b| b.to_string()).unwrap_or_default();
        insta::assert_snapshot!(block);
    }
}
