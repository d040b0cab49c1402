//! The recap's file lists, taken from the evicted tool calls themselves.
//!
//! The summarizer never writes them: a model asked to list the files it saw
//! misremembers and invents, while the calls say exactly which path each
//! tool was given. `read_file` puts its path under `Read:`; `write_file` and
//! `edit` put theirs under `Modified:`. A path that was both is listed as
//! modified only, across compactions too: a file read before one recap and
//! edited before the next moves from `Read:` to `Modified:`.
//!
//! Only calls that succeeded count: a `read_file` that failed read nothing
//! and an `edit` that failed changed nothing. A call whose result is not in
//! the evicted part (it cannot be: a cut never separates a call from its
//! result) would count as succeeded.
//!
//! Both lists are sorted by byte order, each path once, so the same
//! session always gives the same recap text (and the same cacheable
//! prefix) whatever order the files were touched in. Each keeps at most
//! [`MAX_LISTED_PATHS`] paths, the most recently touched, and counts the
//! rest (`Read: … (and 412 more)`): a recap that grew with every file ever
//! read would come to fill the window it exists to free. Paths are kept as the
//! model wrote them: this crate reads no file system, so `./a.rs` and `a.rs`
//! are two entries.

use std::collections::HashSet;

use seri_core::{ContextCompacted, ToolCall};

/// The most paths one list of a recap holds.
pub const MAX_LISTED_PATHS: usize = 50;

/// A recap's file lists: each sorted, at most [`MAX_LISTED_PATHS`] paths,
/// with how many more there were.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileLists {
    /// Files read and not modified.
    pub read: Vec<String>,
    /// Files modified.
    pub modified: Vec<String>,
    /// Read files left out of `read`.
    pub read_unlisted: u64,
    /// Modified files left out of `modified`.
    pub modified_unlisted: u64,
}

/// Tools whose path goes under `Read:`.
pub const READ_TOOLS: &[&str] = &["read_file"];

/// Tools whose path goes under `Modified:`.
pub const MODIFY_TOOLS: &[&str] = &["write_file", "edit"];

/// The argument names a path is read from, first match wins: `path` as
/// seri's coding tools name it, and `file_path` as several other agents'
/// tools do, so imported or replayed sessions list their files too.
pub const PATH_ARGUMENTS: &[&str] = &["path", "file_path"];

/// What a tool call did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileAccess {
    /// Read it (`read_file`).
    Read,
    /// Wrote or edited it (`write_file`, `edit`).
    Modified,
}

/// What `call` did to which file, if it is a file tool with a string path.
pub fn file_access(call: &ToolCall) -> Option<(FileAccess, &str)> {
    let access = if READ_TOOLS.contains(&call.name.as_str()) {
        FileAccess::Read
    } else if MODIFY_TOOLS.contains(&call.name.as_str()) {
        FileAccess::Modified
    } else {
        return None;
    };
    let args = call.arguments.as_object()?;
    let path = PATH_ARGUMENTS.iter().find_map(|key| args.get(*key)?.as_str())?;
    (!path.is_empty()).then_some((access, path))
}

/// The `Read:` and `Modified:` lists of a new recap: the new accesses
/// (oldest first) and the previous recap's lists, merged, each path once,
/// a path that was ever modified listed as modified only. Each list keeps
/// the [`MAX_LISTED_PATHS`] most recently touched paths (the new accesses
/// before the previous recap's), sorted, and counts the rest, with the
/// previous recap's counts carried on.
pub fn merge_file_lists<'a>(
    previous: Option<&'a ContextCompacted>,
    accesses: impl IntoIterator<Item = (FileAccess, &'a str)>,
) -> FileLists {
    let accesses: Vec<(FileAccess, &str)> = accesses.into_iter().collect();
    let newest_first = |kind: FileAccess| accesses.iter().rev().filter(move |(a, _)| *a == kind).map(|(_, p)| *p);
    let mut modified_seen: HashSet<&str> = HashSet::new();
    let mut modified: Vec<&str> = Vec::new();
    let earlier_modified = previous.into_iter().flat_map(|p| p.modified.iter().map(String::as_str));
    for path in newest_first(FileAccess::Modified).chain(earlier_modified) {
        if modified_seen.insert(path) {
            modified.push(path);
        }
    }
    let mut read_seen: HashSet<&str> = HashSet::new();
    let mut read: Vec<&str> = Vec::new();
    let earlier_read = previous.into_iter().flat_map(|p| p.read.iter().map(String::as_str));
    for path in newest_first(FileAccess::Read).chain(earlier_read) {
        if !modified_seen.contains(path) && read_seen.insert(path) {
            read.push(path);
        }
    }
    let (read, read_unlisted) = keep_newest(read, previous.map_or(0, |p| p.read_unlisted));
    let (modified, modified_unlisted) = keep_newest(modified, previous.map_or(0, |p| p.modified_unlisted));
    FileLists { read, modified, read_unlisted, modified_unlisted }
}

/// The first [`MAX_LISTED_PATHS`] of `newest_first`, sorted, and how many
/// were left out (with `carried` from earlier recaps).
fn keep_newest(newest_first: Vec<&str>, carried: u64) -> (Vec<String>, u64) {
    let unlisted = newest_first.len().saturating_sub(MAX_LISTED_PATHS) as u64 + carried;
    let mut kept: Vec<String> = newest_first.into_iter().take(MAX_LISTED_PATHS).map(str::to_owned).collect();
    kept.sort();
    (kept, unlisted)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use seri_core::{CompactionRecap, ModelRef, Seq};

    use super::*;

    fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
        ToolCall { id: "c".into(), name: name.into(), arguments }
    }

    #[track_caller]
    fn check_access(name: &str, arguments: serde_json::Value, expected: Option<(FileAccess, &str)>) {
        assert_eq!(file_access(&call(name, arguments)), expected);
    }

    #[test]
    fn file_tools_and_their_path_arguments() {
        check_access("read_file", json!({"path": "src/a.rs"}), Some((FileAccess::Read, "src/a.rs")));
        check_access("write_file", json!({"path": "b.rs", "content": "x"}), Some((FileAccess::Modified, "b.rs")));
        check_access("edit", json!({"file_path": "c.rs"}), Some((FileAccess::Modified, "c.rs")));
        check_access("edit", json!({"path": "p.rs", "file_path": "f.rs"}), Some((FileAccess::Modified, "p.rs")));
        check_access("bash", json!({"path": "x"}), None);
        check_access("read_file", json!({"path": 7}), None);
        check_access("read_file", json!({"path": ""}), None);
        check_access("read_file", json!(["a.rs"]), None);
    }

    /// A previous recap holding these lists.
    fn recap_with(read: Vec<String>, modified: Vec<String>, read_unlisted: u64) -> ContextCompacted {
        ContextCompacted {
            recap: CompactionRecap::default(),
            read,
            modified,
            read_unlisted,
            modified_unlisted: 0,
            kept_from_seq: Seq(5),
            evicted_from_seq: Seq(1),
            evicted_to_seq: Seq(4),
            tokens_before: 0,
            tokens_after: 0,
            trigger: Default::default(),
            focus: None,
            model: ModelRef::new("script", "m"),
        }
    }

    #[track_caller]
    fn check_merge(previous: (&[&str], &[&str]), accesses: &[(FileAccess, &str)], expected: (&[&str], &[&str])) {
        let owned = |list: &[&str]| list.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>();
        let previous = recap_with(owned(previous.0), owned(previous.1), 0);
        let lists = merge_file_lists(Some(&previous), accesses.iter().copied());
        assert_eq!((lists.read, lists.modified), (owned(expected.0), owned(expected.1)));
    }

    #[test]
    fn a_list_keeps_the_newest_paths_and_counts_the_rest_across_recaps() {
        let names: Vec<String> = (0..MAX_LISTED_PATHS + 30).map(|n| format!("src/f{n:03}.rs")).collect();
        let accesses: Vec<(FileAccess, &str)> = names.iter().map(|n| (FileAccess::Read, n.as_str())).collect();
        let first = merge_file_lists(None, accesses.iter().copied());
        assert_eq!(first.read.len(), MAX_LISTED_PATHS);
        assert_eq!(first.read_unlisted, 30);
        assert_eq!(first.read.first().map(String::as_str), Some("src/f030.rs"), "the 30 oldest go");
        // The next recap: one new file read; the oldest listed one gives way.
        let previous = recap_with(first.read.clone(), Vec::new(), first.read_unlisted);
        let next = merge_file_lists(Some(&previous), [(FileAccess::Read, "zz.rs")]);
        assert_eq!(next.read.len(), MAX_LISTED_PATHS);
        assert!(next.read.contains(&"zz.rs".to_owned()));
        assert_eq!(next.read_unlisted, 31);
        let recap = ContextCompacted { read: next.read.clone(), read_unlisted: next.read_unlisted, ..previous };
        assert!(recap.recap_text().ends_with(", zz.rs (and 31 more)"), "{}", recap.recap_text());
    }

    #[test]
    fn lists_are_sorted_once_each_and_modified_wins() {
        use FileAccess::{Modified, Read};
        // Read only, modified only, both.
        check_merge((&[], &[]), &[(Read, "b.rs"), (Read, "a.rs"), (Read, "b.rs")], (&["a.rs", "b.rs"], &[]));
        check_merge((&[], &[]), &[(Modified, "z.rs"), (Modified, "c.rs")], (&[], &["c.rs", "z.rs"]));
        check_merge((&[], &[]), &[(Read, "a.rs"), (Modified, "a.rs"), (Read, "a.rs")], (&[], &["a.rs"]));
        // Merged with a previous recap: a file read then and edited now moves.
        check_merge(
            (&["a.rs", "b.rs"], &["m.rs"]),
            &[(Modified, "a.rs"), (Read, "c.rs")],
            (&["b.rs", "c.rs"], &["a.rs", "m.rs"]),
        );
        // A file modified then and only read now stays modified.
        check_merge((&[], &["m.rs"]), &[(Read, "m.rs")], (&[], &["m.rs"]));
    }
}
