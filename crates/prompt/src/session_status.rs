//! `<session_status title="…">description</session_status>`: what the
//! session is about and where it stands, shown every turn so that a `status`
//! call is a deliberate change and never a restatement.

use std::fmt;

use seri_core::SessionInfo;

use crate::escape::{escape_attr, escape_text};

/// The `<session_status>` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionStatus<'a> {
    /// What the whole session is about; empty while it has no title.
    pub title: &'a str,
    /// The live status; empty while it has none.
    pub description: &'a str,
}

impl<'a> SessionStatus<'a> {
    /// The block for a session as it is now.
    pub fn of(info: &'a SessionInfo) -> Self {
        Self { title: &info.title, description: &info.description }
    }
}

impl fmt::Display for SessionStatus<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<session_status title=\"{}\">{}</session_status>",
            escape_attr(self.title),
            escape_text(self.description)
        )
    }
}
