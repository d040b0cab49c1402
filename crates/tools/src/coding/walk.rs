//! Walking a folder the way `list` and `grep` see it: `.gitignore` (and
//! `.ignore`, `.git/info/exclude`) honoured even outside a git repository,
//! hidden files included but `.git` itself skipped, symlinks listed and never
//! followed (so a walk cannot leave the folder it started in), and entries
//! in name order so results are stable.
//!
//! The walk goes by handle, not by path: the folder walked is opened as a
//! checked path, and each folder below it is opened inside its parent's
//! handle with `O_NOFOLLOW`. A folder swapped for a symlink while the walk
//! runs cannot be entered, so no name from outside is ever listed and no
//! file outside is ever read. `ignore`'s matcher decides what is ignored.

use std::ffi::OsString;
use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::checked;
use crate::error::InputError;
use crate::pattern::{GlobPattern, PatternError};
use crate::permissions::PathRules;
use crate::tool::ToolContext;

/// What a walked entry is (a symlink is never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A folder, walked into.
    Folder,
    /// A regular file.
    File,
    /// A symlink, listed as such.
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// One entry below the folder walked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its path below the folder walked.
    pub(crate) relative: PathBuf,
    /// What it is.
    pub(crate) kind: EntryKind,
}

/// What a walk passes by without listing or entering: the workspace's
/// protected places and what a deny `Read(…)` rule names.
#[derive(Debug, Clone, Default)]
pub(crate) struct Skip {
    places: Vec<PathBuf>,
    rules: PathRules,
}

impl Skip {
    /// What a call of `ctx`'s run walks past.
    pub(crate) fn of(ctx: ToolContext<'_>) -> Self {
        Self { places: ctx.workspace.protected().to_vec(), rules: ctx.permissions.policy().paths().clone() }
    }

    fn covers(&self, absolute: &Path) -> bool {
        self.places.iter().any(|place| absolute.starts_with(place)) || self.rules.denies_reading(absolute)
    }
}

/// Every entry below `root` (not `root` itself), depth first, siblings by
/// name, with how many folders could not be read; nothing `skip` covers
/// is listed, nor anything below it.
pub(crate) fn walk(root: &Path, skip: &Skip) -> std::io::Result<(Vec<Entry>, u64)> {
    let fd = checked::open_dir(root)?;
    let skip = skip.clone();
    let mut walk = Walker { root: root.to_path_buf(), entries: Vec::new(), unreadable: 0, rules: Vec::new(), skip };
    let exclude = [".git", "info", "exclude"].map(std::ffi::OsStr::new);
    if let Some(exclude) = rules_in(&fd, root, &exclude) {
        walk.rules.push(exclude);
    }
    walk.folder(&fd, PathBuf::new());
    Ok((walk.entries, walk.unreadable))
}

struct Walker {
    root: PathBuf,
    entries: Vec<Entry>,
    unreadable: u64,
    /// The ignore files in force, outermost first.
    rules: Vec<Gitignore>,
    /// What is never listed nor entered.
    skip: Skip,
}

impl Walker {
    fn folder(&mut self, fd: &OwnedFd, relative: PathBuf) {
        let here = self.root.join(&relative);
        // `.ignore` after `.gitignore`: the later file of a folder wins.
        let pushed: Vec<Gitignore> = [".gitignore", ".ignore"]
            .iter()
            .filter_map(|name| rules_in(fd, &here, &[std::ffi::OsStr::new(name)]))
            .collect();
        let count = pushed.len();
        self.rules.extend(pushed);
        let mut names: Vec<OsString> = match rustix::fs::Dir::read_from(fd) {
            Ok(dir) => dir
                .filter_map(Result::ok)
                .map(|e| {
                    OsString::from(
                        std::os::unix::ffi::OsStrExt::from_bytes(e.file_name().to_bytes()) as &std::ffi::OsStr
                    )
                })
                .filter(|n| n != "." && n != ".." && n != ".git")
                .collect(),
            Err(_) => {
                self.unreadable += 1;
                Vec::new()
            }
        };
        names.sort();
        for name in names {
            let Ok(stat) = rustix::fs::statat(fd, &*name, AtFlags::SYMLINK_NOFOLLOW) else {
                self.unreadable += 1;
                continue;
            };
            let kind = match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => EntryKind::Folder,
                FileType::RegularFile => EntryKind::File,
                FileType::Symlink => EntryKind::Symlink,
                _ => EntryKind::Other,
            };
            let child = relative.join(&name);
            let absolute = self.root.join(&child);
            if self.skip.covers(&absolute) || self.ignored(&absolute, kind == EntryKind::Folder) {
                continue;
            }
            self.entries.push(Entry { relative: child.clone(), kind });
            if kind == EntryKind::Folder {
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                match rustix::fs::openat(fd, &*name, flags, Mode::empty()) {
                    Ok(inner) => self.folder(&inner, child),
                    Err(_) => self.unreadable += 1,
                }
            }
        }
        self.rules.truncate(self.rules.len() - count);
    }

    /// The innermost rule that says anything decides.
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        for rules in self.rules.iter().rev() {
            match rules.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

/// The ignore rules in the file at `parts` below `fd` (never through a
/// symlink), rooted at `here`; `None` when there is no such file.
fn rules_in(fd: &OwnedFd, here: &Path, parts: &[&std::ffi::OsStr]) -> Option<Gitignore> {
    let mut current: Option<OwnedFd> = None;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let flags = if last {
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK
        } else {
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW
        };
        let base = current.as_ref().unwrap_or(fd);
        current = Some(rustix::fs::openat(base, *part, flags | OFlags::CLOEXEC, Mode::empty()).ok()?);
    }
    let file = std::fs::File::from(current?);
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(1024 * 1024).read_to_string(&mut text).ok()?;
    let mut builder = GitignoreBuilder::new(here);
    for line in text.lines() {
        let _ = builder.add_line(None, line);
    }
    builder.build().ok()
}

/// A `glob` input. A pattern without `/` matches file names at any depth
/// (`*.rs`); one with `/` matches the path below the folder walked
/// (`src/**/*.rs`), where `*` stays within one folder and `**` crosses them.
/// Bounded like every model-supplied pattern ([`crate::pattern`]).
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    matcher: GlobPattern,
    by_name: bool,
}

impl Glob {
    /// The glob, or an error naming `field`.
    pub(crate) fn new(pattern: &str, field: &str) -> Result<Self, InputError> {
        let pattern = pattern.trim();
        let matcher = GlobPattern::new(pattern.trim_start_matches("./")).map_err(|e| match e {
            PatternError::Empty => InputError::new(field, "empty; leave it out to match every file"),
            other => InputError::new(field, other.to_string()),
        })?;
        Ok(Self { matcher, by_name: !pattern.contains('/') })
    }

    /// Whether a file, at `relative` below the folder walked, matches.
    pub(crate) fn matches(&self, relative: &Path) -> bool {
        if self.by_name {
            relative.file_name().is_some_and(|name| self.matcher.is_match(Path::new(name)))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// How results name an entry: `base/relative`, or `relative` when the walk
/// started at the working directory itself (`.`).
pub(crate) fn display_path(base: &str, relative: &Path) -> String {
    if base == "." { relative.display().to_string() } else { format!("{base}/{}", relative.display()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(pattern: &str, path: &str, expected: bool) {
        assert_eq!(Glob::new(pattern, "glob").unwrap().matches(Path::new(path)), expected, "{pattern} vs {path}");
    }

    #[test]
    fn names_without_a_slash_match_at_any_depth() {
        check("*.rs", "lib.rs", true);
        check("*.rs", "src/deep/lib.rs", true);
        check("*.rs", "src/lib.rs.bak", false);
        check("Cargo.toml", "crates/a/Cargo.toml", true);
    }

    #[test]
    fn paths_with_a_slash_match_from_the_folder_walked() {
        check("src/*.rs", "src/lib.rs", true);
        check("src/*.rs", "src/deep/lib.rs", false);
        check("src/**/*.rs", "src/deep/lib.rs", true);
        check("./src/*.rs", "src/lib.rs", true);
    }

    #[test]
    fn a_bad_glob_names_the_field() {
        let error = Glob::new("src/[", "glob").unwrap_err();
        assert!(error.to_string().starts_with("`glob`: `src/[` is not a glob"), "{error}");
    }
}
