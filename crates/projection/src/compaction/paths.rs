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
//! prefix) whatever order the files were touched in. Paths are kept as the
//! model wrote them: this crate reads no file system, so `./a.rs` and `a.rs`
//! are two entries.

use std::collections::BTreeSet;

use seri_core::{ContextCompacted, ToolCall};

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

/// The `Read:` and `Modified:` lists of a new recap: the previous recap's
/// lists and the new accesses, merged, sorted, each path once, and a path
/// that was ever modified listed as modified only.
pub fn merge_file_lists<'a>(
    previous: Option<&ContextCompacted>,
    accesses: impl IntoIterator<Item = (FileAccess, &'a str)>,
) -> (Vec<String>, Vec<String>) {
    let mut read: BTreeSet<&str> = BTreeSet::new();
    let mut modified: BTreeSet<&str> = BTreeSet::new();
    if let Some(previous) = previous {
        read.extend(previous.read.iter().map(String::as_str));
        modified.extend(previous.modified.iter().map(String::as_str));
    }
    for (access, path) in accesses {
        match access {
            FileAccess::Read => read.insert(path),
            FileAccess::Modified => modified.insert(path),
        };
    }
    let read = read.difference(&modified).map(|p| (*p).to_owned()).collect();
    let modified = modified.into_iter().map(str::to_owned).collect();
    (read, modified)
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

    #[track_caller]
    fn check_merge(previous: (&[&str], &[&str]), accesses: &[(FileAccess, &str)], expected: (&[&str], &[&str])) {
        let owned = |list: &[&str]| list.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>();
        let previous = ContextCompacted {
            recap: CompactionRecap::default(),
            read: owned(previous.0),
            modified: owned(previous.1),
            kept_from_seq: Seq(5),
            evicted_from_seq: Seq(1),
            evicted_to_seq: Seq(4),
            tokens_before: 0,
            tokens_after: 0,
            trigger: Default::default(),
            focus: None,
            model: ModelRef::new("script", "m"),
        };
        let (read, modified) = merge_file_lists(Some(&previous), accesses.iter().copied());
        assert_eq!((read, modified), (owned(expected.0), owned(expected.1)));
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
