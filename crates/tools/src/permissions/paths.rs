//! Path rules: Claude Code's `Read(…)` and `Edit(…)` rules, which allow,
//! ask about or deny the coding tools' actions on the paths a pattern
//! names.
//!
//! A rule reads a path or changes it: `Read` governs `read_file`, `list`
//! and `grep` (and the files `list` and `grep` walk past); `Edit` governs
//! `edit` and `write_file`. Its pattern is a glob below a folder the rule's
//! file gave (the working directory, the home folder, a project's root):
//! `*` and `?` stay within one folder and `**` crosses any number; a
//! pattern without a `/` (`.env`, `*.key`) names a file by its name at any
//! depth, as in `.gitignore`; `dir/**` also names `dir` itself.
//!
//! Among the rules that match one path, deny beats ask, and ask beats
//! allow. A `deny` refuses whatever the tool's permission says; an `ask`
//! asks even when the tool is allowed; an `allow` lets the action through
//! without asking, even outside the working directory (the rule named the
//! place). The rules bind seri's tools only: what a `bash` command reads
//! is the sandbox's to keep, which takes places, not patterns.

use std::path::{Path, PathBuf};

use super::policy::Permission;
use crate::pattern::{GlobPattern, PatternError};

/// What a path rule governs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathAccess {
    /// Reading: `read_file`, `list`, `grep`.
    Read,
    /// Changing: `edit`, `write_file`.
    Edit,
}

impl PathAccess {
    /// What `tool` does to the path it names, if it is a tool path rules govern.
    pub fn of_tool(tool: &str) -> Option<Self> {
        match tool {
            "read_file" | "list" | "grep" => Some(Self::Read),
            "edit" | "write_file" => Some(Self::Edit),
            _ => None,
        }
    }
}

/// One rule: `permission` for the paths below `base` that `pattern` matches.
#[derive(Debug, Clone)]
struct PathRule {
    access: PathAccess,
    permission: Permission,
    base: PathBuf,
    /// As written, after the base's prefix: `secrets/**`, `**/.env`.
    pattern: String,
    glob: GlobPattern,
    /// The pattern has no `/`: it matches a file's name at any depth.
    by_name: bool,
    /// The rule as its file wrote it, for a denial to quote.
    rule: String,
}

impl PartialEq for PathRule {
    fn eq(&self, other: &Self) -> bool {
        (self.access, self.permission, &self.base, &self.pattern, &self.rule)
            == (other.access, other.permission, &other.base, &other.pattern, &other.rule)
    }
}

impl Eq for PathRule {}

impl PathRule {
    fn matches(&self, path: &Path) -> bool {
        let Ok(relative) = path.strip_prefix(&self.base) else {
            return false;
        };
        if self.by_name {
            return relative.components().any(|part| self.glob.is_match(Path::new(part.as_os_str())));
        }
        if self.glob.is_match(relative) {
            return true;
        }
        // `dir/**` names the folder itself too: listing it would show what is inside.
        self.pattern.strip_suffix("/**").is_some_and(|folder| relative == Path::new(folder))
    }
}

/// The rule that decided a path, as [`PathRules::decide`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathDecision<'a> {
    /// What the rule says.
    pub permission: Permission,
    /// The rule as written (`Read(./secrets/**)`).
    pub rule: &'a str,
}

/// Every path rule of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathRules {
    rules: Vec<PathRule>,
}

impl PathRules {
    /// Adds a rule: `permission` for what `access` does to the paths
    /// below `base` that `pattern` matches; `rule` is how its file wrote it.
    pub fn add(
        &mut self,
        access: PathAccess,
        permission: Permission,
        base: &Path,
        pattern: &str,
        rule: &str,
    ) -> Result<(), PatternError> {
        let pattern = pattern.trim().trim_start_matches("./").to_owned();
        let glob = GlobPattern::new(&pattern)?;
        let by_name = !pattern.contains('/');
        // Paths are matched as the tools resolve them, symlinks followed: a
        // base reached through a link (a home folder under a linked
        // `/home`) is matched as its real folder, or no rule would match.
        let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
        self.rules.push(PathRule { access, permission, base, pattern, glob, by_name, rule: rule.to_owned() });
        Ok(())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// What the rules say of `tool` acting on `path` (absolute, resolved):
    /// the strictest matching rule, or `None` when none matches.
    pub fn decide(&self, tool: &str, path: &Path) -> Option<PathDecision<'_>> {
        let access = PathAccess::of_tool(tool)?;
        let rank = |permission| match permission {
            Permission::Deny => 2,
            Permission::Ask => 1,
            Permission::Allow => 0,
        };
        self.rules
            .iter()
            .filter(|rule| rule.access == access && rule.matches(path))
            .max_by_key(|rule| rank(rule.permission))
            .map(|rule| PathDecision { permission: rule.permission, rule: &rule.rule })
    }

    /// Whether a deny rule keeps `path` from being read: what `list` and
    /// `grep` walk past without naming it.
    pub fn denies_reading(&self, path: &Path) -> bool {
        self.rules
            .iter()
            .any(|rule| rule.access == PathAccess::Read && rule.permission == Permission::Deny && rule.matches(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(list: &[(PathAccess, Permission, &str)]) -> PathRules {
        let mut rules = PathRules::default();
        for (access, permission, pattern) in list {
            rules.add(*access, *permission, Path::new("/w"), pattern, pattern).unwrap();
        }
        rules
    }

    #[test]
    fn a_pattern_without_a_slash_names_a_file_at_any_depth_and_dir_stars_name_the_folder_too() {
        let rules = rules(&[
            (PathAccess::Read, Permission::Deny, "**/.env"),
            (PathAccess::Read, Permission::Deny, "*.key"),
            (PathAccess::Read, Permission::Deny, "./secrets/**"),
        ]);
        for denied in ["/w/.env", "/w/app/.env", "/w/a/b/id.key", "/w/secrets", "/w/secrets/db/pass"] {
            assert!(rules.denies_reading(Path::new(denied)), "{denied}");
            assert_eq!(rules.decide("grep", Path::new(denied)).map(|d| d.permission), Some(Permission::Deny));
        }
        for free in ["/w/.envrc", "/w/src/main.rs", "/w/secretsx/a", "/elsewhere/.envx", "/other/secrets/a"] {
            assert!(!rules.denies_reading(Path::new(free)), "{free}");
        }
        // A read rule says nothing of editing, nor of bash.
        assert_eq!(rules.decide("edit", Path::new("/w/.env")), None);
        assert_eq!(rules.decide("bash", Path::new("/w/.env")), None);
    }

    #[test]
    fn a_base_reached_through_a_symlink_matches_the_resolved_paths_the_tools_check() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut rules = PathRules::default();
        rules.add(PathAccess::Read, Permission::Deny, &link, "**/.env", "Read(~/**/.env)").unwrap();
        assert!(rules.denies_reading(&real.join("app/.env")), "{rules:?}");
    }

    #[test]
    fn deny_beats_ask_beats_allow_whatever_their_order() {
        let rules = rules(&[
            (PathAccess::Edit, Permission::Allow, "src/**"),
            (PathAccess::Edit, Permission::Ask, "src/generated/**"),
            (PathAccess::Edit, Permission::Deny, "src/generated/lock.rs"),
        ]);
        let decide = |path: &str| rules.decide("write_file", Path::new(path)).map(|d| (d.permission, d.rule));
        assert_eq!(decide("/w/src/lib.rs"), Some((Permission::Allow, "src/**")));
        assert_eq!(decide("/w/src/generated/a.rs"), Some((Permission::Ask, "src/generated/**")));
        assert_eq!(decide("/w/src/generated/lock.rs"), Some((Permission::Deny, "src/generated/lock.rs")));
        assert_eq!(decide("/w/README.md"), None);
    }
}
