//! Walking a folder the way `list` and `grep` see it: `.gitignore` (and
//! `.ignore`, `.git/info/exclude`) honoured even outside a git repository,
//! hidden files included but `.git` itself skipped, symlinks listed and never
//! followed (so a walk cannot leave the folder it started in), and entries
//! in name order so results are stable.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{Walk, WalkBuilder};

use crate::error::InputError;

/// A walk over `root`, which is included as the first entry (depth 0).
pub(crate) fn walk(root: &Path) -> Walk {
    WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
}

/// A `glob` input. A pattern without `/` matches file names at any depth
/// (`*.rs`); one with `/` matches the path below the folder walked
/// (`src/**/*.rs`), where `*` stays within one folder and `**` crosses them.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    matcher: GlobMatcher,
    by_name: bool,
}

impl Glob {
    /// The glob, or an error naming `field`.
    pub(crate) fn new(pattern: &str, field: &str) -> Result<Self, InputError> {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return Err(InputError::new(field, "empty; leave it out to match every file"));
        }
        let matcher = GlobBuilder::new(pattern.trim_start_matches("./"))
            .literal_separator(true)
            .build()
            .map_err(|e| InputError::new(field, format!("`{pattern}` is not a glob: {}", e.kind())))?
            .compile_matcher();
        Ok(Self { matcher, by_name: !pattern.contains('/') })
    }

    /// Whether a file, at `relative` below the folder walked, matches.
    pub(crate) fn matches(&self, relative: &Path) -> bool {
        if self.by_name {
            relative.file_name().is_some_and(|name| self.matcher.is_match(name))
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
