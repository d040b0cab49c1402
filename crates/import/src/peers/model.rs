//! The one shape every peer's session is read into: a session's facts and
//! a tree of entries, each with its id and its parent's, plus what was left
//! out and why. Branches stay a tree, so that importing can map siblings
//! onto forks; [`PeerSession::main_branch`] is the path a linear import takes.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;
use seri_core::Timestamp;

/// The agents whose session files seri reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// Claude Code: `~/.claude/projects/<cwd with / as ->/<uuid>.jsonl`.
    ClaudeCode,
    /// Codex: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.
    Codex,
    /// pi: `~/.pi/agent/sessions/--<cwd>--/*.jsonl`.
    Pi,
    /// opencode: a session as `opencode export <id>` writes it.
    Opencode,
}

impl Format {
    /// Every format, in the order `seri import --from` names them.
    pub const ALL: [Format; 4] = [Format::ClaudeCode, Format::Codex, Format::Pi, Format::Opencode];

    /// The name `seri import --from` takes: `claude-code`, `codex`, `pi`, `opencode`.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::Pi => "pi",
            Format::Opencode => "opencode",
        }
    }

    /// The format named `name` (as [`Format::name`] spells it).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.name() == name)
    }

    /// The provider a session of this format talks to when the file does not say.
    pub(crate) fn default_provider(self) -> Option<&'static str> {
        match self {
            Format::ClaudeCode => Some("anthropic"),
            Format::Codex => Some("openai"),
            Format::Pi | Format::Opencode => None,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One session of a peer, read.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerSession {
    /// Whose file it is.
    pub format: Format,
    /// The peer's id of the session.
    pub id: Option<String>,
    /// The working directory it ran in.
    pub cwd: Option<String>,
    /// The model of its first answer (or its header), as the peer names it.
    pub model: Option<String>,
    /// The provider, as the peer names it.
    pub provider: Option<String>,
    /// When it started: the header's time, else the first time a line carried.
    pub created_at: Option<Timestamp>,
    /// Its title, when the peer keeps one.
    pub title: Option<String>,
    /// The version of the peer that wrote it.
    pub peer_version: Option<String>,
    /// The session this one was forked from, when the file says.
    pub forked_from: Option<ForkedFrom>,
    /// Its first entries are copies of another session's, which the file
    /// does not name: Claude Code's `--fork-session` copies the lines it
    /// forks under their old ids and times, before a line of its own.
    pub copies_unnamed_source: bool,
    /// Every entry, in file order. A parent always comes before its children.
    pub entries: Vec<Entry>,
    /// The lines (or parts) left out entirely, in order: bookkeeping, and
    /// what could not be read.
    pub skipped: Vec<Skip>,
}

/// Where a forked session starts in its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkedFrom {
    /// The source session: its id, or the path of its file (pi).
    pub session: String,
    /// The last entry of the source the fork shares, when the file says
    /// (Codex: the ordinal before which the fork starts, exclusive).
    pub before: Option<String>,
}

/// One thing that happened in a session, in its place in the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Unique within the session. A line that holds several entries (an
    /// answer's thinking, text and calls) gives the last one the line's own
    /// id, so the line's children hang below all of them, and the others
    /// `<id>.0`, `<id>.1`, ….
    pub id: String,
    /// The entry before it; `None` for a root. Always an entry earlier in
    /// [`PeerSession::entries`].
    pub parent: Option<String>,
    /// When it happened, if the file says.
    pub at: Option<Timestamp>,
    /// The 1-based line of the file it came from (opencode: the message's
    /// 1-based place in the export).
    pub line: u64,
    /// What it is.
    pub kind: EntryKind,
}

/// What an entry is.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    /// Something the person wrote.
    UserText {
        /// The text.
        text: String,
    },
    /// Text a model answered.
    AssistantText {
        /// The text.
        text: String,
    },
    /// A model's reasoning, as far as the file shows it.
    Thinking {
        /// The text (or its summary).
        text: String,
        /// Anthropic's signature of it, which the Messages API needs to be
        /// sent the thinking again (Claude Code's, and pi's on that API).
        signature: Option<String>,
    },
    /// A tool call a model made.
    ToolCall {
        /// The call's id, which its result names.
        call_id: String,
        /// The tool.
        name: String,
        /// Its arguments: an object, or a string when the peer sent free text.
        arguments: Value,
    },
    /// What a tool call returned.
    ToolResult {
        /// The call it answers.
        call_id: String,
        /// The tool, when the file says.
        name: Option<String>,
        /// Its text.
        text: String,
        /// Whether the peer marked it failed.
        is_error: bool,
    },
    /// The peer compacted the conversation: the model was shown `summary`
    /// instead of the entries before `first_kept`.
    Compaction {
        /// The peer's own summary.
        summary: String,
        /// The first entry kept after the summary, when the peer says.
        first_kept: Option<String>,
        /// Files read in the part summarised (pi).
        read_files: Vec<String>,
        /// Files changed in the part summarised (pi).
        modified_files: Vec<String>,
    },
    /// pi's summary of a branch left behind, shown to the model where the
    /// conversation went on.
    BranchSummary {
        /// The summary.
        summary: String,
        /// The entry the branch left from.
        from: Option<String>,
    },
    /// The session went on with another model.
    ModelChange {
        /// The provider, when the file says.
        provider: Option<String>,
        /// The model.
        model: String,
    },
    /// A place in the tree that holds nothing to import (an attachment, a
    /// meta line, the record of a local command); kept so the entries
    /// below it keep their parent.
    Skipped {
        /// Why it holds nothing.
        reason: String,
    },
}

impl EntryKind {
    /// A short name of the kind, for summaries.
    pub fn name(&self) -> &'static str {
        match self {
            EntryKind::UserText { .. } => "user",
            EntryKind::AssistantText { .. } => "assistant",
            EntryKind::Thinking { .. } => "thinking",
            EntryKind::ToolCall { .. } => "tool_call",
            EntryKind::ToolResult { .. } => "tool_result",
            EntryKind::Compaction { .. } => "compaction",
            EntryKind::BranchSummary { .. } => "branch_summary",
            EntryKind::ModelChange { .. } => "model_change",
            EntryKind::Skipped { .. } => "skipped",
        }
    }
}

/// A line (or part) left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// The 1-based line (opencode: the message's place in the export).
    pub line: u64,
    /// Why.
    pub reason: String,
}

impl PeerSession {
    pub(crate) fn new(format: Format) -> Self {
        Self {
            format,
            id: None,
            cwd: None,
            model: None,
            provider: None,
            created_at: None,
            title: None,
            peer_version: None,
            forked_from: None,
            copies_unnamed_source: false,
            entries: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// How many lines were left out for each reason, and how many entries
    /// hold nothing, by reason: what an import's summary reports.
    pub fn skip_counts(&self) -> BTreeMap<&str, usize> {
        let mut counts = BTreeMap::new();
        let held = self.entries.iter().filter_map(|entry| match &entry.kind {
            EntryKind::Skipped { reason } => Some(reason.as_str()),
            _ => None,
        });
        for reason in self.skipped.iter().map(|skip| skip.reason.as_str()).chain(held) {
            *counts.entry(reason).or_insert(0) += 1;
        }
        counts
    }

    /// The shape of its entries: see [`Tree`](super::Tree).
    pub fn tree(&self) -> super::Tree {
        super::Tree::of(self)
    }

    /// The entries from the root to the latest leaf (the last entry in
    /// file order that holds something), in order: the conversation as the
    /// peer last left it, without the branches it left behind.
    pub fn main_branch(&self) -> Vec<&Entry> {
        self.entries_at(self.tree().main_path())
    }

    /// The path from the root to each branch the session left behind (an
    /// entry with no child, holding something, that the main branch does
    /// not end at), in file order of where they end.
    pub fn other_branches(&self) -> Vec<Vec<&Entry>> {
        let tree = self.tree();
        tree.other_leaves().into_iter().map(|leaf| self.entries_at(tree.path_to(leaf))).collect()
    }

    fn entries_at(&self, indexes: Vec<u32>) -> Vec<&Entry> {
        indexes.into_iter().filter_map(|index| self.entries.get(index as usize)).collect()
    }
}
