//! Frames and the escape that keeps written text from forging them.
//!
//! seri hands the model material inside XML-like frames: `<excerpt>`,
//! `<recent_exchanges>`, `<context_usage>`, `<session_status>` and others
//! (the full list is [`FRAME_NAMES`]). Text that a model or a person wrote
//! (a message, a tool result, a handoff, a title) is placed inside those
//! frames, and it must never be able to open or close one: a tool result
//! that contains `</excerpt>` would otherwise end the excerpt early and make
//! whatever follows look like the runtime's own words.
//!
//! # The rule
//!
//! [`escape_action_framing`] inserts a backslash after every `<` that is
//! followed by an ASCII letter, by `/`, or by `\`:
//!
//! | written       | escaped        |
//! |---------------|----------------|
//! | `<excerpt>`   | `<\excerpt>`   |
//! | `</excerpt>`  | `<\/excerpt>`  |
//! | `Vec<String>` | `Vec<\String>` |
//! | `<\x`         | `<\\x`         |
//! | `a < b`, `<=`, `<-`, `<<` | unchanged |
//!
//! Why this rule and not another:
//!
//! - **It covers frames that do not exist yet.** It neutralises every
//!   tag-like `<name` and `</name`, whatever the name, so a frame added by a
//!   later feature (a compaction recap, say) is covered without anyone
//!   remembering to update the escape. [`FRAME_NAMES`] is the registry of
//!   names in use, not an input to the escape.
//! - **It is unambiguous.** Escaped text never contains `<` followed by a
//!   letter or `/`, so no frame tag can appear in it; every frame tag in a
//!   projection was written by seri.
//! - **It is reversible.** Escaping `<\` as `<\\` means every `<\` in escaped
//!   text was produced by the escape, so [`unescape_action_framing`] removes
//!   exactly one backslash after each `<` and gets the original back, byte
//!   for byte.
//! - **It is quiet.** Prose comparisons and arrows are untouched; code loses
//!   a little readability only where it looks like a tag (generics, HTML),
//!   which a model reads through easily. Entity-escaping (`&lt;`) would
//!   instead rewrite every `<` and `&` in every code excerpt.

use std::borrow::Cow;

/// Every frame name seri writes, in one place.
///
/// The escape does not read this list (it neutralises any tag name); the
/// list exists so that the frames are named once, so tests can check that
/// each is covered, and so a reader can see them all. A crate that
/// introduces a frame adds its name here.
pub const FRAME_NAMES: &[&str] = &[
    // The continuation projection (this crate).
    "continuation",
    "lineage",
    "handoff",
    "sources",
    "excerpt",
    "recent_exchanges",
    "omitted",
    // The compaction recap that opens a compacted working context (this crate).
    "compaction_recap",
    // seri-prompt's frames (its `PROMPT_FRAMES`): per-turn blocks and the
    // files of the frozen system prompt.
    "context_usage",
    "session_status",
    "plan_state",
    "project_instructions",
    "rule",
    "memory",
    // seri-prompt's frames of the compaction summarizer's request.
    "previous_recap",
    "evicted_transcript",
    "trimmed",
    "focus",
];

/// Whether `name` is one of [`FRAME_NAMES`].
pub fn is_frame_name(name: &str) -> bool {
    FRAME_NAMES.contains(&name)
}

/// Escapes `text` so it cannot open or close any frame (see the module doc).
///
/// Returns the input unchanged, without allocating, when there is nothing to
/// escape.
pub fn escape_action_framing(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let needs_escape = |i: usize| bytes.get(i + 1).is_some_and(|&b| b.is_ascii_alphabetic() || b == b'/' || b == b'\\');
    let mut escapes = (0..bytes.len()).filter(|&i| bytes[i] == b'<' && needs_escape(i)).peekable();
    if escapes.peek().is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut start = 0;
    for i in escapes {
        // `i` indexes an ASCII `<`, so `i + 1` is a char boundary.
        out.push_str(&text[start..=i]);
        out.push('\\');
        start = i + 1;
    }
    out.push_str(&text[start..]);
    Cow::Owned(out)
}

/// Appends `text`, escaped, to `out`: [`escape_action_framing`] without the
/// intermediate string.
pub(crate) fn push_escaped(out: &mut String, text: &str) {
    out.push_str(&escape_action_framing(text));
}

/// Undoes [`escape_action_framing`]: removes one backslash after every `<`.
pub fn unescape_action_framing(text: &str) -> Cow<'_, str> {
    if !text.contains("<\\") {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace("<\\", "<"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(written: &str, escaped: &str) {
        assert_eq!(escape_action_framing(written), escaped);
        assert_eq!(unescape_action_framing(escaped), written);
    }

    #[test]
    fn tag_like_sequences_are_escaped_and_the_rest_is_not() {
        check("plain text", "plain text");
        check("<excerpt from=\"1\">", "<\\excerpt from=\"1\">");
        check("</excerpt>", "<\\/excerpt>");
        check("<RECENT_EXCHANGES>", "<\\RECENT_EXCHANGES>");
        check("<compaction_recap>", "<\\compaction_recap>");
        check("Vec<String>", "Vec<\\String>");
        check("a < b, c <= d, e <- f, g << 2, <3", "a < b, c <= d, e <- f, g << 2, <3");
        check("<<EOF", "<<\\EOF");
        check("already <\\escaped", "already <\\\\escaped");
        check("<", "<");
        check("ends with <\\", "ends with <\\\\");
        check("日本<語>", "日本<語>");
        check("<é>", "<é>");
    }

    #[test]
    fn unescaped_text_is_borrowed() {
        assert!(matches!(escape_action_framing("no tags here"), Cow::Borrowed(_)));
        assert!(matches!(unescape_action_framing("no tags here"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_frame_name_is_neutralised() {
        for name in FRAME_NAMES {
            for tag in [format!("<{name}>"), format!("</{name}>"), format!("<{name} a=\"1\">")] {
                let escaped = escape_action_framing(&tag);
                assert!(!escaped.contains(&format!("<{name}")), "{tag} -> {escaped}");
                assert!(!escaped.contains(&format!("</{name}")), "{tag} -> {escaped}");
            }
            assert!(is_frame_name(name));
        }
        assert!(!is_frame_name("script"));
    }
}
