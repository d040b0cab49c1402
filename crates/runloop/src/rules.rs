//! Glob rules: rule files whose front matter declares `globs`. They stay out
//! of the frozen system prompt; the first time in a session that a tool
//! reads or writes a path one covers, the rule's text arrives as a message
//! ([`seri_prompt::FiredRule`]), recorded like any other event. The message
//! carries the rule's path in [`seri_core::MessageMeta::rule`], which is how
//! a rule fires once per session: the store's
//! [`fired_rules`](seri_store::Reader::fired_rules) is the record.
//!
//! Patterns are matched against the path relative to the project root (the
//! folder the caller names, normally the repository root), with `/`
//! separating folders: `*` stays within one folder, `**` spans any number.
//! A path outside the root is matched as it is, absolute.

use std::path::{Path, PathBuf};

use seri_tools::error::bounded;
use seri_tools::pattern::{GlobPattern, PatternError};

/// One glob rule, its patterns compiled.
#[derive(Debug, Clone)]
pub struct GlobRule {
    path: String,
    globs: Vec<String>,
    compiled: Vec<GlobPattern>,
    text: String,
}

/// A rule's pattern is not a glob, or not one seri accepts (too long, too
/// complex: the limits of [`seri_tools::pattern`]).
#[derive(Debug, thiserror::Error)]
#[error("rule {path}: `{pattern}` is not a glob pattern: {reason}")]
pub struct GlobRuleError {
    /// The rule file, as shown.
    pub path: String,
    /// The pattern, cut like a tool error quotes one.
    pub pattern: String,
    /// What was wrong.
    pub reason: String,
}

impl GlobRule {
    /// A rule from its file's path (as the model should see it), its
    /// patterns and its text without front matter.
    pub fn new(
        path: impl Into<String>,
        globs: Vec<String>,
        text: impl Into<String>,
    ) -> Result<GlobRule, GlobRuleError> {
        let path = path.into();
        let mut compiled = Vec::with_capacity(globs.len());
        for pattern in &globs {
            let glob = GlobPattern::new(pattern).map_err(|e| GlobRuleError {
                path: path.clone(),
                pattern: bounded(pattern.clone()),
                reason: match e {
                    PatternError::NotAGlob { reason, .. } => reason,
                    other => bounded(other.to_string()),
                },
            })?;
            compiled.push(glob);
        }
        Ok(GlobRule { path, globs, compiled, text: text.into() })
    }

    /// The rule file, as the model sees it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Its patterns.
    pub fn globs(&self) -> &[String] {
        &self.globs
    }

    /// Its text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The glob rules of one working directory.
#[derive(Debug, Clone, Default)]
pub struct GlobRules {
    root: PathBuf,
    rules: Vec<GlobRule>,
}

impl GlobRules {
    /// Rules whose patterns are relative to `root`.
    pub fn new(root: impl Into<PathBuf>, rules: Vec<GlobRule>) -> Self {
        Self { root: root.into(), rules }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules, in the order given.
    pub fn rules(&self) -> &[GlobRule] {
        &self.rules
    }

    /// The path as rules match it: relative to the root when inside it.
    pub fn relative<'p>(&self, touched: &'p Path) -> &'p Path {
        touched.strip_prefix(&self.root).unwrap_or(touched)
    }

    /// The rules covering `touched` (an absolute path), in order.
    pub fn matching<'a>(&'a self, touched: &Path) -> impl Iterator<Item = &'a GlobRule> + use<'a> {
        let relative = self.relative(touched).to_path_buf();
        self.rules.iter().filter(move |rule| rule.compiled.iter().any(|glob| glob.is_match(&relative)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> GlobRules {
        let rust = GlobRule::new(".seri/rules/rust.md", vec!["src/**/*.rs".into()], "tabs").unwrap();
        let docs = GlobRule::new("~/rules/docs.md", vec!["*.md".into(), "**/*.txt".into()], "prose").unwrap();
        GlobRules::new("/repo", vec![rust, docs])
    }

    fn matched(path: &str) -> Vec<&'static str> {
        let rules = Box::leak(Box::new(rules()));
        rules.matching(Path::new(path)).map(|r| r.path()).collect()
    }

    #[test]
    fn patterns_match_relative_to_the_root_with_folders_kept_apart() {
        assert_eq!(matched("/repo/src/lib.rs"), [".seri/rules/rust.md"]);
        assert_eq!(matched("/repo/src/a/b/c.rs"), [".seri/rules/rust.md"]);
        assert!(matched("/repo/tests/x.rs").is_empty());
        assert_eq!(matched("/repo/README.md"), ["~/rules/docs.md"]);
        assert!(matched("/repo/docs/guide.md").is_empty(), "`*` stays in one folder");
        assert_eq!(matched("/repo/a/b/notes.txt"), ["~/rules/docs.md"]);
        assert_eq!(matched("/elsewhere/notes.txt"), ["~/rules/docs.md"], "outside the root: matched absolute");
    }

    #[test]
    fn a_bad_pattern_names_its_rule() {
        let error = GlobRule::new("r.md", vec!["src/[".into()], "").unwrap_err();
        assert!(error.to_string().starts_with("rule r.md: `src/[` is not a glob pattern: "), "{error}");
    }

    #[test]
    fn a_runaway_pattern_is_refused_and_quoted_short() {
        // 90,000 `*` panicked in globset's matcher; here it is too long.
        let error = GlobRule::new("r.md", vec!["*".repeat(90_000)], "").unwrap_err();
        let text = error.to_string();
        assert!(text.len() < 2 * seri_tools::error::MAX_PROBLEM_BYTES + 100, "{} bytes", text.len());
        assert!(text.contains("90000 bytes long"), "{text}");
    }
}
