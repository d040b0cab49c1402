//! The environment a session started in, frozen into its system prompt:
//! the working directory, the operating system, the date, and the git
//! branch and whether the tree had uncommitted changes. The caller reads
//! them once; like every frozen piece, a later change reaches the model
//! only as a message, or in the next session.

use std::fmt;

use crate::escape::escape_text;

/// What the caller read of the session's surroundings when it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// The working directory.
    pub cwd: String,
    /// The operating system (`linux`, `macos`).
    pub os: String,
    /// The date the session started, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The git branch, when the directory is in a repository on one.
    pub git_branch: Option<String>,
    /// Whether the work tree had uncommitted changes, when that could be told.
    pub git_dirty: Option<bool>,
}

impl fmt::Display for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "<environment>")?;
        writeln!(f, "Working directory: {}", escape_text(&self.cwd))?;
        writeln!(f, "Operating system: {}", escape_text(&self.os))?;
        writeln!(f, "Session started: {} (this does not change as the session goes on)", escape_text(&self.date))?;
        match (&self.git_branch, self.git_dirty) {
            (Some(branch), Some(true)) => {
                writeln!(f, "Git: on branch {}, with uncommitted changes", escape_text(branch))?
            }
            (Some(branch), Some(false)) => writeln!(f, "Git: on branch {}, clean", escape_text(branch))?,
            (Some(branch), None) => writeln!(f, "Git: on branch {}", escape_text(branch))?,
            (None, _) => {}
        }
        write!(f, "</environment>")
    }
}
