//! Properties of the escaping: nothing placed in a frame can open or close
//! one, and the per-turn escaping is exactly reversible.

use proptest::prelude::*;
use seri_prompt::escape::{PROMPT_FRAMES, escape_attr, escape_text, neutralize_frames};

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#10;", "\n")
        .replace("&#13;", "\r")
        .replace("&amp;", "&")
}

/// Text rich in the characters and names that matter.
fn adversarial() -> impl Strategy<Value = String> {
    let pieces = prop::collection::vec(
        prop_oneof![
            Just("<".to_owned()),
            Just("</".to_owned()),
            Just(">".to_owned()),
            Just("&".to_owned()),
            Just("\"".to_owned()),
            Just("\n".to_owned()),
            prop::sample::select(PROMPT_FRAMES).prop_map(str::to_owned),
            prop::sample::select(PROMPT_FRAMES).prop_map(str::to_uppercase),
            "[a-z _/]{0,4}",
            any::<String>(),
        ],
        0..24,
    );
    pieces.prop_map(|p| p.concat())
}

fn has_frame_tag(text: &str) -> bool {
    let lower = text.to_lowercase();
    PROMPT_FRAMES.iter().any(|frame| {
        [format!("<{frame}"), format!("</{frame}")].iter().any(|tag| {
            lower.match_indices(tag.as_str()).any(|(at, _)| match lower[at + tag.len()..].chars().next() {
                None => true,
                Some(c) => c == '>' || c == '/' || c.is_whitespace(),
            })
        })
    })
}

proptest! {
    #[test]
    fn escaped_text_round_trips_and_has_no_markup(text in adversarial()) {
        let escaped = escape_text(&text);
        prop_assert!(!escaped.contains('<') && !escaped.contains('>'));
        prop_assert_eq!(unescape(&escaped), text);
    }

    #[test]
    fn escaped_attributes_stay_inside_their_quotes(text in adversarial()) {
        let escaped = escape_attr(&text);
        prop_assert!(!escaped.contains(['"', '<', '>', '\n', '\r']));
        prop_assert_eq!(unescape(&escaped), text);
    }

    #[test]
    fn neutralized_files_cannot_open_or_close_a_frame(text in adversarial()) {
        let out = neutralize_frames(&text);
        prop_assert!(!has_frame_tag(&out), "{out:?}");
        // Only `<` is ever rewritten: removing the rewrites gives the input back.
        prop_assert_eq!(out.replace("&lt;", "<"), text.replace("&lt;", "<"));
    }
}
