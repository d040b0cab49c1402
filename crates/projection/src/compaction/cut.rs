//! The cut: where the kept part of a working context may start, and what
//! the evicted part touched.
//!
//! A boundary is the position just before a message. It is *safe* when the
//! message is a user message or an assistant turn (never a tool result),
//! it is not the first message, and no tool call before it still waits for
//! its result. The last condition is what keeps a call and its result on
//! the same side of a cut even when a turn makes several calls and their
//! results arrive in any order, and what pins the cut before a call that is
//! still unanswered at the end of the context: no boundary after that
//! call's turn is safe, so the kept part always holds the call and, later,
//! its result.
//!
//! [`CutIndex`] gathers what the planner needs while the working context is
//! built, in the same pass over the events: each message's size and whether
//! a cut may fall before it, and every file access with the message that
//! made it (paths interned, failed calls left out). Planning then reads a
//! few bytes per message instead of chasing each call's id and arguments
//! through the heap: [`CutIndex::cut`] is one pass over those facts, and the
//! file lists one pass over the accesses before the cut.

use std::collections::HashMap;

use seri_core::{ContextCompacted, ToolCall, ToolCallId, ToolResult};

use super::paths::{FileAccess, FileLists, file_access, merge_file_lists};

/// What the planner knows of one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MessageFacts {
    /// Characters of the message.
    chars: u64,
    /// Whether a cut may fall just before it.
    safe: bool,
}

/// A file access by a tool call in message `message`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Access {
    message: usize,
    access: FileAccess,
    /// Index into [`CutIndex::paths`].
    path: usize,
    failed: bool,
}

/// A safe boundary: the index of the message it precedes, and the
/// characters of the messages before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Boundary {
    pub(crate) index: usize,
    pub(crate) chars_before: u64,
}

/// The planner's facts about a working context's messages (see the module doc).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct CutIndex {
    facts: Vec<MessageFacts>,
    accesses: Vec<Access>,
    paths: Vec<String>,
    path_ids: HashMap<String, usize>,
    /// Unanswered calls: their place in call order and their access, if any.
    open: HashMap<ToolCallId, (usize, Option<usize>)>,
    calls: usize,
}

impl CutIndex {
    /// Whether a message starting a turn (a user message or an assistant
    /// turn) at position `index` would start at a safe boundary.
    pub(crate) fn turn_start_is_safe(&self, index: usize) -> bool {
        index > 0 && self.open.is_empty()
    }

    /// Records the next message: its size, and whether a cut may fall before it.
    pub(crate) fn message(&mut self, chars: u64, safe: bool) {
        self.facts.push(MessageFacts { chars, safe });
    }

    /// Records a call made by the message at `index` (the turn being built).
    pub(crate) fn call(&mut self, index: usize, call: &ToolCall) {
        let access = file_access(call).map(|(access, path)| {
            let path = match self.path_ids.get(path) {
                Some(&id) => id,
                None => {
                    self.paths.push(path.to_owned());
                    self.path_ids.insert(path.to_owned(), self.paths.len() - 1);
                    self.paths.len() - 1
                }
            };
            self.accesses.push(Access { message: index, access, path, failed: false });
            self.accesses.len() - 1
        });
        self.open.insert(call.id.clone(), (self.calls, access));
        self.calls += 1;
    }

    /// Records a result: its call is answered, and a failed call touched no file.
    pub(crate) fn result(&mut self, result: &ToolResult) {
        if let Some((_, Some(access))) = self.open.remove(&result.tool_call_id)
            && result.is_error
        {
            self.accesses[access].failed = true;
        }
    }

    /// The oldest call still unanswered.
    pub(crate) fn pending_call(&self) -> Option<&ToolCallId> {
        self.open.iter().min_by_key(|(_, (order, _))| *order).map(|(id, _)| id)
    }

    /// The oldest safe boundary that keeps at most `keep_chars` of the
    /// newest messages, out of `total_chars`; when none does (the newest
    /// safe suffix alone is larger), the newest safe boundary. `None`
    /// without a safe boundary. One pass over the facts, stopping at the
    /// first boundary that fits.
    pub(crate) fn cut(&self, total_chars: u64, keep_chars: u64) -> Option<Boundary> {
        let evict_at_least = total_chars.saturating_sub(keep_chars);
        let mut chars_before = 0;
        let mut newest = None;
        for (index, facts) in self.facts.iter().enumerate() {
            if facts.safe {
                let boundary = Boundary { index, chars_before };
                if chars_before >= evict_at_least {
                    return Some(boundary);
                }
                newest = Some(boundary);
            }
            chars_before += facts.chars;
        }
        newest
    }

    /// The `Read:` and `Modified:` lists of a recap that evicts the messages
    /// before `cut`, merged with `previous`'s (see [`merge_file_lists`]).
    pub(crate) fn file_lists(&self, previous: Option<&ContextCompacted>, cut: usize) -> FileLists {
        // Each path once, with everything the evicted calls did to it and
        // the last message that touched it, oldest first.
        let mut did = vec![(false, false, 0usize); self.paths.len()];
        for a in self.accesses.iter().take_while(|a| a.message < cut).filter(|a| !a.failed) {
            let entry = &mut did[a.path];
            match a.access {
                FileAccess::Read => entry.0 = true,
                FileAccess::Modified => entry.1 = true,
            }
            entry.2 = entry.2.max(a.message);
        }
        let mut touched: Vec<(usize, usize)> =
            did.iter().enumerate().filter(|(_, d)| d.0 || d.1).map(|(path, d)| (d.2, path)).collect();
        touched.sort_unstable();
        let accesses = touched.into_iter().flat_map(|(_, path)| {
            let (read, modified, _) = did[path];
            let path = self.paths[path].as_str();
            let read = read.then_some((FileAccess::Read, path));
            let modified = modified.then_some((FileAccess::Modified, path));
            read.into_iter().chain(modified)
        });
        merge_file_lists(previous, accesses)
    }
}
