//! The session verbs and the limits they share.

pub mod continue_session;
pub mod delegate;
pub mod plan;
pub mod read;
pub mod return_result;
pub mod status;

/// Longest title, in characters: a title names a subject, it does not describe it.
pub const MAX_TITLE_CHARS: usize = 120;

/// Longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2_000;
