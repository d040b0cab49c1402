//! Rule files: always-on rules go into the frozen system prompt; a rule
//! whose front matter declares `globs` stays out of it and arrives later,
//! as a message, the first time a tool reads or writes a path it covers.
//!
//! ```text
//! ---
//! globs: ["src/**/*.rs", "tests/**/*.rs"]
//! ---
//! Use `thiserror` for library errors.
//! ```
//!
//! The front matter is the YAML subset rule files use in practice, and
//! only its `globs` key means anything here (others, such as a
//! `description`, are ignored). `globs` may be a flow list
//! (`["a", "b"]`), a block list (`- a` on the lines below), or one line of
//! comma-separated patterns (`*.ts, *.tsx`); commas inside quotes or braces
//! (`*.{ts,tsx}`) do not split. Matching the patterns is the caller's:
//! this crate does no IO and knows no glob syntax.

use crate::escape::{escape_attr, neutralize_frames};
use crate::text::rules::FIRED;

/// A rule file's text, split into what it declares and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFile<'a> {
    /// The patterns it fires on; empty for an always-on rule.
    pub globs: Vec<String>,
    /// The text after the front matter (the whole text when there is none).
    pub body: &'a str,
}

impl RuleFile<'_> {
    /// Whether the rule fires on paths rather than sitting in the frozen prompt.
    pub fn is_glob_rule(&self) -> bool {
        !self.globs.is_empty()
    }
}

/// Why a rule file's front matter could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleFileError {
    /// A `---` first line with no closing `---` line.
    #[error("the front matter opened by `---` on line 1 is never closed by a `---` line")]
    Unclosed,
    /// `globs` is not a list of patterns.
    #[error("line {line}: `globs` {problem}; write it as globs: [\"src/**/*.rs\"]")]
    BadGlobs {
        /// The 1-based line of the problem.
        line: usize,
        /// What is wrong.
        problem: &'static str,
    },
}

/// Splits a rule file into its globs and its body. Text without front
/// matter is an always-on rule, returned whole.
pub fn parse_rule(text: &str) -> Result<RuleFile<'_>, RuleFileError> {
    let whole = text;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(after_open) = strip_fence(text) else {
        return Ok(RuleFile { globs: Vec::new(), body: whole });
    };
    let mut offset = text.len() - after_open.len();
    let mut front: Vec<(usize, &str)> = Vec::new();
    let mut body = None;
    for (index, line) in after_open.split_inclusive('\n').enumerate() {
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        if content.trim_end() == "---" {
            body = Some(&text[offset..]);
            break;
        }
        front.push((index + 2, content));
    }
    let body = body.ok_or(RuleFileError::Unclosed)?;
    let globs = globs_of(&front)?;
    Ok(RuleFile { globs, body: body.trim_start_matches(['\n', '\r']) })
}

/// The text after an opening `---` line, if the text starts with one.
fn strip_fence(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("---")?;
    let rest = rest.trim_start_matches([' ', '\t']);
    rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n'))
}

/// The `globs` value among the front matter's lines (numbered from the file's start).
fn globs_of(front: &[(usize, &str)]) -> Result<Vec<String>, RuleFileError> {
    let Some(at) = front.iter().position(|(_, l)| key_value(l, "globs").is_some()) else {
        return Ok(Vec::new());
    };
    let (line, text) = front[at];
    let value = key_value(text, "globs").unwrap_or_default().trim();
    let bad = |problem| RuleFileError::BadGlobs { line, problem };
    let globs = if value.is_empty() {
        // A block list on the lines below: `  - pattern`.
        let mut globs = Vec::new();
        for &(line, text) in &front[at + 1..] {
            let Some(item) = text.trim_start().strip_prefix('-') else { break };
            if !text.starts_with([' ', '\t', '-']) {
                break;
            }
            let item =
                unquote(item.trim()).ok_or(RuleFileError::BadGlobs { line, problem: "has an unclosed quote" })?;
            globs.push(item);
        }
        globs
    } else if let Some(inner) = value.strip_prefix('[') {
        let inner = inner.strip_suffix(']').ok_or(bad("opens a list with `[` that is not closed on its line"))?;
        split_patterns(inner).ok_or(bad("has an unclosed quote"))?
    } else {
        split_patterns(value).ok_or(bad("has an unclosed quote"))?
    };
    if globs.iter().any(String::is_empty) {
        return Err(bad("holds an empty pattern"));
    }
    Ok(globs)
}

/// The value of `key: value` when the line sets `key` at the top level.
fn key_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.strip_prefix(key)?.trim_start_matches([' ', '\t']).strip_prefix(':')
}

/// Splits on commas outside quotes and braces, unquoting each part; `None`
/// when a quote is never closed. An empty input is no patterns.
fn split_patterns(text: &str) -> Option<Vec<String>> {
    if text.trim().is_empty() {
        return Some(Vec::new());
    }
    let mut parts = Vec::new();
    let (mut start, mut depth, mut quote) = (0, 0usize, None);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '{') => depth += 1,
            (None, '}') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                parts.push(unquote(text[start..i].trim())?);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quote.is_some() {
        return None;
    }
    parts.push(unquote(text[start..].trim())?);
    Some(parts)
}

/// A pattern without its surrounding quotes; `None` for an unclosed one.
fn unquote(text: &str) -> Option<String> {
    for q in ['"', '\''] {
        if let Some(rest) = text.strip_prefix(q) {
            return rest.strip_suffix(q).map(str::to_owned);
        }
    }
    Some(text.to_owned())
}

/// The message a glob rule arrives in: why it arrived, then the rule's text
/// in a `<rule>` frame naming the file, its globs and the path that fired it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FiredRule<'a> {
    /// The rule file, as the model sees paths (`.seri/rules/rust.md`).
    pub path: &'a str,
    /// Its patterns.
    pub globs: &'a [String],
    /// The path a tool read or wrote that matched.
    pub touched: &'a str,
    /// The rule's text (its body, without front matter).
    pub text: &'a str,
}

impl std::fmt::Display for FiredRule<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{FIRED}\n\n<rule path=\"{}\" globs=\"{}\" touched=\"{}\">\n{}\n</rule>",
            escape_attr(self.path),
            escape_attr(&self.globs.join(", ")),
            escape_attr(self.touched),
            neutralize_frames(self.text.trim_end())
        )
    }
}
