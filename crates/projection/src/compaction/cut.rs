//! The cut: one pass over the working context's messages that finds every
//! safe boundary, the size of what lies before each, and the file accesses
//! of every tool call, so that choosing the cut afterwards is a binary
//! search and the file lists a filter.
//!
//! A boundary is the position just before a message. It is safe when the
//! message is a user message or an assistant turn (never a tool result) and
//! no tool call before it is still waiting for its result. The second
//! condition is what keeps a call and its result on the same side of a cut
//! even when a turn makes several calls, and what pins the cut before a
//! call that is still unanswered at the end of the context: no boundary
//! after that call's turn is safe, so the kept part always holds the call
//! and, later, its result.

use std::collections::HashMap;

use seri_core::ToolCallId;

use super::context::{ContextBody, ContextMessage};
use super::paths::{FileAccess, file_access};

/// A safe boundary: the index of the message it precedes, and the
/// characters of the messages before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Boundary {
    pub(crate) index: usize,
    pub(crate) chars_before: u64,
}

/// A file access by a tool call, with the message that made it.
#[derive(Debug, Clone, Copy)]
struct Access<'a> {
    index: usize,
    access: FileAccess,
    path: &'a str,
    failed: bool,
}

/// What one pass over the messages found.
#[derive(Debug)]
pub(crate) struct Scan<'a> {
    /// Every safe boundary after the first message, in order.
    pub(crate) boundaries: Vec<Boundary>,
    /// Characters of all messages.
    pub(crate) chars: u64,
    /// The oldest tool call still unanswered at the end, if any.
    pub(crate) pending_call: Option<&'a ToolCallId>,
    accesses: Vec<Access<'a>>,
}

/// The single pass.
pub(crate) fn scan(messages: &[ContextMessage]) -> Scan<'_> {
    let mut boundaries = Vec::new();
    let mut accesses: Vec<Access<'_>> = Vec::new();
    // Unanswered calls by id: the message that made the call, its place
    // among that turn's calls, and its file access if it has one.
    let mut open: HashMap<&str, (usize, usize, Option<usize>)> = HashMap::new();
    let mut chars = 0u64;
    for (index, message) in messages.iter().enumerate() {
        match &message.body {
            ContextBody::User { .. } => {
                if index > 0 && open.is_empty() {
                    boundaries.push(Boundary { index, chars_before: chars });
                }
            }
            ContextBody::Assistant(turn) => {
                if index > 0 && open.is_empty() {
                    boundaries.push(Boundary { index, chars_before: chars });
                }
                for (nth, call) in turn.tool_calls.iter().enumerate() {
                    let access = file_access(call).map(|(access, path)| {
                        accesses.push(Access { index, access, path, failed: false });
                        accesses.len() - 1
                    });
                    open.insert(call.id.as_str(), (index, nth, access));
                }
            }
            ContextBody::ToolResult(result) => {
                if let Some((_, _, Some(access))) = open.remove(result.tool_call_id.as_str())
                    && result.is_error
                {
                    accesses[access].failed = true;
                }
            }
        }
        chars += message.chars;
    }
    // The oldest by position, so the answer does not depend on hash order.
    let pending_call = open.values().min_by_key(|(index, nth, _)| (*index, *nth)).and_then(|&(index, nth, _)| {
        match &messages[index].body {
            ContextBody::Assistant(turn) => turn.tool_calls.get(nth).map(|c| &c.id),
            _ => None,
        }
    });
    Scan { boundaries, chars, pending_call, accesses }
}

impl<'a> Scan<'a> {
    /// The oldest safe boundary that keeps at most `keep_chars` of the
    /// newest messages; when none does (the newest safe suffix alone is
    /// larger), the newest safe boundary. `None` without a safe boundary.
    pub(crate) fn cut(&self, keep_chars: u64) -> Option<Boundary> {
        let evict_at_least = self.chars.saturating_sub(keep_chars);
        let fitting = self.boundaries.partition_point(|b| b.chars_before < evict_at_least);
        self.boundaries.get(fitting).or(self.boundaries.last()).copied()
    }

    /// The successful file accesses of the calls before message `cut`.
    pub(crate) fn accesses_before(&self, cut: usize) -> impl Iterator<Item = (FileAccess, &'a str)> + '_ {
        self.accesses.iter().take_while(move |a| a.index < cut).filter(|a| !a.failed).map(|a| (a.access, a.path))
    }
}
