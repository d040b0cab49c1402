//! A session's tree without its content: each entry's parent, line and
//! whether it holds anything, by index. What picks the branches to import
//! needs no more, so a streaming import reads a file once for its
//! [`Tree`] (a few dozen bytes an entry) and once more for the content of
//! the branches it picked.

use std::collections::HashMap;

use super::build::Placed;
use super::model::{EntryKind, PeerSession};

/// The parent of a root.
const ROOT: u32 = u32::MAX;

/// The shape of a session's entries, in file order.
#[derive(Debug, Default, Clone)]
pub struct Tree {
    nodes: Vec<Node>,
    /// Each compaction's first kept entry, when it is an earlier one.
    kept: HashMap<u32, u32>,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u32,
    line: u64,
    /// It holds nothing to import ([`EntryKind::Skipped`]).
    skipped: bool,
}

impl Tree {
    /// Adds the next entry (entries come in index order).
    pub fn push(&mut self, placed: &Placed) {
        debug_assert_eq!(placed.index as usize, self.nodes.len());
        let skipped = matches!(placed.entry.kind, EntryKind::Skipped { .. });
        self.nodes.push(Node { parent: placed.parent.unwrap_or(ROOT), line: placed.entry.line, skipped });
        if let Some(kept) = placed.kept {
            self.kept.insert(placed.index, kept);
        }
    }

    /// The tree of a session read whole.
    pub fn of(session: &PeerSession) -> Tree {
        let index: HashMap<&str, u32> =
            session.entries.iter().enumerate().map(|(i, entry)| (entry.id.as_str(), i as u32)).collect();
        let mut tree = Tree::default();
        for (i, entry) in session.entries.iter().enumerate() {
            let parent = entry.parent.as_deref().and_then(|parent| index.get(parent)).copied().unwrap_or(ROOT);
            let skipped = matches!(entry.kind, EntryKind::Skipped { .. });
            tree.nodes.push(Node { parent, line: entry.line, skipped });
            if let EntryKind::Compaction { first_kept: Some(kept), .. } = &entry.kind
                && let Some(&kept) = index.get(kept.as_str())
                && (kept as usize) < i
            {
                tree.kept.insert(i as u32, kept);
            }
        }
        tree
    }

    /// How many entries it has.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The line entry `index` came from.
    pub fn line(&self, index: u32) -> u64 {
        self.nodes.get(index as usize).map_or(0, |node| node.line)
    }

    /// The first entry compaction `index` kept, when it names an earlier one.
    pub fn kept(&self, index: u32) -> Option<u32> {
        self.kept.get(&index).copied()
    }

    /// The parent of entry `index`.
    pub fn parent(&self, index: u32) -> Option<u32> {
        self.nodes.get(index as usize).map(|node| node.parent).filter(|&parent| parent != ROOT)
    }

    /// The leaf a linear import follows: the last entry in file order that
    /// holds something (the last entry when none does).
    pub fn latest_leaf(&self) -> Option<u32> {
        let last = self.nodes.len().checked_sub(1)? as u32;
        Some(self.nodes.iter().rposition(|node| !node.skipped).map_or(last, |i| i as u32))
    }

    /// The entries from a root to `leaf`, in order (which is file order:
    /// a parent always comes before its children).
    pub fn path_to(&self, leaf: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut next = Some(leaf).filter(|&leaf| (leaf as usize) < self.nodes.len());
        // Parents come before children, so the walk ends; the bound is a
        // second guarantee.
        while let Some(index) = next
            && path.len() <= self.nodes.len()
        {
            path.push(index);
            next = self.parent(index).filter(|&parent| parent < index);
        }
        path.reverse();
        path
    }

    /// The path from a root to [`Tree::latest_leaf`]: the conversation as
    /// the peer last left it.
    pub fn main_path(&self) -> Vec<u32> {
        self.latest_leaf().map(|leaf| self.path_to(leaf)).unwrap_or_default()
    }

    /// The entries with no child, holding something, that the main path
    /// does not end at, in file order: where each branch the session left
    /// behind ends.
    pub fn other_leaves(&self) -> Vec<u32> {
        let mut has_child = vec![false; self.nodes.len()];
        for node in &self.nodes {
            if let Some(parent) = has_child.get_mut(node.parent as usize) {
                *parent = true;
            }
        }
        let main = self.latest_leaf();
        (0..self.nodes.len() as u32)
            .filter(|&i| !has_child[i as usize] && Some(i) != main && !self.nodes[i as usize].skipped)
            .collect()
    }
}
