//! What a person's message carries besides their words: the request a
//! `/continue [focus]` sends (it asks the agent to call `continue_session`
//! now, since only the agent can write the handoff a successor starts
//! from), and the text files an `@path` mention attaches.

use crate::escape::{escape_attr, escape_text, neutralize_frames};
use crate::text::requests::CONTINUE;

/// The text of the message `/continue` posts, with the person's focus
/// words (escaped, so they cannot close a block) when there are any.
pub fn continue_request(focus: &str) -> String {
    let focus = focus.trim();
    if focus.is_empty() {
        return CONTINUE.to_owned();
    }
    format!("{CONTINUE}\n\nFocus the successor on: {}", escape_text(focus))
}

/// A text file a person mentioned as `@path`, placed after their words in
/// a `<mentioned_file>` frame naming the path as they wrote it. The file
/// cannot close its frame (see [`neutralize_frames`]).
pub fn mentioned_file(path: &str, text: &str) -> String {
    format!(
        "<mentioned_file path=\"{}\">\n{}\n</mentioned_file>",
        escape_attr(path),
        neutralize_frames(text.trim_end_matches(['\n', '\r']))
    )
}
