//! A hit's snippet: the part of its text around the first match, on one
//! line, with each matched word between [`MARK_START`] and [`MARK_END`].
//!
//! Cut here, from the query's tree and the event's text, rather than by
//! either database, so it reads the same on both backends.

use crate::search::query::{Term, fold, words};

/// Opens a matched word in a snippet.
pub const MARK_START: char = '«';
/// Closes a matched word in a snippet.
pub const MARK_END: char = '»';

/// The characters of text around the match a snippet shows.
const WIDTH: usize = 160;

/// The snippet of `text` for `terms` (what the query looks for).
pub fn snippet(text: &str, terms: &[&Term]) -> String {
    let tokens: Vec<(usize, &str)> = words(text).collect();
    let folded: Vec<String> = tokens.iter().map(|(_, w)| fold(w)).collect();
    // Which tokens are part of a match.
    let mut marked = vec![false; tokens.len()];
    for term in terms {
        let n = term.words.len();
        if n == 0 || n > folded.len() {
            continue;
        }
        for start in 0..=folded.len() - n {
            let hit = term.words.iter().enumerate().all(|(i, want)| {
                let have = &folded[start + i];
                if term.prefix && i + 1 == n { have.starts_with(want.as_str()) } else { have == want }
            });
            if hit {
                marked[start..start + n].iter_mut().for_each(|m| *m = true);
            }
        }
    }
    // The window: from a little before the first match.
    let first = marked.iter().position(|&m| m).map_or(0, |i| tokens[i].0);
    let mut from = first.saturating_sub(WIDTH / 4);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    // Start at a word's start, unless the text does.
    if from > 0 {
        from = tokens.iter().map(|(at, _)| *at).find(|&at| at >= from).unwrap_or(first);
    }
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut shown = 0;
    let mut at = from;
    let mut next_token = tokens.iter().position(|(t, _)| *t >= from).unwrap_or(tokens.len());
    let mut last_space = false;
    while at < text.len() && shown < WIDTH {
        if next_token < tokens.len() && tokens[next_token].0 == at {
            let word = tokens[next_token].1;
            if marked[next_token] {
                out.push(MARK_START);
                out.push_str(word);
                out.push(MARK_END);
            } else {
                out.push_str(word);
            }
            shown += word.chars().count();
            at += word.len();
            next_token += 1;
            last_space = false;
            continue;
        }
        let Some(c) = text[at..].chars().next() else { break };
        at += c.len_utf8();
        if c.is_whitespace() || c.is_control() {
            if !last_space {
                out.push(' ');
                shown += 1;
            }
            last_space = true;
        } else if c != MARK_START && c != MARK_END {
            out.push(c);
            shown += 1;
            last_space = false;
        }
    }
    let mut out = out.trim_end().to_owned();
    if at < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Query;

    #[track_caller]
    fn check(text: &str, query: &str, expect: &str) {
        let q = Query::parse(query).unwrap();
        assert_eq!(snippet(text, &q.wanted_terms()), expect);
    }

    #[test]
    fn matched_words_are_marked_and_excluded_ones_are_not() {
        check("We cap the backoff at 30 s.", "backoff", "We cap the «backoff» at 30 s.");
        check("Retry, retrying, retried", "retr*", "«Retry», «retrying», «retried»");
        check("the retry policy and policy retry", "\"retry policy\"", "the «retry» «policy» and policy retry");
        check("retry the backoff", "retry NOT backoff", "«retry» the backoff");
        check("fix lib.rs now", "lib.rs", "fix «lib».«rs» now");
    }

    #[test]
    fn long_text_is_cut_around_the_first_match_on_one_line() {
        let text = format!("{}\n\nthe needle\tis here{}", "hay ".repeat(100), " straw".repeat(100));
        let got = snippet(&text, &Query::parse("needle").unwrap().wanted_terms());
        insta::assert_snapshot!("snippet_of_long_text", got);
        assert!(got.chars().count() < 200);
    }

    #[test]
    fn text_with_no_match_shows_its_start() {
        check("just some words", "absent", "just some words");
    }
}
