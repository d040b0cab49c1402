//! Tool results the run loop writes itself that carry values: where a
//! session continued, and how a child run ended. The fixed ones are
//! markdown files, in [`crate::text::results`].
//!
//! Each is a small typed fragment whose `Display` is exactly the text the
//! model reads as the call's result, so the run loop places values and
//! never words.

use std::fmt;

use seri_core::{ContinueReason, SessionId};

/// The result of the `continue_session` call that continued the session:
/// where it went, and that the predecessor's turn is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Continued<'a> {
    /// The successor.
    pub session_id: SessionId,
    /// Its title.
    pub title: &'a str,
    /// Why the session continued.
    pub reason: ContinueReason,
}

impl fmt::Display for Continued<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Continued in session {} \u{201c}{}\u{201d} ({}). Its run answers the person's latest message; this turn is over.",
            self.session_id,
            self.title,
            self.reason.as_str().replace('_', " ")
        )
    }
}

/// The result settling gives a `continue_session` call a stopped run left
/// unanswered after its successor was created: the call is replayed, so it
/// names the successor and nothing more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContinuedBeforeStop<'a> {
    /// The successor.
    pub session_id: SessionId,
    /// Its title.
    pub title: &'a str,
}

impl fmt::Display for ContinuedBeforeStop<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Continued in session {} \u{201c}{}\u{201d}.", self.session_id, self.title)
    }
}

/// What a parent's `delegate` call reads when its child did not hand back a
/// usable answer. Each names the child's thread, so the parent can `read`
/// what the child did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildEnded<'a> {
    /// A typed child ended its turn without calling `return_result`.
    WithoutReturnedValue {
        /// The child's session.
        session_id: SessionId,
        /// Its final message.
        final_message: &'a str,
    },
    /// A delegated child's final message was empty (an answer, not an error).
    WithEmptyMessage {
        /// The child's session.
        session_id: SessionId,
    },
    /// The child used its whole turn budget.
    OutOfTurns {
        /// The child's session.
        session_id: SessionId,
        /// How many turns it took.
        turns: u32,
    },
    /// The child's run failed.
    Failed {
        /// The child's session.
        session_id: SessionId,
        /// Why, as the run reported it; `None` when it said nothing.
        error: Option<&'a str>,
    },
}

impl fmt::Display for ChildEnded<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChildEnded::WithoutReturnedValue { session_id, final_message } => write!(
                f,
                "the typed child run ended without calling return_result, so there is no result; its final message was: {final_message}\n(Its work is in thread:{session_id}, which `read` can open.)"
            ),
            ChildEnded::WithEmptyMessage { session_id } => {
                write!(f, "(the child run ended with an empty final message; its work is in thread:{session_id})")
            }
            ChildEnded::OutOfTurns { session_id, turns } => write!(
                f,
                "the child run ran out of turns after {turns} turns without finishing; its work so far is in thread:{session_id}, which `read` can open."
            ),
            ChildEnded::Failed { session_id, error } => write!(
                f,
                "the child run failed: {}; its work so far is in thread:{session_id}, which `read` can open.",
                error.unwrap_or("unknown error")
            ),
        }
    }
}

/// The message that shows the model the pictures a call returned, right
/// after the results of its turn: tool results are text, so the pictures
/// travel as a message's attachments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolPictures<'a> {
    /// The tool that returned them.
    pub tool: &'a str,
    /// The call's id.
    pub call_id: &'a str,
}

/// What a model whose provider is sent no pictures reads in a picture's
/// place (a local server without `"images": true`).
pub struct PictureNotSent<'a> {
    /// The attachment's id.
    pub attachment_id: &'a str,
    /// Its media type (`image/png`).
    pub media_type: &'a str,
    /// The provider that is sent no pictures.
    pub provider: &'a str,
}

impl fmt::Display for PictureNotSent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[attachment:{} is a picture ({}) that you are not shown: seri sends no images to {}]",
            self.attachment_id, self.media_type, self.provider
        )
    }
}

impl fmt::Display for ToolPictures<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "The pictures the `{}` call {} returned, attached below.", self.tool, self.call_id)
    }
}
