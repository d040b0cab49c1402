//! Compiling the patterns a model sends (`list`'s and `grep`'s globs,
//! `grep`'s regular expression) and rule files declare: bounded in length
//! and in what they compile to, so no pattern can panic seri or take
//! unbounded memory or time to build.
//!
//! globset's own matcher is not used: `Glob::compile_matcher` panics when
//! the glob's regex goes past globset's size limit (about 87,000 `*`). A
//! glob is parsed by globset and its regex compiled here, with the same
//! limits as a regular expression.

use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use globset::GlobBuilder;
use regex::bytes::{Regex, RegexBuilder};

/// The longest pattern accepted, in bytes: far more than any real glob or
/// search needs, far less than what could make one expensive to build.
pub const MAX_PATTERN_BYTES: usize = 4096;

/// The most memory a compiled pattern may take (regex's `size_limit`);
/// past it the pattern is [`PatternError::TooComplex`].
pub const MAX_COMPILED_BYTES: usize = 4 * 1024 * 1024;

/// The most memory a search's lazy DFA may cache (regex's
/// `dfa_size_limit`); past it the search goes on, slower.
const DFA_CACHE_BYTES: usize = 2 * 1024 * 1024;

/// The deepest nesting of groups and repetitions accepted (regex's
/// `nest_limit`).
const NEST_LIMIT: u32 = 100;

/// Why a pattern was refused. Its text quotes the pattern; wrap it in an
/// [`InputError`](crate::InputError) (which cuts it to
/// [`MAX_PROBLEM_BYTES`](crate::error::MAX_PROBLEM_BYTES)) or pass it
/// through [`bounded`](crate::error::bounded) before showing it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Empty.
    #[error("empty")]
    Empty,
    /// Longer than [`MAX_PATTERN_BYTES`].
    #[error("{bytes} bytes long; a pattern may have at most {MAX_PATTERN_BYTES}: `{pattern}`")]
    TooLong {
        /// Its length.
        bytes: usize,
        /// The pattern.
        pattern: String,
    },
    /// Not a glob (globset's reason).
    #[error("`{pattern}` is not a glob: {reason}")]
    NotAGlob {
        /// The pattern.
        pattern: String,
        /// What was wrong.
        reason: String,
    },
    /// Not a regular expression (regex's reason).
    #[error("not a valid regular expression: {reason}")]
    NotARegex {
        /// What was wrong, as regex says it (it quotes the pattern).
        reason: String,
    },
    /// Well formed, but it compiles past [`MAX_COMPILED_BYTES`].
    #[error(
        "`{pattern}` is too complex: it compiles to more than {} MiB; use fewer wildcards, classes or repetitions",
        MAX_COMPILED_BYTES / (1024 * 1024)
    )]
    TooComplex {
        /// The pattern.
        pattern: String,
    },
}

/// A compiled glob, matched against a whole path: `*` and `?` stay within
/// one folder, `**` spans any number.
#[derive(Debug, Clone)]
pub struct GlobPattern {
    regex: Regex,
}

impl GlobPattern {
    /// Parses and compiles `pattern` within the limits.
    pub fn new(pattern: &str) -> Result<Self, PatternError> {
        check_length(pattern)?;
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| PatternError::NotAGlob { pattern: pattern.to_owned(), reason: e.kind().to_string() })?;
        let regex =
            limited(RegexBuilder::new(glob.regex()).dot_matches_new_line(true)).build().map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => PatternError::TooComplex { pattern: pattern.to_owned() },
                // globset wrote the regex; if regex cannot read it, the glob
                // is still what the model should fix.
                other => PatternError::NotAGlob { pattern: pattern.to_owned(), reason: other.to_string() },
            })?;
        Ok(Self { regex })
    }

    /// Whether the whole of `path` matches (its bytes, as globset matches).
    pub fn is_match(&self, path: &Path) -> bool {
        self.regex.is_match(path.as_os_str().as_bytes())
    }
}

/// Compiles a regular expression (Rust regex syntax, matched against
/// bytes) within the limits.
pub fn regex(pattern: &str) -> Result<Regex, PatternError> {
    check_length(pattern)?;
    limited(&mut RegexBuilder::new(pattern)).build().map_err(|e| match e {
        regex::Error::CompiledTooBig(_) => PatternError::TooComplex { pattern: pattern.to_owned() },
        other => PatternError::NotARegex { reason: other.to_string() },
    })
}

fn check_length(pattern: &str) -> Result<(), PatternError> {
    if pattern.is_empty() {
        return Err(PatternError::Empty);
    }
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(PatternError::TooLong { bytes: pattern.len(), pattern: pattern.to_owned() });
    }
    Ok(())
}

fn limited(builder: &mut RegexBuilder) -> &mut RegexBuilder {
    builder.size_limit(MAX_COMPILED_BYTES).dfa_size_limit(DFA_CACHE_BYTES).nest_limit(NEST_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_globset() {
        for (pattern, path, expected) in [
            ("*.rs", "lib.rs", true),
            ("*.rs", "src/lib.rs", false),
            ("src/**/*.rs", "src/a/b/lib.rs", true),
            ("src/**/*.rs", "src/lib.rs", true),
            ("**/*.txt", "notes.txt", true),
            ("src/?.rs", "src/a.rs", true),
            ("src/?.rs", "src//.rs", false),
            ("{a,b}/*.md", "b/x.md", true),
            ("[!a]*", "bcd", true),
            ("é*", "été", true),
            ("*", "line\nbreak", true),
        ] {
            let glob = GlobPattern::new(pattern).unwrap();
            let expected_by_globset =
                GlobBuilder::new(pattern).literal_separator(true).build().unwrap().compile_matcher().is_match(path);
            assert_eq!(glob.is_match(Path::new(path)), expected, "{pattern} vs {path:?}");
            assert_eq!(expected, expected_by_globset, "{pattern} vs {path:?}");
        }
    }

    #[test]
    fn globset_panics_past_its_limit_and_these_do_not() {
        // The cause of the panic: globset's matcher `expect`s its regex to
        // compile, and 90,000 `*` go past its 10 MiB NFA limit.
        let stars = "*".repeat(90_000);
        let glob = GlobBuilder::new(&stars).literal_separator(true).build().unwrap();
        assert!(std::panic::catch_unwind(|| glob.compile_matcher()).is_err());
        assert!(matches!(GlobPattern::new(&stars), Err(PatternError::TooLong { bytes: 90_000, .. })));
        assert!(matches!(regex(&stars), Err(PatternError::TooLong { bytes: 90_000, .. })));
    }

    #[test]
    fn the_longest_patterns_compile_and_match_quickly() {
        let started = std::time::Instant::now();
        for pattern in ["*", "?", "**/", "[a-z]*", "{a,b}*"] {
            let long = pattern.repeat(MAX_PATTERN_BYTES / pattern.len());
            let glob = GlobPattern::new(&long).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            glob.is_match(Path::new("src/deep/folder/some_file_name.rs"));
        }
        assert!(regex(&"a*".repeat(MAX_PATTERN_BYTES / 2)).is_ok());
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    }

    #[test]
    fn a_pattern_that_compiles_too_big_is_too_complex() {
        // Short, but each `\w` is a large Unicode class.
        assert!(matches!(regex(r"\w{1000}\w{1000}"), Err(PatternError::TooComplex { .. })), "{:?}", regex(r"\w{1000}"));
        assert!(matches!(regex(r"(a"), Err(PatternError::NotARegex { .. })));
        assert!(matches!(regex(&"(".repeat(200)), Err(PatternError::NotARegex { .. })));
        assert!(matches!(regex(""), Err(PatternError::Empty)));
        assert!(regex(" ").is_ok(), "a space is a pattern");
        assert!(regex(r"(?i)\w+_test\b").is_ok());
        assert!(matches!(GlobPattern::new("src/["), Err(PatternError::NotAGlob { .. })));
    }
}
