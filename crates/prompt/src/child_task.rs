//! The first message of a child run: the task its parent delegated, then a
//! note saying what the child is and how its answer goes back.

use std::fmt;

use crate::text::children;

/// The task of a child started as one of the person's subagents: its
/// instructions, framed, then the parent's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubagentTask<'a> {
    /// The subagent's name.
    pub name: &'a str,
    /// Its instructions (its file's body).
    pub instructions: &'a str,
    /// What the parent asked for.
    pub task: &'a str,
}

impl fmt::Display for SubagentTask<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<subagent name=\"{}\">\n{}\n</subagent>\n\n{}",
            crate::escape::escape_attr(self.name),
            crate::escape::neutralize_frames(self.instructions.trim()),
            self.task.trim_end()
        )
    }
}

/// A child run's first message. The task is the parent agent's own words,
/// a message rather than framed material, so it is placed as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChildTask<'a> {
    /// What the parent asked for.
    pub task: &'a str,
    /// Whether the child must end with `return_result` (the parent gave a
    /// result schema).
    pub typed: bool,
}

impl fmt::Display for ChildTask<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let note = if self.typed { children::TYPED } else { children::DELEGATED };
        write!(f, "{}\n\n{note}", self.task.trim_end())
    }
}
