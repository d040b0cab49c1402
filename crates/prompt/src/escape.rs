//! How text written by a model or a person is placed inside a frame.
//!
//! Two rules, each for one kind of place:
//!
//! - [`escape_text`] and [`escape_attr`] are for the per-turn blocks, whose
//!   contents are short (a title, a description, plan steps). They are plain
//!   XML escaping: `&`, `<` and `>` (and in attributes `"` and line breaks)
//!   become entities. Nothing inside can open or close a frame, and the
//!   escaping is unambiguous: unescaping gives back the original exactly.
//! - [`neutralize_frames`] is for whole files in the system prompt (AGENTS.md,
//!   rules, memory), which are full of code where `Vec<String>` should stay
//!   readable. It escapes only a `<` that would start or end one of
//!   [`PROMPT_FRAMES`], so a file cannot close its own frame or forge another.
//!   The compaction summarizer's request uses it for the same reason: recaps
//!   and transcripts quote code too.
//!
//! This crate depends on `seri-core` only, so it does not use the projection
//! crate's `escape_action_framing`; the two agree on the property that
//! matters (no frame can be opened or closed from inside), and the per-turn
//! blocks need the stronger, reversible form anyway.

/// The frame names this crate writes. [`neutralize_frames`] keeps file text
/// from opening or closing any of them.
pub const PROMPT_FRAMES: &[&str] = &[
    "project_instructions",
    "rule",
    "memory",
    "mentioned_file",
    "environment",
    "session_status",
    "plan_state",
    "context_usage",
    // The compaction summarizer's request.
    "previous_recap",
    "evicted_transcript",
    "trimmed",
    "focus",
    // The skills' list.
    "skill",
    // A subagent's instructions, in its child's first message.
    "subagent",
];

/// Escapes text placed between a frame's tags: `&`, `<`, `>`.
pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text placed in a double-quoted attribute: `&`, `<`, `>`, `"`, and
/// line breaks, so an attribute always stays on its tag's line.
pub fn escape_attr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

/// Replaces the `<` of any tag that would open or close one of
/// [`PROMPT_FRAMES`] (`<memory`, `</rule>`, any letter case) with `&lt;`, and
/// leaves every other character as it is.
///
/// A frame tag is `<` or `</`, then a frame name, then `>`, `/`, whitespace
/// or the end of the text; `<rules>` or `<memory_x>` are not frame tags.
pub fn neutralize_frames(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if starts_frame_tag(after) {
            out.push_str("&lt;");
        } else {
            out.push('<');
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Whether the text after a `<` makes it a frame tag.
fn starts_frame_tag(after: &str) -> bool {
    let name_start = after.strip_prefix('/').unwrap_or(after);
    PROMPT_FRAMES.iter().any(|frame| {
        let Some(head) = name_start.get(..frame.len()) else { return false };
        if !head.eq_ignore_ascii_case(frame) {
            return false;
        }
        match name_start[frame.len()..].chars().next() {
            None => true,
            Some(c) => c == '>' || c == '/' || c.is_whitespace(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(input: &str, expected: &str) {
        assert_eq!(neutralize_frames(input), expected);
    }

    #[test]
    fn neutralizes_only_frame_tags() {
        check("Vec<String> and a < b", "Vec<String> and a < b");
        check("</project_instructions>", "&lt;/project_instructions>");
        check("<RULE name=\"x\">", "&lt;RULE name=\"x\">");
        check("<rules> <memory_x> <memory", "<rules> <memory_x> &lt;memory");
        check("<plan_state/>", "&lt;plan_state/>");
        check("é<session_status\ttitle", "é&lt;session_status\ttitle");
    }

    #[test]
    fn text_and_attribute_escaping() {
        assert_eq!(escape_text("a <b> & \"c\""), "a &lt;b&gt; &amp; \"c\"");
        assert_eq!(escape_attr("a \"b\"\nc"), "a &quot;b&quot;&#10;c");
    }
}
