//! Other agents' sessions, read: Claude Code, Codex, pi and opencode.
//!
//! [`detect`] tells a file's format from its first bytes, and [`parse`]
//! reads it into one shape, [`PeerSession`]: the session's id, working
//! directory, model, provider and start, and a tree of [`Entry`]s (user and
//! assistant text, thinking, tool calls and results under their own ids,
//! compactions with the peer's own summary, model changes), each with its
//! parent, so branches stay branches. What is not part of the conversation
//! is left out with a reason ([`PeerSession::skipped`], and
//! [`EntryKind::Skipped`] for a place in the tree that holds nothing).
//!
//! Pure: bytes in, a session out. Nothing here but [`opencode_db`] opens a
//! file (opencode's database, read-only, each session put back together as
//! its export's bytes); nothing reads the clock or the environment, or
//! writes to the store; reading never panics,
//! whatever the bytes (a property test holds it to that). Each format's
//! module says what its peer writes, as the fixtures the peers recorded
//! themselves show it (`tests/fixtures/peers/`, `cargo xtask peers`).

mod build;
mod claude_code;
mod codex;
mod model;
mod opencode;
pub mod opencode_db;
mod pi;
#[cfg(test)]
mod tests;
mod tree;

pub use build::{Made, Placed, RawLines, Sink, Source};
pub use model::{Entry, EntryKind, ForkedFrom, Format, PeerSession, Skip};
pub use tree::Tree;

/// Why a file could not be read as the format asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// An opencode export must be one JSON document; this one is not.
    #[error("not an opencode export: {0}")]
    NotAnExport(&'static str),
}

/// How many lines [`detect`] looks at for a Claude Code line: its files may
/// open with a few bookkeeping lines of other shapes.
const LINES_TO_DETECT: usize = 8;

/// The format of a file, from its content; `None` when it is none of the
/// peers' (seri's own older `.jsonl` files among them).
pub fn detect(bytes: &[u8]) -> Option<Format> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    if bytes[start] != b'{' {
        return None;
    }
    let objects: Vec<build::Object> =
        build::lines(bytes).take(LINES_TO_DETECT).filter_map(|(_, line)| line.ok()).collect();
    let mut objects = objects.iter();
    match objects.next() {
        Some(first) if pi::looks_like(first, objects.clone().next()) => return Some(Format::Pi),
        Some(first) if codex::looks_like(first) => return Some(Format::Codex),
        Some(first) if claude_code::looks_like(first) => return Some(Format::ClaudeCode),
        _ => {}
    }
    if objects.any(claude_code::looks_like) {
        return Some(Format::ClaudeCode);
    }
    // A document over many lines: an opencode export.
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(document)) if opencode::looks_like(&document) => Some(Format::Opencode),
        _ => None,
    }
}

/// Reads `bytes` as a file of `format`. The line formats always read (a
/// line that cannot be read is skipped with its reason); an opencode
/// export fails when it is not one JSON document of the export's shape.
pub fn parse(format: Format, bytes: &[u8]) -> Result<PeerSession, ParseError> {
    match parse_lines(format, bytes) {
        Some(session) => Ok(session),
        None => opencode::parse(bytes),
    }
}

/// Reads `source`'s lines as a file of `format`, one line at a time, so
/// that no more than a line of the file is held at once; `None` for
/// opencode's export, which is one document, not lines (see [`parse`]).
pub fn parse_lines(format: Format, source: &(impl Source + ?Sized)) -> Option<PeerSession> {
    read_lines(format, source, None)
}

/// Reads `source`'s lines as [`parse_lines`] does, handing each entry and
/// each line left out to `sink` as it is made: the session returned holds
/// the file's facts and no entries, and no more than a line's entries are
/// held at once. The same bytes give the same entries, in the same order
/// and with the same indexes, at every reading.
pub fn stream_lines(
    format: Format,
    source: &(impl Source + ?Sized),
    sink: &mut dyn FnMut(Made),
) -> Option<PeerSession> {
    read_lines(format, source, Some(sink))
}

fn read_lines(format: Format, source: &(impl Source + ?Sized), sink: Sink<'_>) -> Option<PeerSession> {
    match format {
        Format::ClaudeCode => Some(claude_code::parse(source, sink)),
        Format::Codex => Some(codex::parse(source, sink)),
        Format::Pi => Some(pi::parse(source, sink)),
        Format::Opencode => None,
    }
}
