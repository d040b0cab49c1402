//! What the model reads when a hook the person configured speaks: a tool
//! call it blocked, words after a call's result, and a turn it kept going.
//! The hook's own words are passed as they were written.

use std::fmt;

/// A tool call's error result: a `PreToolUse` hook blocked it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookBlockedCall<'a> {
    /// What the hook said (its standard error, or its JSON `reason`).
    pub reason: &'a str,
}

impl fmt::Display for HookBlockedCall<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "A PreToolUse hook the person configured blocked this call; it did not run. The hook said:\n{}",
            self.reason
        )
    }
}

/// `continue_session`'s error result: a `PreContinue` hook refused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookBlockedContinue<'a> {
    /// What the hook said.
    pub reason: &'a str,
}

impl fmt::Display for HookBlockedContinue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "A PreContinue hook the person configured refused to continue into a successor; this session goes on. The hook said:\n{}",
            self.reason
        )
    }
}

/// Words a `PostToolUse` hook gave after a call ran, appended to its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookAfterCall<'a> {
    /// What the hook said.
    pub reason: &'a str,
}

impl fmt::Display for HookAfterCall<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n\nThe call ran; then a PostToolUse hook the person configured said:\n{}", self.reason)
    }
}

/// The message that keeps a turn going: a `Stop` (or, in a child run,
/// `SubagentStop`) hook blocked its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookKeptGoing<'a> {
    /// The hook's event: `Stop` or `SubagentStop`.
    pub event: &'a str,
    /// What the hook said.
    pub reason: &'a str,
}

impl fmt::Display for HookKeptGoing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "A {} hook the person configured did not let the turn end yet. Do what it asks, then end your turn again. The hook said:\n{}",
            self.event, self.reason
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_says_which_hook_spoke_and_passes_its_words() {
        insta::assert_snapshot!(format!(
            "{}\n---\n{}\n---\n{}",
            HookBlockedCall { reason: "no rm here" },
            HookAfterCall { reason: "run cargo fmt" },
            HookKeptGoing { event: "Stop", reason: "tests are failing" }
        ));
    }
}
