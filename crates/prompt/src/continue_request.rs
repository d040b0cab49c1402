//! The message a person's `/continue [focus]` sends: it asks the agent to
//! call `continue_session` now, since only the agent can write the handoff
//! a successor starts from.

use crate::escape::escape_text;
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
